#!/usr/bin/env bash
# wheel.sh BUILD_DIR SOURCE_DIR: a wheel of the build's Python module (`python3 -m build --wheel --no-isolation`, PEP
# 621 metadata from pyproject.toml; setup.py builds the module in BUILD_DIR), installed into a fresh virtual environment
# (with the system's site packages, for NumPy and pytest), and the Python suite run from there against that install.
set -euo pipefail
build=$(cd "$1" && pwd)
src=$(cd "$2" && pwd)
python=/usr/bin/python3
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL $*"; exit 1; }
"$python" -c "import build" 2> /dev/null || { echo "skip: $python has no 'build' module (Debian python3-build)"; exit 0; }
grep -q "^Python3_EXECUTABLE:FILEPATH=$python$" "$build/CMakeCache.txt" ||
  grep -q "SWGPU_PYTHON_EXECUTABLE:INTERNAL=$python$" "$build/CMakeCache.txt" ||
  { echo "skip: $build's Python module is not built for $python"; exit 0; }
(cd "$src" && SWGPU_CMAKE_BUILD_DIR=$build CMAKE_BUILD_PARALLEL_LEVEL=2 \
  "$python" -m build --wheel --no-isolation --outdir "$tmp/dist" . > "$tmp/build.log" 2>&1) ||
  { tail -30 "$tmp/build.log"; fail "python3 -m build"; }
wheel=$(ls "$tmp"/dist/swgpu-*.whl)
echo "ok   $(basename "$wheel")"
"$python" - "$wheel" <<'PY' || fail "the wheel's metadata"
import sys, zipfile
z = zipfile.ZipFile(sys.argv[1])
meta = next(n for n in z.namelist() if n.endswith(".dist-info/METADATA"))
text = z.read(meta).decode()
for field in ("Name: swgpu", "Requires-Python: >=3.8", "Requires-Dist: numpy", "License: MIT"):
    assert field in text, field
assert any(n.startswith("swgpu/_swgpu") and n.endswith(".so") for n in z.namelist()), "no compiled module"
assert "swgpu/__init__.pyi" in z.namelist() and "swgpu/py.typed" in z.namelist(), "no type stubs"
PY
echo "ok   PEP 621 metadata, the compiled module and the stubs in the wheel"
"$python" -m venv --system-site-packages "$tmp/venv"
"$tmp/venv/bin/python" -m pip install --no-deps --no-index --quiet "$wheel" || fail "pip install into a fresh venv"
where=$(cd "$tmp" && "$tmp/venv/bin/python" -c "import swgpu, os; print(os.path.dirname(swgpu.__file__))")
case $where in "$tmp/venv/"*) ;; *) fail "swgpu imported from $where, not from the venv" ;; esac
echo "ok   installed into a fresh virtual environment ($where)"
cd "$tmp"
PYTHONDONTWRITEBYTECODE=1 SWGPU_SOURCE_DIR=$src SWGPU_BINARY=$build/app/swgpu \
  "$tmp/venv/bin/python" -m pytest -q -p no:cacheprovider "$src/tests/python" || fail "the Python suite against the installed wheel"
