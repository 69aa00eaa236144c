#!/usr/bin/env bash
# Installs the Debian 12 packages fabricmap needs, when any is missing:
#   scripts/setup.sh run    to build and run fabricmap (./run.sh)
#   scripts/setup.sh gpu    that, and GoogleTest (scripts/gpu-check.sh)
#   scripts/setup.sh test   that, and what the tests need (./test.sh; the default)
# As root it installs them; with passwordless sudo it uses sudo; otherwise it lists them and stops.
set -euo pipefail

tier=${1:-test}
run_packages=(
  build-essential cmake pkg-config
  openmpi-bin libopenmpi-dev
  libhdf5-dev hdf5-tools
  libboost-program-options-dev
  libfmt-dev nlohmann-json3-dev
  libucx-dev
)
# GoogleTest; clang for the fuzz targets; h5py to read results back; network namespaces, tc and
# UCX's tools for the emulated cluster; a real Slurm; Chromium to render the report; SimGrid
# (smpicxx, smpirun) for the simulated fat trees
test_packages=(
  libgtest-dev libgmock-dev
  clang libclang-rt-14-dev
  python3 python3-h5py
  iproute2 util-linux
  ucx-utils
  slurmctld slurmd slurm-client munge
  chromium
  libsimgrid-dev
)
case "$tier" in
  run) packages=("${run_packages[@]}") ;;
  gpu) packages=("${run_packages[@]}" libgtest-dev libgmock-dev) ;;
  test) packages=("${run_packages[@]}" "${test_packages[@]}") ;;
  *) echo "fabricmap setup: unknown tier '$tier' (run, gpu or test)" >&2; exit 2 ;;
esac

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done
[ ${#missing[@]} -eq 0 ] && exit 0

if [ "$(id -u)" -eq 0 ]; then
  sudo=()
elif command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
  sudo=(sudo)
else
  echo "fabricmap setup: these Debian packages are missing and this user cannot install them:" >&2
  echo "  ${missing[*]}" >&2
  echo "Ask an administrator to run: apt-get install -y ${missing[*]}" >&2
  exit 1
fi

echo "fabricmap setup: installing ${missing[*]}" >&2
export DEBIAN_FRONTEND=noninteractive
"${sudo[@]}" apt-get update -qq
"${sudo[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
