"""The jointscope-cli the python tests drive: JOINTSCOPE_CLI, else <JOINTSCOPE_BUILD_DIR>/app/jointscope-cli."""

import os
import subprocess


def cli_path():
    path = os.environ.get("JOINTSCOPE_CLI") or os.path.join(os.environ.get("JOINTSCOPE_BUILD_DIR", ""), "app",
                                                             "jointscope-cli")
    if not os.path.isfile(path):
        raise AssertionError("jointscope-cli not found at %r (set JOINTSCOPE_CLI)" % path)
    return path


def run_cli(*args, timeout=300):
    """Runs jointscope-cli; its stdout, or AssertionError with stderr when it fails."""
    proc = subprocess.run([cli_path()] + list(args), capture_output=True, text=True, timeout=timeout)
    if proc.returncode != 0:
        raise AssertionError("jointscope-cli %s failed (%d): %s" % (" ".join(args), proc.returncode, proc.stderr))
    return proc.stdout
