"""What a module's package loads when it is imported (``portlint.python.package_loads``)."""

from __future__ import annotations

from portlint.python.package_loads import resolve, top_imports, unloadable


def test_top_imports_are_the_unindented_import_statements():
    text = (
        b"import os, triton.language as tl\n"
        b"from .ops import (\n    norm,\n    scan as s,\n)\n"
        b"from . import kernels\n"
        b"from pkg.sub import *\n"
        b"try:\n    import flash_attn\nexcept ImportError:\n    pass\n"
        b"def f():\n    import apex\n"
    )
    assert top_imports(text) == [
        ".",
        ".kernels",
        ".ops",
        ".ops.norm",
        ".ops.scan",
        "os",
        "pkg.sub",
        "triton.language",
    ]


def test_relative_imports_resolve_in_the_module_package():
    assert resolve(".ops.norm", "pkg.model", is_package=False) == "pkg.ops.norm"
    assert resolve(".ops", "pkg", is_package=True) == "pkg.ops"
    assert resolve("..utils", "pkg.sub.mod", is_package=False) == "pkg.utils"
    assert resolve("...", "pkg.mod", is_package=False) is None  # above the outermost package


def test_what_a_package_loads_reaches_its_modules_and_their_importers(tmp_path):
    package = tmp_path / "pkg"
    (package / "ops").mkdir(parents=True)
    files = {
        package / "__init__.py": [".ops.norm"],
        package / "ops" / "__init__.py": [],
        package / "ops" / "norm.py": ["torch", "triton"],
        package / "model.py": ["torch"],
        tmp_path / "script.py": ["pkg.model"],
        tmp_path / "other.py": ["torch"],
    }
    for path in files:
        path.touch()
    found = unloadable({str(p): imports for p, imports in files.items()}, {"triton": ["mps"]})
    norm = str(package / "ops" / "norm.py")
    assert sorted(found) == sorted(str(p) for p in files if p.name not in ("other.py",))
    assert {entry.targets for entry in found.values()} == {("mps",)}
    assert {entry.origin for entry in found.values()} == {norm}


def test_a_module_name_two_files_share_is_left_alone(tmp_path):
    files = {}
    for project in ("one", "two"):
        (tmp_path / project / "pkg").mkdir(parents=True)
        init = tmp_path / project / "pkg" / "__init__.py"
        init.touch()
        files[str(init)] = ["triton"]
    assert unloadable(files, {"triton": ["mps"]}) == {}


def test_an_import_in_a_long_string_is_no_statement():
    text = (
        b'"""Use it so:\n\nimport triton\n"""\n'
        b"import torch\n"
        b"EXAMPLE = '''\nfrom kernels import norm\n'''\n"
        b"from pkg import ops\n"
    )
    assert top_imports(text) == ["pkg", "pkg.ops", "torch"]
