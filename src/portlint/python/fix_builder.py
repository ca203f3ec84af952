"""The fix builder of a Python module: the shared parts (``portlint.python.fixes``) and each rule
family's fixes, which live beside their checks."""

from __future__ import annotations

from portlint.python.api_checks import TorchCudaFixes
from portlint.python.device_checks import DeviceFixes
from portlint.python.distributed_checks import BackendFixes


class FixBuilder(DeviceFixes, TorchCudaFixes, BackendFixes):
    """Builds the fixes of one module. Returns None wherever a fix would not be right."""
