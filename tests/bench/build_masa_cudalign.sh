#!/usr/bin/env bash
# build_masa_cudalign.sh SRC_DIR [ARCH]: builds the peer MASA-CUDAlign 4.0.2 (its masa-cudalign-4.0.2.1028 folder,
# from its public repository) for CUDA 13, for side-by-side measurements of long pairs (README, "Long pairs"). CUDA 12
# removed texture references and CUDA 13 some cudaDeviceProp fields, so the source is patched first (in place):
#   - the three texture references (the two sequences and the horizontal bus) become __device__ pointers set with
#     cudaMemcpyToSymbol where the textures were bound, and tex1Dfetch(t, i) becomes __ldg(t + i);
#   - clockRate, deviceOverlap and kernelExecTimeoutEnabled, used only for printing, read as constants.
# Then ./configure --with-cuda-arch=ARCH (default sm_90) && make. The program is SRC_DIR/cudalign; it needs
# libcudart.so.13 at run time. Run its score pass as: cudalign --stage-1 --no-flush --no-block-pruning A.fa B.fa
set -euo pipefail
src=$1
arch=${2:-sm_90}
cd "$src"
cu=src/CUDAligner.cu
if grep -q 'texture<' "$cu"; then
  python3 - "$cu" <<'PY'
import re, sys
p = sys.argv[1]
s = open(p).read()
s = re.sub(r'texture<\s*unsigned char, 1, cudaReadModeElementType> (t_seq[01]);', r'__device__ const unsigned char* \1;', s)
s = re.sub(r'texture<\s*int2, 1, cudaReadModeElementType> t_busH;', r'__device__ const int2* t_busH;', s)
s = re.sub(r'tex1Dfetch\((t_\w+),\s*([^)]*)\)', r'__ldg(\1 + (\2))', s)
s = re.sub(r'cutilSafeCall\(cudaBindTexture\(0, (t_\w+), ([^,]+), [^)]*\)\);',
           r'{ const auto* bound = \2; cutilSafeCall(cudaMemcpyToSymbol(\1, &bound, sizeof bound)); }', s)
s = re.sub(r'cutilSafeCall\(cudaUnbindTexture\(t_\w+\)\);', '', s)
open(p, 'w').write(s)
PY
  sed -i 's/[A-Za-z_>.-]*\.clockRate/0/g; s/[A-Za-z_>.-]*\.deviceOverlap/1/g; s/[A-Za-z_>.-]*\.kernelExecTimeoutEnabled/0/g' \
    src/cuda_util.cpp
fi
./configure --with-cuda-arch="$arch" >/dev/null
make -j"$(nproc)" >/dev/null
echo "built $(pwd)/cudalign"
