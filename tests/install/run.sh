#!/usr/bin/env bash
# run.sh BUILD_DIR SOURCE_DIR: installs the build into a temporary prefix, builds tests/install (a project outside the
# tree that uses find_package(swgpu)) against it, and runs it on the bundled demo data.
set -euo pipefail
build=$1
src=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cmake --install "$build" --prefix "$tmp/prefix" > "$tmp/install.log"
cmake -S "$src/tests/install" -B "$tmp/build" -DCMAKE_PREFIX_PATH="$tmp/prefix" -DCMAKE_BUILD_TYPE=Release \
  > "$tmp/configure.log" 2>&1 || { cat "$tmp/configure.log"; exit 1; }
cmake --build "$tmp/build" -j2 > "$tmp/build.log" 2>&1 || { cat "$tmp/build.log"; exit 1; }
"$tmp/build/consumer" "$src/data/demo_queries.fa" "$src/data/demo_db.fa"
