"""rules/generated/torch_cuda_behaviour.toml is what scripts/gen_torch_cuda_behaviour.py measures
on the installed CPU-only torch, and the severities of torch.cuda findings follow it."""

from __future__ import annotations

import subprocess
import sys

import pytest

from portlint.catalog import load_catalog
from portlint.model import Severity
from portlint.python.torch_api import torch_cuda_api
from support import ROOT

torch = pytest.importorskip("torch", reason="torch is not installed")
FACTS = load_catalog().data("generated/torch_cuda_behaviour.toml")


@pytest.mark.skipif(torch.cuda.is_available(), reason="needs a CPU-only torch build")
@pytest.mark.skipif(
    torch.__version__.split("+")[0] != FACTS["torch"],
    reason=f"the facts were measured on torch {FACTS['torch']}",
)
def test_generated_facts_are_up_to_date():
    script = ROOT / "scripts" / "gen_torch_cuda_behaviour.py"
    done = subprocess.run(
        [sys.executable, str(script), "--check"], capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stderr


@pytest.mark.parametrize(
    ("name", "severity"),
    [
        ("synchronize", Severity.ERROR),  # raises: Torch not compiled with CUDA enabled
        ("empty_cache", Severity.INFO),  # a no-op
        ("memory_allocated", Severity.INFO),  # reads 0
        ("amp.GradScaler", Severity.WARNING),  # warns and disables itself
        ("is_available", Severity.WARNING),  # policy: a device choice falls back
    ],
)
def test_severity_follows_the_measured_outcome(name, severity):
    entry = torch_cuda_api(load_catalog()).entry(name)
    assert (entry.severity or Severity.ERROR) is severity


@pytest.mark.parametrize("text", ["cuda", "cpu", "cuda:0"])
def test_a_device_never_equals_a_string(text):
    """``if device == "cuda":`` with ``device = torch.device(...)`` is no porting site
    (``device_checks.compares_device_object``): no machine takes its arm."""
    device = torch.device(text)
    assert (device == text) is False
    assert (device != text) is True
    assert text not in (device,) and device not in (text, "xpu")
