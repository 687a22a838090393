#!/usr/bin/env bash
# setup.sh [program|all]: installs what a build of swgpu needs on Debian 12 (when missing), then configures and builds
# into build/. `program` (scripts/demo.sh) installs and builds what the swgpu program needs and nothing else; `all`
# (the default, scripts/test.sh) adds the test and cross-check packages, the Python module's (docs/python.md) and clang
# with libFuzzer (scripts/fuzz.sh), and builds the tests, the benchmarks and the Python module too.
# Run as root or as a user with sudo. The CUDA toolkit is optional: when nvcc is found (PATH or /usr/local/cuda), the
# GPU backend is built too; without it everything else builds and the GPU tests report "skipped".
set -euo pipefail
cd "$(dirname "$0")/.."
what=${1:-all}
case $what in program|all) ;; *) echo "setup.sh: unknown argument '$what' (program or all)" >&2; exit 2 ;; esac

packages=(cmake make g++ pkg-config libhts-dev libcli11-dev zlib1g-dev patchelf libopenmpi-dev openmpi-bin
          libpng-dev libtiff-dev libcpp-httplib-dev nlohmann-json3-dev)  # swgpu serve (optional)
if [ "$what" = all ]; then
  packages+=(libseqan3-dev catch2 python3-numpy fasta3 ncbi-blast+ samtools libparasail-dev libopencv-core-dev
             libopencv-imgproc-dev python3-dev python3-pybind11 pybind11-dev python3-scipy python3-pytest
             python3-setuptools python3-pip clang libclang-rt-14-dev  # clang and its libFuzzer: scripts/fuzz.sh
             lintian help2man dpkg-dev file python3-build python3-venv)  # the .deb and the wheel (tests/install)
fi
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
if [ "$what" = program ]; then
  # A build folder configured for the tests keeps them configured; only the program is built either way.
  if [ -f build/CMakeCache.txt ]; then
    cmake -S . -B build -DCMAKE_BUILD_TYPE=Release >/dev/null
  else
    cmake -S . -B build -DCMAKE_BUILD_TYPE=Release -DSWGPU_TESTS=OFF -DSWGPU_BENCHMARKS=OFF -DSWGPU_PYTHON=OFF >/dev/null
  fi
  cmake --build build -j"$jobs" --target swgpu
else
  cmake -S . -B build -DCMAKE_BUILD_TYPE=Release -DSWGPU_TESTS=ON -DSWGPU_BENCHMARKS=ON -DSWGPU_PYTHON=ON >/dev/null
  cmake --build build -j"$jobs"
fi
