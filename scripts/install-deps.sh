#!/usr/bin/env bash
# Installs the Debian packages perfdb needs to build, test and fuzz.
# Idempotent: packages already present are not touched, and apt is only
# contacted when something is missing. Run as root (or with sudo on PATH).
set -euo pipefail

PKGS=(
  build-essential cmake ninja-build pkg-config clang libclang-rt-14-dev
  libdnnl-dev libopenblas-dev libopenmpi-dev openmpi-bin
  libyaml-dev libjansson-dev libcmocka-dev
  libyajl-dev zlib1g-dev  # Chrome traces: streaming JSON, gzip
  libsqlite3-dev  # Ascend's SQLite profiles (msprof --type=db)
  python3   # tests: the independent parse oracle
  python3-yaml  # tests: op_mapping.yaml read with PyYAML, the simulator's loader
  chromium  # tests: the report page in a headless browser (skipped when absent)
  valgrind  # make valgrind
  qemu-user  # tests: the CPU backend on emulated CPUs of other generations (tests/foreign_cpu/)
)

missing=()
for p in "${PKGS[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed'; then
    missing+=("$p")
  fi
done

if [ "${#missing[@]}" -eq 0 ]; then
  echo "install-deps: all ${#PKGS[@]} packages present" >&2
  exit 0
fi

SUDO=""
if [ "$(id -u)" -ne 0 ]; then
  if command -v sudo >/dev/null 2>&1; then SUDO="sudo"; else
    echo "install-deps: need root to install: ${missing[*]}" >&2; exit 1
  fi
fi

echo "install-deps: installing ${missing[*]}" >&2
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
