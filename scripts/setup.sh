#!/usr/bin/env bash
# setup.sh: installs what a build of swgpu needs on Debian 12 (when missing), then configures and builds into build/.
# Run as root or as a user with sudo. The CUDA toolkit is optional: when nvcc is found (PATH or /usr/local/cuda), the
# GPU backend is built too; without it everything else builds and the GPU tests report "skipped".
set -euo pipefail
cd "$(dirname "$0")/.."

packages=(cmake make g++ pkg-config libhts-dev libseqan3-dev libcli11-dev catch2 zlib1g-dev patchelf
          libopenmpi-dev openmpi-bin
          libpng-dev libtiff-dev python3-numpy
          fasta3 ncbi-blast+ libparasail-dev libopencv-core-dev libopencv-imgproc-dev)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "swgpu setup: installing ${missing[*]}" >&2
  sudo_cmd=()
  [ "$(id -u)" = 0 ] || sudo_cmd=(sudo)
  "${sudo_cmd[@]}" env DEBIAN_FRONTEND=noninteractive apt-get update -qq
  "${sudo_cmd[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

if ! command -v nvcc >/dev/null && [ -x /usr/local/cuda/bin/nvcc ]; then export PATH=/usr/local/cuda/bin:$PATH; fi
jobs=$(nproc 2>/dev/null || echo 2)
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build build -j"$jobs"
