"""Which targets a module refuses when it loads (``portlint.python.import_refusals``)."""

from __future__ import annotations

import pytest

from portlint.catalog import load_catalog
from portlint.model import TARGETS
from portlint.python.import_refusals import catalogue_tests, refused_targets

TESTS = catalogue_tests(load_catalog(), TARGETS)
NOT_ROCM = ["cpu", "mlu", "mps", "npu", "xpu"]


@pytest.mark.parametrize(
    ("text", "refused"),
    [
        # a chain of build tests whose else raises: only NVIDIA and ROCm go on
        (
            b"if torch.version.cuda:\n    A = 1\nelif torch.version.hip:\n    A = 2\n"
            b"else:\n    raise RuntimeError('unsupported')\n",
            NOT_ROCM,
        ),
        # an arm for Ascend, named by a vendor predicate: npu goes on too
        (
            b"if is_cuda():\n    import a\nelif is_hip():\n    import b\n"
            b"elif is_ascend():\n    pass\nelse:\n    raise Exception('no')\n",
            ["cpu", "mlu", "mps", "xpu"],
        ),
        (b"if not torch.cuda.is_available():\n    raise RuntimeError('CUDA')\n", NOT_ROCM),
        (b"assert torch.cuda.is_available() or torch.xpu.is_available()\n", NOT_ROCM[:-1]),
        (b"if torch.version.hip is not None:\n    raise ImportError('no ROCm')\n", ["rocm"]),
        # a CUDA predicate may hold on ROCm: ROCm is not refused
        (b"if not is_cuda_available():\n    raise ImportError\n", NOT_ROCM),
    ],
)
def test_a_top_level_refusal_refuses_the_targets_it_raises_on(text, refused):
    assert refused_targets(b"import torch\n" + text, TESTS) == refused


@pytest.mark.parametrize(
    "text",
    [
        # a setting, not a vendor
        b"if BACKEND == 'ring':\n    A = 0\nelse:\n    raise ValueError(BACKEND)\n",
        # a part of the test is not known
        b"if torch.version.cuda and USE_NCCL:\n    A = 0\nelse:\n    raise ValueError\n",
        b"if not hasattr(torch, 'npu'):\n    raise ImportError\n",
        # indented: inside a function or a try, it refuses nothing when the module loads
        b"def f():\n    if not torch.cuda.is_available():\n        raise RuntimeError\n",
        b"try:\n    assert torch.cuda.is_available()\nexcept AssertionError:\n    pass\n",
        # an arm before the else raises too: not a chain of the supported platforms
        b"if torch.version.hip:\n    raise ImportError\nelif torch.version.cuda:\n    A = 1\n"
        b"else:\n    raise ImportError\n",
        # a docstring's example
        b'"""\nif not torch.cuda.is_available():\n    raise RuntimeError\n"""\n',
    ],
)
def test_what_is_no_known_top_level_refusal_refuses_nothing(text):
    assert refused_targets(b"import torch\n" + text, TESTS) == []
