"""portlint.python.layers: the lines that make a module part of a CUDA-API layer."""

from __future__ import annotations

import pytest

from portlint.catalog import load_catalog
from portlint.model import TARGETS
from portlint.python.import_refusals import catalogue_tests
from portlint.python.layers import Finder, Layer, Reach, layers_of, valid_facts

TOOLS = {"npu": ["torch_npu.contrib.transfer_to_npu"], "mlu": ["torch_mlu.utils.gpu_migration"]}
FINDER = Finder(TOOLS, TARGETS, catalogue_tests(load_catalog(), TARGETS))


@pytest.mark.parametrize(
    ("text", "migrated"),
    [
        ("from torch_npu.contrib import transfer_to_npu\n", ["npu"]),
        ("if on_npu:\n    from torch_npu.contrib import transfer_to_npu  # noqa\n", ["npu"]),
        ("import torch_npu.contrib.transfer_to_npu\n", ["npu"]),
        ("from torch_npu.contrib import (\n    transfer_to_npu,\n)\n", ["npu"]),
        ("from torch_npu.contrib import npu_utils, transfer_to_npu\n", ["npu"]),
        ("from torch_npu.contrib import npu_utils\n", []),
        ("from torch_mlu.utils.gpu_migration import migration\n", ["mlu"]),
        ("from torch_mlu.utils import gpu_migration\n", ["mlu"]),
        ("# from torch_npu.contrib import transfer_to_npu\n", []),
        ('"""Then use the transfer_to_npu interface."""\n', []),
    ],
)
def test_migration_tool_imports(text, migrated):
    assert FINDER.file_facts(text.encode())[0] == migrated


def test_rebound_names_and_their_values():
    text = (
        b"def init():\n"
        b"    torch.cuda.is_available = torch.xpu.is_available\n"
        b"    torch.cuda.empty_cache = torch.xpu.empty_cache\n"
        b"    torch.cuda.synchronize = _synchronize\n"
        b"    if torch.cuda.is_available == x:\n"
    )
    _, names, namespaces, *_ = FINDER.file_facts(text)
    assert names == ["torch.cuda.is_available", "torch.cuda.empty_cache", "torch.cuda.synchronize"]
    assert namespaces == {"xpu": 2}


def test_a_layer_needs_most_names_given_one_targets_values(tmp_path):
    facts = {
        str(tmp_path / "dml.py"): [
            [],
            ["torch.cuda.a", "torch.cuda.b", "torch.cuda.c"],
            {"dml": 3},
            [],
        ],
        str(tmp_path / "fix.py"): [
            [],
            ["torch.cuda.a", "torch.cuda.b", "torch.cuda.c"],
            {"xpu": 1},
            [],
        ],
    }
    assert layers_of(facts, FINDER.targets) == {}
    facts[str(tmp_path / "fix.py")][2] = {"xpu": 2}
    layer = Layer("xpu", "rebinding", ("torch.cuda.a", "torch.cuda.b", "torch.cuda.c"))
    assert layers_of(facts, FINDER.targets) == {
        layer: Reach(frozenset({"fix"}), (str(tmp_path / "fix.py"),))
    }


def test_imports_name_their_top_level_package():
    text = b"import os.path\nfrom . import sibling\nfrom opensora.models import x\n"
    assert FINDER.file_facts(text)[3] == [".", "opensora", "os"]


def test_the_facts_of_a_file_say_what_its_top_level_refuses():
    text = b"import torch\n\nif not torch.cuda.is_available():\n    raise RuntimeError('CUDA')\n"
    facts = FINDER.file_facts(text)
    assert facts[7] == ["cpu", "mlu", "mps", "npu", "xpu"]
    assert facts[8] == ["torch"]  # imported before the refusal
    assert valid_facts(facts)
    assert not valid_facts(facts[:8])  # a cache entry of the shape before: read again
