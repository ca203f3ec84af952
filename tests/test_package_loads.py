"""What a module's package loads when it is imported (``portlint.python.package_loads``)."""

from __future__ import annotations

from portlint.python.package_loads import (
    Unloadable,
    builds_cuda_at_import,
    import_choices,
    package_inits,
    packages_described,
    resolve,
    top_imports,
    unloadable,
)


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


def test_a_module_name_two_files_share_finds_neither_but_each_keeps_its_own_imports(tmp_path):
    files = {}
    for project in ("one", "two"):
        (tmp_path / project / "pkg").mkdir(parents=True)
        init = tmp_path / project / "pkg" / "__init__.py"
        init.touch()
        files[str(init)] = ["triton"]
    (tmp_path / "lib").mkdir()
    importer = tmp_path / "lib" / "__init__.py"
    importer.touch()
    files[str(importer)] = ["pkg"]  # which of the two: nobody can say
    found = unloadable(files, {"triton": ["mps"]})
    inits = [str(tmp_path / project / "pkg" / "__init__.py") for project in ("one", "two")]
    assert sorted(found) == inits


def test_a_script_finds_the_module_beside_it_by_its_bare_name(tmp_path):
    files = {}
    for app in ("fill", "t2i"):  # scripts and helpers of the same names in two folders
        folder = tmp_path / "app" / app
        (folder / "data").mkdir(parents=True)
        files[folder / "run.py"] = ["torch", "utils", "utils.get_pipeline"]
        files[folder / "utils.py"] = ["torch", "mypkg.model"]
        files[folder / "data" / "__init__.py"] = []
        files[folder / "data" / "ext.py"] = ["ext_cuda"]
        files[folder / "eval.py"] = ["data.ext"]
    files[tmp_path / "app" / "fill" / "utils.py"] = ["torch"]  # this one loads everywhere
    (tmp_path / "mypkg").mkdir()
    files[tmp_path / "mypkg" / "__init__.py"] = []
    files[tmp_path / "mypkg" / "model.py"] = ["ext_cuda"]
    for path in files:
        path.touch()
    found = unloadable({str(p): imports for p, imports in files.items()}, {"ext_cuda": ["cpu"]})
    t2i, fill = tmp_path / "app" / "t2i", tmp_path / "app" / "fill"
    assert sorted(found) == sorted(
        str(p)
        for p in (
            t2i / "run.py",
            t2i / "utils.py",
            t2i / "data" / "ext.py",
            t2i / "eval.py",
            fill / "data" / "ext.py",
            fill / "eval.py",
            tmp_path / "mypkg" / "model.py",
        )
    )
    assert found[str(t2i / "run.py")].origin == str(tmp_path / "mypkg" / "model.py")


def test_an_import_in_a_long_string_is_no_statement():
    text = (
        b'"""Use it so:\n\nimport triton\n"""\n'
        b"import torch\n"
        b"EXAMPLE = '''\nfrom kernels import norm\n'''\n"
        b"from pkg import ops\n"
    )
    assert top_imports(text) == ["pkg", "pkg.ops", "torch"]


def test_import_choices_are_the_unindented_if_chains_that_import_in_every_arm():
    text = (
        b"import os\n"
        b"if os.environ.get('AMD') == '1':  # AMD's kernels\n"
        b"    from aiter.ops import attn as backend\n"
        b"elif HAS_EXT:\n"
        b"    import ext_C as backend\n"
        b"else:\n"
        b"    import ext_cuda as backend\n"
        # no else: the module loads without importing either
        b"if HAS_TRITON:\n    import triton\n"
        # an arm that imports nothing of its own: the other arm is avoided there
        b"if HAS_EXT:\n    import ext_C\nelse:\n    ext_C = None\n"
        # an import inside a nested block is no statement of the arm
        b"if HAS_EXT:\n    import ext_C\nelse:\n    try:\n        import ext_cuda\n"
        b"    except ImportError:\n        pass\n"
        b'"""\nif a:\n    import x\nelse:\n    import y\n"""\n'
    )
    assert import_choices(text) == [
        [["aiter.ops", "aiter.ops.attn"], ["ext_C"], ["ext_cuda"]],
    ]


def test_a_module_that_imports_an_absent_package_in_every_arm_cannot_load(tmp_path):
    package = tmp_path / "pkg"
    package.mkdir()
    files = {
        package / "__init__.py": [".interface"],
        package / "interface.py": ["os", "torch"],
        package / "either.py": ["torch"],
        tmp_path / "script.py": ["pkg"],
    }
    for path in files:
        path.touch()
    choices = {
        str(package / "interface.py"): [[["aiter.ops"], ["pkg_cuda"]]],
        str(package / "either.py"): [[["aiter.ops"], ["numpy"]]],
    }
    absent_on = {"aiter": ["cpu", "npu"], "pkg_cuda": ["cpu", "npu", "xpu"]}
    found = unloadable({str(p): imports for p, imports in files.items()}, absent_on, choices)
    assert sorted(found) == sorted(str(p) for p in files)
    interface = found[str(package / "interface.py")]
    assert interface[:3] == (("cpu", "npu"), str(package / "interface.py"), "aiter or pkg_cuda")
    assert interface.reasons == (
        (str(package / "interface.py"), "aiter or pkg_cuda", ("cpu", "npu")),
    )
    # ``either.py`` is inside the package, whose __init__ loads interface.py
    assert found[str(package / "either.py")].targets == ("cpu", "npu")
    # alone, its own choice keeps every target: numpy is everywhere
    alone = unloadable({str(package / "either.py"): ["torch"]}, absent_on, choices)
    assert alone == {}


def test_package_inits_are_those_of_every_package_above_a_file(tmp_path):
    (tmp_path / "pkg" / "sub").mkdir(parents=True)
    (tmp_path / "pkg" / "__init__.py").touch()
    (tmp_path / "pkg" / "sub" / "__init__.py").touch()
    (tmp_path / "pkg" / "sub" / "mod.py").touch()
    (tmp_path / "loose").mkdir()
    (tmp_path / "loose" / "script.py").touch()
    paths = [str(tmp_path / "pkg" / "sub" / "mod.py"), str(tmp_path / "loose" / "script.py")]
    assert package_inits(paths) == [
        str(tmp_path / "pkg" / "sub" / "__init__.py"),
        str(tmp_path / "pkg" / "__init__.py"),
    ]


def test_import_choices_read_crlf_lines_and_a_multiline_header_as_no_chain():
    assert import_choices(b"if a:\r\n    import x\r\nelse:\r\n    import y\r\n") == [[["x"], ["y"]]]
    # a header over several lines is not read: no chain, rather than a wrong one
    text = b"if (a and\n        b):\n    import x\nelse:\n    import y\n"
    assert import_choices(text) == []


def test_a_try_whose_handler_catches_a_failed_import_is_a_choice():
    text = (
        b"try:\n    import ext_C as backend\nexcept ImportError:\n    from .jit import backend\n"
        b"try:\n    import ext_C\nexcept ImportError:\n    ext_C = None\n"  # imports nothing
        b"try:\n    import ext_C\nexcept OSError:\n    import other\n"  # the failure escapes
        b"try:\n    import ext_C\nexcept ImportError:\n    import a\nelse:\n    import b\n"
        b"try:\n    import ext_C\nexcept (ModuleNotFoundError, OSError):\n    import c\n"
    )
    assert import_choices(text) == [
        [["ext_C"], [".jit", ".jit.backend"]],
        [["ext_C"], ["c"]],
    ]


def test_a_module_builds_a_cuda_extension_at_import_only_with_cuda_sources_at_its_top():
    build = (
        b"import os\nfrom torch.utils.cpp_extension import load\n"
        b"_C = load(name='ext', sources=[os.path.join(HERE, f) for f in ['a.cu', 'b.cpp']])\n"
    )
    assert builds_cuda_at_import(build)
    assert builds_cuda_at_import(b"import torch\ntorch.utils.cpp_extension.load('x', ['k.cu'])\n")
    assert not builds_cuda_at_import(build.replace(b"'a.cu'", b"'a.cpp'"))  # a C++ extension
    assert not builds_cuda_at_import(build.replace(b"_C = load", b"def f():\n    return load"))
    assert not builds_cuda_at_import(b"from json import load\ncpp_extension = load(open('k.cu'))\n")


def test_a_package_note_gives_each_reason_its_own_targets(tmp_path):
    init = tmp_path / "pkg" / "__init__.py"
    init.parent.mkdir()
    init.touch()
    found = {
        str(init): Unloadable(
            ("cpu", "mlu", "mps"),
            str(init),
            "triton",
            ((str(init), "triton", ("mps",)), ("pkg/ops.py", "pkg.platform", ("cpu", "mlu"))),
        )
    }
    assert packages_described(found, refusing=["pkg.platform"]) == [
        f"package pkg imports triton when it loads (in {init}), which no mps machine has, and"
        " loads pkg.platform (in pkg/ops.py), which refuses cpu, mlu when it loads: its modules"
        " list no cpu, mlu, mps site",
    ]
