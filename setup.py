"""Build the Python wheel: the package in python/kdistill plus, inside it, the C library
(libkdistill.so.0) and the command line (kdistill), built with CMake, and the kdplot command (an entry point,
pyproject.toml).

    pip install --no-build-isolation .            # into the active venv or the user site
    python3 -m build --wheel --no-isolation       # dist/kdistill-<version>-py3-none-<platform>.whl

KDISTILL_BUILD_DIR=DIR takes libkdistill.so.0 and kdistill from an existing CMake build (nothing is
compiled); otherwise CMake configures and builds them (Release, no tests) under build-py/cmake.
KDISTILL_CMAKE_ARGS adds CMake arguments (split on blanks). The wheel records what it was built
against (kdistill --version: compiler, MPI, HDF5, BLAS, ScaLAPACK, libyaml) in
kdistill/_native/BUILD; it needs those same Debian libraries at run time, so its tag names the
platform, not manylinux.
"""

import os
import re
import shlex
import shutil
import subprocess
import sys

from setuptools import Distribution, setup
from setuptools.command.build_py import build_py

NO_WHEEL = """setup.py: this Python (%s) has no `wheel` module, which building the package needs.
Offline (pip cannot fetch it from PyPI), use Debian's Python, whose python3-wheel provides it:
    sudo apt-get install python3-wheel
    /usr/bin/python3 -m venv --system-site-packages ~/venvs/kd
    ~/venvs/kd/bin/pip install --no-build-isolation .
(a pyenv or other non-Debian python3 on PATH, and venvs made from it, have no wheel module
offline; with network access, `pip install wheel` into it also works). See docs/python.md."""

try:
    from wheel.bdist_wheel import bdist_wheel
except ImportError:
    try:  # setuptools >= 70.1 carries its own
        from setuptools.command.bdist_wheel import bdist_wheel
    except ImportError:
        sys.exit(NO_WHEEL % sys.executable)

HERE = os.path.dirname(os.path.abspath(__file__))
NATIVE = "_native"  # kdistill/_native/{libkdistill.so.0,kdistill,BUILD}


def project_version():
    with open(os.path.join(HERE, "CMakeLists.txt"), encoding="utf-8") as f:
        m = re.search(r"project\(kdistill VERSION ([0-9.]+)", f.read())
    if not m:
        sys.exit("setup.py: no `project(kdistill VERSION x.y.z)` in CMakeLists.txt")
    return m.group(1)


def cmake_build(build_base):
    """The CMake build directory holding libkdistill.so.0 and kdistill (built here if needed)."""
    given = os.environ.get("KDISTILL_BUILD_DIR")
    if given:
        return os.path.abspath(given)
    bdir = os.path.abspath(os.path.join(build_base, "cmake"))
    extra = shlex.split(os.environ.get("KDISTILL_CMAKE_ARGS", ""))
    jobs = os.environ.get("CMAKE_BUILD_PARALLEL_LEVEL", str(os.cpu_count() or 1))
    subprocess.check_call(["cmake", "-S", HERE, "-B", bdir, "-DCMAKE_BUILD_TYPE=Release",
                           "-DKD_BUILD_TESTS=OFF"] + extra)
    subprocess.check_call(["cmake", "--build", bdir, "-j", jobs, "--target", "kdistill_shared",
                           "kdistill_cli"])
    return bdir


class BuildPy(build_py):
    """The pure-Python files, then the native files next to them and _libpath.py naming them."""

    def run(self):
        super().run()
        bdir = cmake_build(self.get_finalized_command("build").build_base)
        lib = os.path.join(bdir, "libkdistill.so.0")
        cli = os.path.join(bdir, "kdistill")
        for f in (lib, cli):
            if not os.path.exists(f):
                sys.exit("setup.py: %s is missing (build the targets kdistill_shared and "
                         "kdistill_cli)" % f)
        dest = os.path.join(self.build_lib, "kdistill", NATIVE)
        os.makedirs(dest, exist_ok=True)
        shutil.copyfile(lib, os.path.join(dest, "libkdistill.so.0"))  # the file, not the link
        shutil.copy2(cli, os.path.join(dest, "kdistill"))
        os.chmod(os.path.join(dest, "kdistill"), 0o755)
        info = subprocess.run([cli, "--version"], check=True, capture_output=True, text=True)
        with open(os.path.join(dest, "BUILD"), "w", encoding="utf-8") as f:
            f.write(info.stdout)
        with open(os.path.join(self.build_lib, "kdistill", "_libpath.py"), "w",
                  encoding="utf-8") as f:
            f.write("# written by setup.py: the shared library, relative to this folder\n"
                    "LIBRARY = \"%s/libkdistill.so.0\"\n" % NATIVE)


class BinaryDistribution(Distribution):
    """Not pure: the package carries an ELF library and program (so it installs to platlib)."""

    def has_ext_modules(self):
        return True


class BdistWheel(bdist_wheel):
    """The Python code is version-neutral and loads the library with ctypes: py3-none-<platform>."""

    def get_tag(self):
        return ("py3", "none") + tuple(super().get_tag()[2:])


os.makedirs(os.path.join(HERE, "build-py"), exist_ok=True)  # egg_info needs it to exist
setup(
    version=project_version(),
    package_dir={"": "python"},
    packages=["kdistill"],
    package_data={"kdistill": ["py.typed"]},
    license_files=["LICENSE"],
    distclass=BinaryDistribution,
    cmdclass={"build_py": BuildPy, "bdist_wheel": BdistWheel},
    options={"build": {"build_base": "build-py"}, "egg_info": {"egg_base": "build-py"}},
)
