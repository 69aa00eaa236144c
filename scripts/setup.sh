#!/usr/bin/env bash
# Installs the Debian 12 packages fabricmap needs to build, run and test, when any is missing.
# As root it installs them; with passwordless sudo it uses sudo; otherwise it lists them and stops.
set -euo pipefail

packages=(
  build-essential cmake pkg-config
  clang libclang-rt-14-dev
  openmpi-bin libopenmpi-dev
  libhdf5-dev hdf5-tools
  libboost-program-options-dev
  libgtest-dev libgmock-dev
  libfmt-dev nlohmann-json3-dev
  python3 python3-h5py
  iproute2 util-linux
  ucx-utils
  slurmctld slurmd slurm-client munge
  chromium
)

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
