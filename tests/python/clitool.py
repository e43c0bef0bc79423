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


def require_torch2(test_name):
    """The test's torch when it is 2.x; otherwise prints why and exits 1 (a failure, never a skip)."""
    import sys

    try:
        import torch
    except ImportError as e:
        print("FAIL: %s needs torch >= 2 (the venv ~/.cache/jointscope/torch-2.15/bin/python): %s" % (test_name, e),
              file=sys.stderr)
        sys.exit(1)
    if int(torch.__version__.split(".")[0]) < 2:
        print("FAIL: %s needs torch >= 2 with torch.compile; %s has torch %s. Run it with the torch 2 venv: "
              "~/.cache/jointscope/torch-2.15/bin/python" % (test_name, sys.executable, torch.__version__),
              file=sys.stderr)
        sys.exit(1)
    return torch


def budget_args(options):
    """The partition arguments of a case's memory budget and knapsack solver (zoo options)."""
    args = []
    if options.get("memory_budget") is not None:
        args += ["--memory-budget", repr(float(options["memory_budget"]))]
    if options.get("solver") is not None:
        args += ["--solver", options["solver"]]
    return args


def saved_diff(ours, torchs):
    """Names torch saves that we do not (missing), that we save and torch does not (extra), then both lists."""
    missing = [n for n in torchs if n not in ours]
    extra = [n for n in ours if n not in torchs]
    text = "missing %s, extra %s" % (missing, extra)
    if not missing and not extra:
        text += " (same names, other order)"
    return text + "\n ours:  %s\n torch: %s" % (ours, torchs)
