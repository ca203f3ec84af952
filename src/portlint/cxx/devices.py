"""PRT706: PyTorch's CUDA device type where a C++ extension places a tensor with it.

``torch::kCUDA`` (``at::kCUDA``, ``c10::kCUDA``, ``c10::DeviceType::CUDA``) is found as text and
judged by the construct around it (rules/cxx.toml ``[device_types]``): the argument of a call
that places a tensor (``.device(...)``, ``TensorOptions(...)``, ``Device(...)``, ``.to(...)``),
or of a declaration C++ reads as a function (``torch::Device device(torch::kCUDA);``). A
comparison, a dispatch-key registration and a choice under a CUDA test are left alone.
"""

from __future__ import annotations

import functools
import re

from tree_sitter import Node

from portlint.cxx.unit import Unit

#: Nodes a qualified name is built of, up to the whole of ``c10::DeviceType::CUDA``.
QUALIFIED = frozenset({"qualified_identifier", "scoped_identifier"})
#: What ends the search for a test that already chose the device.
FUNCTION_BODY_ENDS = frozenset({"function_definition", "lambda_expression", "translation_unit"})


def find_cuda_devices(unit: Unit) -> None:
    table = unit.catalog.table("cxx").get("device_types", {})
    names = table.get("names", ())
    if not names or not unit.contains(*(name.split("::")[-1].encode() for name in names)):
        return
    placing = frozenset(table.get("placing_calls", ()))
    tests = tuple(table.get("cuda_tests", ()))
    for match in unit.finditer(_pattern(tuple(names))):
        token = unit.code_node(match.start(match.lastindex), match.end(match.lastindex))
        if token is None:
            continue
        name = _whole_name(token)
        if not (_placed_by_call(unit, name, placing) or _declared_device(unit, name, placing)):
            continue
        if _chosen_under_test(unit, name, tests):
            continue
        text = unit.text(name)
        unit.report(
            "PRT706",
            name.start_byte,
            name.end_byte,
            f"`{text}` places the tensor on a CUDA device: ROCm keeps the name for AMD GPUs; "
            "elsewhere the extension allocates on its inputs' device (`x.options()`)",
            node=name,
        )


@functools.cache
def _pattern(names: tuple[str, ...]) -> re.Pattern[bytes]:
    """The last word of each name, after its own qualifiers (``DeviceType::`` in
    ``DeviceType::CUDA``), as group 1."""
    alternatives = []
    for name in names:
        *scope, last = name.split("::")
        prefix = "".join(re.escape(part) + r"\s*::\s*" for part in scope)
        alternatives.append(prefix + "(" + re.escape(last) + ")")
    return re.compile(
        ("(?<![A-Za-z0-9_])(?:" + "|".join(alternatives) + ")(?![A-Za-z0-9_])").encode()
    )


def _whole_name(token: Node) -> Node:
    """The qualified name the token ends (``torch::kCUDA`` for ``kCUDA``)."""
    current = token
    while current.parent is not None and current.parent.type in QUALIFIED:
        current = current.parent
    return current


def _callee_name(unit: Unit, function: Node | None) -> str:
    """The last name of a call's function: ``device`` of ``opts.device``, ``Device`` of
    ``torch::Device``, ``to`` of ``x.to``."""
    if function is None:
        return ""
    if function.type == "field_expression":
        field = function.child_by_field_name("field")
        return unit.text(field) if field is not None else ""
    if function.type == "template_function":
        function = function.child_by_field_name("name")
        if function is None:
            return ""
    return re.split(r"\s*::\s*", unit.text(function))[-1]


def _placed_by_call(unit: Unit, name: Node, placing: frozenset[str]) -> bool:
    """The name is an argument of a call that places a tensor (``.device(torch::kCUDA)``)."""
    arguments = name.parent
    if arguments is None or arguments.type != "argument_list":
        return False
    call = arguments.parent
    if call is None or call.type != "call_expression":
        return False
    return _callee_name(unit, call.child_by_field_name("function")) in placing


def _declared_device(unit: Unit, name: Node, placing: frozenset[str]) -> bool:
    """``torch::Device device(torch::kCUDA);``, which C++'s grammar reads as a function
    declaration: the name is the type of its one parameter, and the declared type is a device
    or the options of a tensor."""
    parameter = name.parent
    if parameter is None or parameter.type != "parameter_declaration":
        return False
    if parameter.child_by_field_name("declarator") is not None:
        return False  # a real parameter (``void f(c10::DeviceType::CUDA t)`` is no C++ anyway)
    declaration = parameter.parent
    while declaration is not None and declaration.type not in ("declaration", *FUNCTION_BODY_ENDS):
        declaration = declaration.parent
    if declaration is None or declaration.type != "declaration":
        return False  # the parameter of a function defined here
    declared = declaration.child_by_field_name("type")
    return declared is not None and _callee_name(unit, declared) in placing


def _chosen_under_test(unit: Unit, name: Node, tests: tuple[str, ...]) -> bool:
    """A device chosen where a CUDA test holds: in an ``if`` or a ``?:`` whose condition asks
    ``torch::cuda::is_available()`` (the other arm, or what follows, is the fallback)."""
    current = name.parent
    while current is not None and current.type not in FUNCTION_BODY_ENDS:
        if current.type in ("if_statement", "conditional_expression"):
            condition = current.child_by_field_name("condition")
            if condition is not None and any(word in unit.text(condition) for word in tests):
                return True
        current = current.parent
    return False
