"""Builds the wheel's one binary, jointscope-cli: taken from $JOINTSCOPE_CLI when set (a build that exists), else
configured and built here with CMake, headless (no Qt, Graphviz or LibTorch), from the clone this folder is in."""
import os
import pathlib
import shutil
import subprocess

from setuptools import Distribution, setup
from setuptools.command.build_py import build_py

try:
    from setuptools.command.bdist_wheel import bdist_wheel
except ImportError:  # setuptools < 70.1
    from wheel.bdist_wheel import bdist_wheel

HERE = pathlib.Path(__file__).resolve().parent
ROOT = pathlib.Path(os.environ.get("JOINTSCOPE_SOURCE") or HERE.parent.parent)


def built_cli():
    given = os.environ.get("JOINTSCOPE_CLI")
    if given:
        return pathlib.Path(given)
    build = ROOT / "build-wheel-cli"
    configure = ["cmake", "-S", str(ROOT), "-B", str(build), "-DCMAKE_BUILD_TYPE=Release", "-DJOINTSCOPE_GUI=OFF",
                 "-DJOINTSCOPE_WITH_GRAPHVIZ=OFF", "-DJOINTSCOPE_WITH_TORCH=OFF", "-DJOINTSCOPE_BENCH=OFF",
                 "-DBUILD_TESTING=OFF"]
    if shutil.which("ninja"):
        configure += ["-G", "Ninja"]
    if shutil.which("ccache"):
        configure += ["-DCMAKE_CXX_COMPILER_LAUNCHER=ccache"]
    subprocess.run(configure, check=True)
    subprocess.run(["cmake", "--build", str(build), "--target", "jointscope-cli", "--parallel",
                    str(os.cpu_count() or 2)], check=True)
    return build / "app" / "jointscope-cli"


class BuildWithCli(build_py):
    def run(self):
        super().run()
        cli = built_cli()
        if not cli.is_file():
            raise SystemExit(f"jointscope-cli not found at {cli}")
        target = pathlib.Path(self.build_lib) / "jointscope" / "bin" / "jointscope-cli"
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(cli, target)
        target.chmod(0o755)
        if shutil.which("strip"):  # a RelWithDebInfo build carries ~90 MB of debug info
            subprocess.run(["strip", "--strip-unneeded", str(target)], check=True)


class BinaryDistribution(Distribution):
    """A platform wheel (the binary is x86-64 Linux), not a pure-python one."""

    def has_ext_modules(self):
        return True


class PlatformWheel(bdist_wheel):
    """py3-none-<platform>: the binary runs under any python; it is the platform that matters."""

    def get_tag(self):
        _, _, platform = super().get_tag()
        return "py3", "none", platform


setup(cmdclass={"build_py": BuildWithCli, "bdist_wheel": PlatformWheel}, distclass=BinaryDistribution)
