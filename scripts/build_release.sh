#!/usr/bin/env bash
# build_release.sh REF [DIR]: builds the swgpu program of an earlier release (a git tag such as release-2026-11-28, or
# any commit) in a worktree of its own and bundles it (DIR/bundle/{bin,lib}, default build-REF/), for the release guard
# (tests/bench/release_guard.sh), which runs that release and the current build alternately on the same machine.
# Only the program is built (no tests, benchmarks or Python module), for the same GPU architectures as build/.
set -euo pipefail
cd "$(dirname "$0")/.."
ref=${1:?usage: build_release.sh REF [DIR]}
dir=${2:-build-$ref}
src=$dir/src
commit=$(git rev-parse --verify "$ref^{commit}")
if [ ! -e "$src/.git" ]; then
  mkdir -p "$dir"
  git worktree add --detach "$src" "$commit" >/dev/null
fi
[ "$(git -C "$src" rev-parse HEAD)" = "$commit" ] || { echo "build_release.sh: $src holds another commit" >&2; exit 2; }
arch=$(sed -n 's/^CMAKE_CUDA_ARCHITECTURES:[A-Z]*=//p' build/CMakeCache.txt 2>/dev/null || true)
cmake -S "$src" -B "$dir/build" -DCMAKE_BUILD_TYPE=Release -DSWGPU_TESTS=OFF -DSWGPU_BENCHMARKS=OFF -DSWGPU_PYTHON=OFF \
  ${arch:+-DCMAKE_CUDA_ARCHITECTURES=$arch} >/dev/null
cmake --build "$dir/build" -j"${JOBS:-$(nproc)}" --target bundle
rm -rf "$dir/bundle"
cp -r "$dir/build/bundle" "$dir/bundle"
echo "build_release.sh: $ref ($commit) bundled in $dir/bundle"
