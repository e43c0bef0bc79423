"""test_torch2_oracle with every tensor made on one device: the torch 2 zoo on a GPU, where SDPA runs CUDA's own
attention kernels (efficient / flash attention and their backwards) and dropout CUDA's RNG.

    JS_ORACLE_DEVICE=cuda JOINTSCOPE_BUILD_DIR=DIR JOINTSCOPE_CLI=CLI \\
        PYTHONPATH=python:tests/python python3 tests/python/device_oracle.py [--export-only] [-v]

torch.set_default_device puts the zoo's parameters, inputs and factory calls on the device before any case is
built; the checks are test_torch2_oracle's, unchanged. --export-only exports the zoo into DIR/oracle-torch2 and
exits (no CLI needed), so the export can run while the CLI builds; the test run after reuses it. JS_ORACLE_ONLY
(comma-separated case names) limits the zoo, for trying the driver on a few cases.
Used by scripts/gpu-profile on GPU boxes; CI runs test_torch2_oracle itself on the CPU.
"""

import os
import sys
import unittest

import torch

device = os.environ.get("JS_ORACLE_DEVICE", "cpu")
torch.set_default_device(device)

import test_torch2_oracle as oracle  # noqa: E402  (after the default device is set)

only = [n for n in os.environ.get("JS_ORACLE_ONLY", "").split(",") if n]
if only:
    every = oracle.torch2_zoo_builders

    def limited():
        builders = every()
        missing = [n for n in only if n not in builders]
        if missing:
            raise SystemExit("device_oracle: no zoo case named %s" % ", ".join(missing))
        return {n: builders[n] for n in only}

    oracle.torch2_zoo_builders = limited


def main():
    print("device_oracle: torch %s, default device %s%s" % (
        torch.__version__, device, " (%s)" % torch.cuda.get_device_name() if device.startswith("cuda") else ""),
        file=sys.stderr, flush=True)
    if "--export-only" in sys.argv:
        cases = oracle.export_zoo(os.path.join(os.environ["JOINTSCOPE_BUILD_DIR"], "oracle-torch2"))
        failed = [n for n, c in cases.items() if not c["ok"]]
        print("device_oracle: exported %d cases, %d failed %s" % (len(cases), len(failed), failed), file=sys.stderr)
        return 0
    argv = [sys.argv[0]] + [a for a in sys.argv[1:] if a != "--export-only"]
    result = unittest.main(module=oracle, argv=argv, exit=False).result
    return 0 if result.wasSuccessful() else 1


if __name__ == "__main__":
    sys.exit(main())
