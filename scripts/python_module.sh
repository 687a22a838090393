#!/usr/bin/env bash
# python_module.sh BUILD PYTHON PYBIND11_INCLUDE OUT: the Python module built again, from BUILD's libraries, for
# another interpreter (its headers, and pybind11's headers from PYBIND11_INCLUDE: a pybind11 that knows that
# interpreter and its NumPy), into OUT/swgpu with the package's Python files. For a machine whose Python is not the
# one the build found, e.g. to run tests/python there: PYTHONPATH=OUT python3 -m pytest tests/python.
set -euo pipefail
build=$(realpath "$1"); python=$2; pybind=$(realpath "$3"); out=$4
src=$(cd "$(dirname "$0")/.." && pwd)
include=$("$python" -c 'import sysconfig; print(sysconfig.get_paths()["include"])')
suffix=$("$python" -c 'import sysconfig; print(sysconfig.get_config_var("EXT_SUFFIX"))')
dir="$build/app/python/CMakeFiles/swgpu_python.dir"
[ -f "$dir/link.txt" ] || { echo "python_module.sh: $build has no Python module target (configure with SWGPU_PYTHON=ON)" >&2; exit 2; }
defines=$(sed -n 's/^CXX_DEFINES = //p' "$dir/flags.make")
mkdir -p "$out/swgpu"
out=$(realpath "$out")
obj=$(mktemp --suffix=.o)
trap 'rm -f "$obj"' EXIT
c++ $defines -I"$src" -isystem "$pybind" -isystem "$include" -O3 -DNDEBUG -fPIC -fvisibility=hidden -std=c++20 \
    -c "$src/app/python/module.cpp" -o "$obj"
# The build's link line, with this object and output, and a search path for libraries bundled beside it.
link=$(sed -e "s| -o [^ ]*| -o $out/swgpu/_swgpu$suffix|" -e "s|CMakeFiles/swgpu_python.dir/module.cpp.o|$obj|" "$dir/link.txt")
(cd "$build/app/python" && eval "$link -Wl,-rpath,'\$ORIGIN/../../lib'")
cp "$src"/app/python/swgpu/__init__.py "$src"/app/python/swgpu/__init__.pyi "$src"/app/python/swgpu/py.typed "$out/swgpu/"
echo "python_module.sh: $out/swgpu/_swgpu$suffix"
