#!/usr/bin/env bash
# bundle_openmpi.sh OUT: copies this machine's Open MPI runtime (Debian 12's openmpi-bin, 4.1) into OUT laid out as
# its own prefix, so that `mpirun` runs on a GPU host that has no Open MPI: OUT/bin/mpirun (orterun, orted), the
# plugins in OUT/lib/x86_64-linux-gnu/openmpi/lib/openmpi3, the help texts in OUT/share/openmpi, and in OUT/lib
# {libmpi,libopen-rte,libopen-pal}.so.40 with the libraries these load that the host may lack (RPATH points there).
# On that host:   export OPAL_PREFIX=OUT PATH=OUT/bin:$PATH OMPI_MCA_mca_base_component_show_load_errors=0
# (plugins whose own libraries are missing, such as InfiniBand's, are then skipped quietly; shared memory and TCP
# remain). tests/bench/bench_mpi.sh and bench_multi_gpu.sh take mpirun from PATH.
set -euo pipefail
out=$1
arch=$(gcc -dumpmachine 2>/dev/null || echo x86_64-linux-gnu)
src=/usr/lib/$arch/openmpi/lib
[[ -x /usr/bin/orterun && -d $src/openmpi3 ]] || { echo "bundle_openmpi: Open MPI (openmpi-bin) is not installed" >&2; exit 1; }
rm -rf "$out"
mkdir -p "$out/bin" "$out/lib" "$out/lib/$arch/openmpi/lib" "$out/share"
cp -L /usr/bin/orterun "$out/bin/orterun"
cp -L /usr/bin/orted "$out/bin/orted"
ln -s orterun "$out/bin/mpirun"
ln -s orterun "$out/bin/mpiexec"
for l in libmpi libopen-rte libopen-pal; do cp -L "/usr/lib/$arch/$l.so.40" "$out/lib/"; done
cp -rL "$src/openmpi3" "$out/lib/$arch/openmpi/lib/"
cp -rL /usr/share/openmpi "$out/share/"
# Dependencies outside the C runtime (hwloc, libevent, PMIx, ...), for the programs and the plugins that can load.
system='^(linux-vdso|ld-linux|libc\.so|libm\.so|libdl\.so|libpthread\.so|librt\.so|libcuda\.so|libgcc_s\.so|libstdc\+\+\.so|libmpi|libopen-)'
for f in "$out/bin/orterun" "$out/bin/orted" "$out/lib"/*.so.40 "$out/lib/$arch/openmpi/lib/openmpi3"/*.so; do
  ldd "$f" 2>/dev/null | awk '/=> \//{print $1, $3}' | while read -r name path; do
    [[ $name =~ $system ]] || [[ -e $out/lib/$name ]] || cp -L "$path" "$out/lib/$name"
  done
done
if command -v patchelf >/dev/null; then
  for f in "$out/bin/orterun" "$out/bin/orted"; do patchelf --set-rpath '$ORIGIN/../lib' "$f"; done
  for f in "$out/lib/$arch/openmpi/lib/openmpi3"/*.so; do patchelf --set-rpath '$ORIGIN/../../../..' "$f"; done
  for f in "$out/lib"/*.so*; do [[ -f $f ]] && patchelf --set-rpath '$ORIGIN' "$f" 2>/dev/null || true; done
fi
echo "bundle_openmpi: $(du -sh "$out" | cut -f1) in $out"
