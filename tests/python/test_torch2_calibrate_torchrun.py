"""Measured collectives under torch 2.x (the mesh from torch.distributed.device_mesh.init_device_mesh): a real
`torchrun --nproc_per_node 4` gloo calibration on a 2x2 mesh, imported into the profile DB and used by
`jointscope-cli shard --comm-model measured`. The checks are in calibratecheck.py.
Run by CTest as py_test_torch2_calibrate_torchrun with ~/.cache/jointscope/torch-2.15/bin/python.
"""

import unittest

from clitool import require_torch2

require_torch2("test_torch2_calibrate_torchrun")

from calibratecheck import CalibrateTorchrun  # noqa: E402,F401

if __name__ == "__main__":
    unittest.main(verbosity=2)
