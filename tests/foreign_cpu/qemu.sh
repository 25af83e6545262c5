#!/usr/bin/env bash
# Runs a command on an emulated CPU of another generation:
#   qemu.sh MODEL PROGRAM [ARGS...]
# qemu-x86_64 (Debian's qemu-user, user-mode emulation) executes PROGRAM
# with the cpuid of MODEL, so every dispatch inside it sees that CPU: perfdb's
# own ISA level (perfdb_cpu_isa_detect), oneDNN's JIT, and the compiler's
# target_clones resolvers, which PERFDB_MAX_CPU_ISA and ONEDNN_MAX_CPU_ISA
# cannot hold down.  MODEL is one of `qemu-x86_64 -cpu help` (Haswell-v4:
# AVX2 + FMA + F16C, no AVX-512; Nehalem-v2: SSE4.2, no AVX).  Exit 77
# (CTest's skip) when qemu-x86_64 is not installed (scripts/install-deps.sh
# installs it).  The emulator's notes about host-only features (TSX, PCID,
# ...) are dropped from stderr; everything else passes through.
# PERFDB_TEST_EMULATED=MODEL tells a test it runs emulated.
set -u
MODEL=$1
shift
if ! command -v qemu-x86_64 >/dev/null 2>&1; then
  echo "SKIP: qemu-x86_64 not found (Debian package qemu-user)" >&2
  exit 77
fi
# tests that would take minutes under emulation (test_cpu_rows' 34 MB streaming cases) skip on this
export PERFDB_TEST_EMULATED=$MODEL
exec 3>&2
qemu-x86_64 -cpu "$MODEL" "$@" 2> >(grep -v "TCG doesn't support requested feature" >&3)
rc=$?
wait
exit $rc
