#!/usr/bin/env bash
# build_cudasw4.sh SRC_DIR OUT_DIR [ARCH]: builds the peer CUDASW++4.0 (Schmidt, Kallenborn et al., BMC Bioinformatics
# 25:342, 2024; its public repository asbschmidt/CUDASW4, checked at 37a394c) for protein database search side by side
# with swgpu. It needs no GPU to build: the Makefile's -arch=native becomes -arch=ARCH (default sm_90, H100/H200), and
# -lnvToolsExt is dropped (CUDA 13 ships NVTX only as the header-only nvtx3, which is all the source uses); -g is left
# out. No source patch is needed for CUDA 13.0, but src/makedb.cpp includes Thrust, whose CUDA 13 headers (CCCL 3)
# use CUDA intrinsics that the plain host compiler lacks, so that one file is compiled as CUDA (nvcc -x cu, through the
# Makefile's DIALECT) before the rest. OpenMP (libgomp) and zlib are linked statically and the CUDA runtime
# is cudart_static, so OUT_DIR/align (the search) and OUT_DIR/makedb (stripped) need only libc, libm, libstdc++ and
# libgcc_s from the host, plus its driver's libcuda.so.1. Builds in SRC_DIR/build; JOBS (default 1) sets make -j.
# Checked on an H200 (driver 580, CUDA 13.0). Make a database (the FASTA may be gzip'ed; the prefix's folder must
# exist; it writes dbfolder/db0chars, db0headers, db0lengths, ... and dbmetadata; --mem 16G caps host memory):
#   mkdir -p dbfolder && makedb db.fasta dbfolder/db
# Search (one or many queries: every sequence of the query FASTA is searched in turn against the database):
#   align --query queries.fasta --db dbfolder/db --top 10 --dpx --uploadFull --prefetchDBFile [--verbose] [--tsv] [--of FILE]
#   (--mat blosum62 --gop -11 --gex -1 are the defaults; --dpx uses Hopper's DPX instructions, s16 and then s32 kernels;
#   without it half2/float kernels; --uploadFull keeps the whole database on the GPU; CUDA_VISIBLE_DEVICES picks GPUs.)
# On stdout it prints the options, then per query "Processing query N ... Done." and the hits: plain text by default,
#   Query N, header<header>, length L, num overflows K
#   Result I. Score: S. Length: L. Header <header>. referenceId R
# or with --tsv one tab-separated line per hit (query number, query length, query header, result number, score,
# reference length, reference header, reference id in db; --of FILE sends hits there). Timings only with --verbose:
# "Done. Scan time: T s, G GCUPS" per query and "Total time: T s, G GCUPS" per query file; the total is a GPU-event
# timer over the query loop only (database load and --uploadFull transfer excluded), GCUPS = sum of query lengths x
# database residues / T. --top 0 prints no hits (its own benchmarks use --top 0 --verbose).
set -euo pipefail
src=$1
out=$2
arch=${3:-sm_90}
cd "$src"
[[ -f Makefile && -f src/main.cu && -f src/makedb.cpp ]] || { echo "build_cudasw4: $src is not a CUDASW4 source folder" >&2; exit 1; }
triple=$(gcc -dumpmachine 2>/dev/null || echo x86_64-linux-gnu)
gomp=$(gcc -print-file-name=libgomp.a)
libz=/usr/lib/$triple/libz.a
[[ -f $gomp && -f $libz ]] || { echo "build_cudasw4: needs libgomp.a (gcc) and libz.a (zlib1g-dev)" >&2; exit 1; }
flags="-arch=$arch -lineinfo --expt-relaxed-constexpr -rdc=true --extended-lambda -Xcompiler=-fopenmp"
vars=(NVCC_FLAGS="$flags" OPTIMIZATION=-O3 LDFLAGS="-arch=$arch -rdc=true -Xcompiler=-pthread $gomp $libz -ldl")
make clean >/dev/null
make "${vars[@]}" DIALECT="-std=c++17 -x cu" build/makedb.o
make -j"${JOBS:-1}" "${vars[@]}" align makedb
mkdir -p "$out"
for p in align makedb; do
  cp "$p" "$out/$p"
  strip "$out/$p"
done
ls -l "$out"
echo "built $out/align and $out/makedb for $arch"
