#!/usr/bin/env bash
# Packs a built fabricmap (and, optionally, peer tools built beside it) with every library it needs
# and a relocated Open MPI into one folder, for a GPU machine that has the NVIDIA driver but neither
# this project's libraries nor a package registry (a lent machine with no network, say).
# scripts/gpu-check.sh uses the folder instead of building when FABRICMAP_GPU_BUNDLE names it.
#
# usage: scripts/gpu-bundle.sh BUILD_DIR OUT_DIR [PEER_BINARY...]
#   BUILD_DIR   a CUDA + NCCL build (the release preset is one): bin/ and tests/gpu/ are taken
#   OUT_DIR     the bundle (replaced): bin/, lib/, ompi/ (an Open MPI prefix) and env.sh
#   PEER_BINARY nccl-tests' *_perf, nvbandwidth...: copied into bin/ with their libraries
# Not packed: the C and C++ runtimes (the target's own, newer ones are used), the CUDA driver, and
# NCCL (hundreds of MiB; env.sh finds the target's libnccl.so.2, e.g. from the nvidia-nccl wheel).
set -euo pipefail
[ $# -ge 2 ] || { sed -n '2,13p' "$0" >&2; exit 2; }
build=$1
out=$2
shift 2
rm -rf "$out"
mkdir -p "$out/bin" "$out/lib"

system_lib() {  # libraries the target brings itself
  case "$(basename "$1")" in
    linux-vdso* | ld-linux* | libc.so* | libm.so* | libresolv.so* | libdl.so* | librt.so* | libpthread.so* | \
      libstdc++.so* | libgcc_s.so* | libcuda.so* | libnccl.so* | libnvidia-ml.so*) return 0 ;;
  esac
  return 1
}
needs() {  # the resolved libraries an ELF file needs, one per line ("not found" ones fail)
  ldd "$1" | awk '/not found/ {print "MISSING " $1; next} $3 ~ /^\// {print $3}'
}
pack_libs() {  # copies what FILE needs (transitively, as ldd resolves it) into lib/
  local lib
  while read -r lib; do
    if [[ $lib == MISSING* ]]; then
      system_lib "${lib#MISSING }" && continue
      echo "gpu-bundle: $1 needs ${lib#MISSING } which is not installed" >&2
      exit 1
    fi
    system_lib "$lib" || cp -nL "$lib" "$out/lib/"
  done < <(needs "$1")
}

for f in "$build/bin/fabricmap" "$build/bin/fabricmap_gpu_copy_bw" "$build/tests/gpu/fabricmap_gpu_tests" "$@"; do
  cp -L "$f" "$out/bin/"
  pack_libs "$f"
done
cp tests/gpu/run_gpu_tests.sh "$out/bin/"

# Open MPI: a copy of its prefix, found again at run time through OPAL_PREFIX. Components whose
# libraries are not packed (InfiniBand verbs, PSM, OFI, UCX, OpenSHMEM) stay behind: on one machine
# the shared-memory and self transports carry everything.
pkglibdir=$(ompi_info --path pkglibdir --parsable | sed -n 's/^path:pkglibdir://p')
prefix=$(ompi_info --path prefix --parsable | sed -n 's/^path:prefix://p')
datadir=$(ompi_info --path pkgdatadir --parsable | sed -n 's/^path:pkgdatadir://p')
mkdir -p "$out/ompi/bin" "$out/ompi${pkglibdir#"$prefix"}" "$out/ompi${datadir#"$prefix"}"
orterun=$(command -v orterun)
cp -L "$orterun" "$out/ompi/bin/orterun"
ln -s orterun "$out/ompi/bin/mpirun"
pack_libs "$orterun"
cp -r "$datadir/." "$out/ompi${datadir#"$prefix"}/"
# PMIx (Open MPI's process manager interface) likewise: its plugins and help texts, through PMIX_PREFIX
pmix_prefix=$(dirname "$(dirname "$(readlink -f "$(ldconfig -p | awk '/libpmix.so.2 / {print $NF; exit}')")")")
if [ -d "$pmix_prefix/lib/pmix" ]; then
  mkdir -p "$out/pmix/lib" "$out/pmix/share"
  cp -rL "$pmix_prefix/lib/pmix" "$out/pmix/lib/"
  cp -rL "$pmix_prefix/share/pmix" "$out/pmix/share/"
  for plugin in "$out/pmix/lib/pmix"/*.so; do pack_libs "$plugin"; done
fi
kept=0
for component in "$pkglibdir"/mca_*.so; do
  case "$(basename "$component")" in
    *openib* | *ofi* | *psm* | *ucx* | *verbs* | *monitoring* | *spml* | *sshmem* | *memheap* | \
      *scoll* | *atomic_* | *_flux* | *gridengine* | *pspawn*) continue ;;
  esac
  cp -L "$component" "$out/ompi${pkglibdir#"$prefix"}/"
  pack_libs "$component"
  kept=$((kept + 1))
done

cat >"$out/env.sh" <<'EOF'
# Sourced by scripts/gpu-check.sh: puts the bundle's programs, libraries and Open MPI first.
bundle=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
nccl_dir=""
for candidate in $(python3 -c 'import nvidia.nccl, os; print(os.path.join(list(nvidia.nccl.__path__)[0], "lib"))' 2>/dev/null) \
  /usr/local/cuda/lib64 /usr/local/cuda/lib /usr/lib/x86_64-linux-gnu; do
  [ -e "$candidate/libnccl.so.2" ] && { nccl_dir=$candidate; break; }
done
[ -n "$nccl_dir" ] || nccl_dir=$(dirname "$(find / -name libnccl.so.2 -print -quit 2>/dev/null)")
export PATH="$bundle/bin:$bundle/ompi/bin:$PATH"
export LD_LIBRARY_PATH="$bundle/lib${nccl_dir:+:$nccl_dir}${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export OPAL_PREFIX="$bundle/ompi"
[ -d "$bundle/pmix" ] && export PMIX_PREFIX="$bundle/pmix" PMIX_MCA_mca_base_component_path="$bundle/pmix/lib/pmix"
# a PMIx of the target's own may sit where Debian's was: its plugins do not fit this one
export PMIX_MCA_mca_base_component_show_load_errors=0 PMIX_MCA_pcompress_base_silence_warning=1
export OMPI_MCA_pml=ob1 OMPI_MCA_btl=self,vader
export FABRICMAP_NCCL_LIB_DIR="$nccl_dir"
EOF
echo "gpu-bundle: $(find "$out" -type f | wc -l) files, $(du -sh "$out" | cut -f1), $kept Open MPI components, in $out"
