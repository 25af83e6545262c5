# perfdb — the two commands a user types are `make demo` and `make check`.
# Everything else is here for developers:
#   make            build (build/bin/perfdb)
#   make demo       build the binary (only) and run the demo on the embedded example database
#   make check      build normally and with ASan+UBSan (warnings are errors),
#                   run the whole CTest suite in both
#   make bench      run the benchmarks (bench/*.sh), our figure beside its reference
#                   (COMM_ROUNDS, default 48: bench/comm.sh's rounds, about 35 minutes)
#   make fuzz       run every fuzz target for FUZZ_SECONDS (default 60) with clang
#   make fuzz-long  the same for 10 minutes each (FUZZ_SECONDS=600; 9 targets: 90 min)
#   make valgrind   the CLI golden tests with the binary under valgrind memcheck
#                   (not part of make check: about 11 minutes; docs/reliability.md)
#   make install PREFIX=/usr/local
# Missing Debian packages are installed by scripts/install-deps.sh first.

PREFIX ?= /usr/local
JOBS ?= $(shell nproc 2>/dev/null || echo 2)
FUZZ_SECONDS ?= 60
COMM_ROUNDS ?= 48
CMAKE_FLAGS ?=

BUILD := build
ASAN  := build-asan
FUZZ  := build-fuzz

# Ninja where it is installed (scripts/install-deps.sh installs it): a build
# from scratch took 72 s against 90 s with Makefiles on the 2-core CI VM,
# most of the difference being make's dependency scanning.  A build
# directory keeps the generator it was made with, so -G is only given to a
# new one.  $$: the shell looks for ninja when the recipe runs, after deps.
gen = $(if $(wildcard $(1)/CMakeCache.txt),,$$(command -v ninja >/dev/null 2>&1 && echo -G Ninja))

.PHONY: all build deps demo check check-build check-asan bench fuzz fuzz-long valgrind install clean

all: build

deps:
	@bash scripts/install-deps.sh

$(BUILD)/CMakeCache.txt: | deps
	cmake -S . -B $(BUILD) $(call gen,$(BUILD)) -DPERFDB_WERROR=ON $(CMAKE_FLAGS)

build: deps $(BUILD)/CMakeCache.txt
	cmake --build $(BUILD) -j $(JOBS)

# the demo builds only what it runs: the binary and its data, not the tests,
# the fuzzers, the benchmarks or the cuda module
demo: deps $(BUILD)/CMakeCache.txt
	cmake --build $(BUILD) -j $(JOBS) --target perfdb_cli
	bash examples/demo.sh $(BUILD)/bin/perfdb

check-build: deps
	cmake -S . -B $(BUILD) $(call gen,$(BUILD)) -DPERFDB_WERROR=ON $(CMAKE_FLAGS)
	cmake --build $(BUILD) -j $(JOBS)
	cd $(BUILD) && ctest --output-on-failure -j $(JOBS)

check-asan: deps
	cmake -S . -B $(ASAN) $(call gen,$(ASAN)) -DPERFDB_WERROR=ON -DPERFDB_SANITIZE=ON -DCMAKE_BUILD_TYPE=Debug $(CMAKE_FLAGS)
	cmake --build $(ASAN) -j $(JOBS)
	cd $(ASAN) && ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 \
		UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
		ctest --output-on-failure -j $(JOBS)

check: check-build check-asan
	@echo "make check: normal and ASan+UBSan suites passed"

bench: build
	bash bench/csv.sh $(BUILD)
	bash bench/parse.sh $(BUILD)
	bash bench/trace.sh $(BUILD)
	bash bench/grid.sh $(BUILD)
	bash bench/comm.sh $(BUILD) $(COMM_ROUNDS)
	bash bench/startup.sh $(BUILD)

fuzz: deps
	CC=clang cmake -S . -B $(FUZZ) $(call gen,$(FUZZ)) -DPERFDB_FUZZ=ON -DPERFDB_CUDA=OFF -DCMAKE_BUILD_TYPE=RelWithDebInfo
	cmake --build $(FUZZ) -j $(JOBS)
	bash tests/fuzz/run.sh $(FUZZ) $(FUZZ_SECONDS)

fuzz-long:
	$(MAKE) fuzz FUZZ_SECONDS=600

valgrind: build
	bash tests/valgrind/run.sh $(BUILD)

install: build
	cmake --install $(BUILD) --prefix $(PREFIX)

clean:
	rm -rf $(BUILD) $(ASAN) $(FUZZ)
