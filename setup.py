"""The Python package swgpu (docs/python.md), built with CMake: `pip install --no-build-isolation .` (metadata in
pyproject.toml).

build_ext configures this tree in build/pip/cmake (kept, so a second install rebuilds only what changed) for the
interpreter running pip, builds the module target alone, and puts the module next to app/python/swgpu/__init__.py in
the wheel. Extra CMake arguments: the environment variable SWGPU_CMAKE_ARGS (e.g. "-DSWGPU_CUDA=OFF"); parallel jobs:
CMAKE_BUILD_PARALLEL_LEVEL (default: the number of CPUs). SWGPU_CMAKE_BUILD_DIR names a build folder configured
already (scripts/setup.sh's `build`, for the same interpreter) to build the module in instead: a wheel of a build
(`SWGPU_CMAKE_BUILD_DIR=build python3 -m build --wheel --no-isolation`, tests/install/wheel.sh).
"""

import os
import pathlib
import shlex
import shutil
import subprocess
import sys

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

ROOT = pathlib.Path(__file__).resolve().parent
BUILD = ROOT / "build" / "pip"


def version():
    for line in (ROOT / "CMakeLists.txt").read_text().splitlines():
        if line.startswith("project(swgpu VERSION "):
            return line.split()[2]
    return "0.0.0"


class CMakeExtension(Extension):
    def __init__(self, name):
        super().__init__(name, sources=[])


class CMakeBuild(build_ext):
    def build_extension(self, ext):
        given = os.environ.get("SWGPU_CMAKE_BUILD_DIR")
        cmake_dir = pathlib.Path(given).resolve() if given else BUILD / "cmake"
        if not given:
            cmake_dir.mkdir(parents=True, exist_ok=True)
            args = ["-DCMAKE_BUILD_TYPE=Release", "-DSWGPU_TESTS=OFF", "-DSWGPU_BENCHMARKS=OFF", "-DSWGPU_PYTHON=ON",
                    "-DPython3_EXECUTABLE=" + sys.executable]
            args += shlex.split(os.environ.get("SWGPU_CMAKE_ARGS", ""))
            subprocess.run(["cmake", "-S", str(ROOT), "-B", str(cmake_dir), *args], check=True)
        elif not (cmake_dir / "CMakeCache.txt").is_file():
            raise RuntimeError("SWGPU_CMAKE_BUILD_DIR=%s is no configured build folder" % given)
        jobs = os.environ.get("CMAKE_BUILD_PARALLEL_LEVEL", str(os.cpu_count() or 2))
        subprocess.run(["cmake", "--build", str(cmake_dir), "--target", "swgpu_python", "-j", jobs], check=True)
        built = list((cmake_dir / "python" / "swgpu").glob("_swgpu*.so"))
        if len(built) != 1:
            raise RuntimeError("the CMake build made %d modules _swgpu*.so in %s" % (len(built), cmake_dir))
        target = pathlib.Path(self.get_ext_fullpath(ext.name))
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(built[0], target)


BUILD.mkdir(parents=True, exist_ok=True)
# The metadata is pyproject.toml's [project] table; the version (dynamic there) is CMakeLists.txt's.
setup(
    version=version(),
    ext_modules=[CMakeExtension("swgpu._swgpu")],
    cmdclass={"build_ext": CMakeBuild},
    options={"build": {"build_base": str(BUILD / "setuptools")}, "egg_info": {"egg_base": str(BUILD)}},
)
