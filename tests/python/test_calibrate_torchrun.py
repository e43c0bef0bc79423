"""Measured collectives under Debian's torch 1.13 (no DeviceMesh: per-dimension groups by dist.new_group):
a real `torchrun --nproc_per_node 4` gloo calibration on a 2x2 mesh, imported into the profile DB and used by
`jointscope-cli shard --comm-model measured`. The checks are in calibratecheck.py.
Run by CTest as py_test_calibrate_torchrun (PYTHONPATH=<repo>/python:tests/python, JOINTSCOPE_CLI).
"""

import sys
import unittest

try:
    import torch  # noqa: F401
except ImportError as e:  # never skip: the calibration must run
    print("FAIL: test_calibrate_torchrun needs torch (apt install python3-torch): %s" % e, file=sys.stderr)
    sys.exit(1)

from calibratecheck import CalibrateTorchrun  # noqa: F401

if __name__ == "__main__":
    unittest.main(verbosity=2)
