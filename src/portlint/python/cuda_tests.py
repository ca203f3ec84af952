"""Tests that run only on CUDA: their body is correct by construction, the skip is the site.

``@pytest.mark.skipif(not torch.cuda.is_available(), reason=...)`` on a test, a module-level
``pytestmark`` of that kind or a module name bound to one, ``@unittest.skipUnless(
torch.cuda.is_available(), ...)`` on a test class, a project helper named for it
(``@require_cuda``, ``@require_torch_gpu``), or ``if not torch.cuda.is_available():
pytest.skip(...)`` (in a test, also a bare ``return``): on every other target the test is
skipped, so nothing in its body runs there. The CUDA calls, ``.cuda()`` moves and ``"cuda"``
strings of the body are no sites of their own; the skip condition is (info: the other targets
lose the test, nothing breaks), or, for a project helper, the helper's own CUDA check where it
is defined. A condition that also admits another device type (``torch_device not in ["cuda",
"xpu"]``) does not make the test CUDA-only: its body is reported for the listed targets.

The words that make these up are data: rules/device.toml ``[device.test_skips]``.
"""

from __future__ import annotations

import ast
import functools
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass

from portlint.catalog import Catalog
from portlint.python.guards import Resolve, cuda_polarity
from portlint.python.tree import walk

Polarity = Callable[[ast.expr], int]

#: Where a camelCase name starts a new word (``onlyCUDA``: ``only``, ``CUDA``).
CAMEL_BOUNDARY = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")


@dataclass(frozen=True)
class TestSkips:
    #: decorator calls that skip when their first argument is true (``skipif``, ``skipIf``)
    skip_if: frozenset[str]
    #: decorator calls that skip unless it is true (``skipUnless``)
    skip_unless: frozenset[str]
    #: calls that skip the running test (``pytest.skip``, ``self.skipTest``)
    skip_now: frozenset[str]
    #: words that, beside ``cuda``, make a decorator's name a requirement (``require_cuda``)
    requirement_words: frozenset[str]
    #: other words such a name may hold (``require_torch_multi_gpu``)
    neutral_words: frozenset[str] = frozenset()
    #: methods that run before each test of a class (``setUp``, ``setup_method``)
    setups: frozenset[str] = frozenset()

    @classmethod
    def from_catalog(cls, catalog: Catalog) -> TestSkips:
        table = catalog.table("device").get("device", {}).get("test_skips", {})
        return cls(
            frozenset(table.get("skip_if", ())),
            frozenset(table.get("skip_unless", ())),
            frozenset(table.get("skip_now", ())),
            frozenset(table.get("requirement_words", ())),
            frozenset(table.get("neutral_words", ())),
            frozenset(table.get("setups", ())),
        )

    def skips_always(self, decorator: ast.expr) -> bool:
        """``@pytest.mark.skip(reason=...)``, ``@unittest.skip("...")``: a mark that skips the
        test on every machine, with no condition; the test never runs."""
        mark = decorator.func if isinstance(decorator, ast.Call) else decorator
        if isinstance(decorator, ast.Call) and decorator.args and not _is_reason(decorator.args[0]):
            return False  # ``skip(condition)`` is no such mark
        return _name(mark) in self.skip_now and _dotted(mark).startswith(("pytest.", "unittest."))

    def skips_without_cuda(
        self,
        decorator: ast.expr,
        polarity: Polarity,
        words: Mapping[str, str],
        aliases: frozenset[str] = frozenset(),
    ) -> bool:
        """The decorator skips the test wherever CUDA is missing, and the test names no other
        target it runs on (``skipif(device not in ("cuda", "xpu"))`` runs on xpu too).
        ``aliases``: module names bound to such a mark (``cuda_required =
        pytest.mark.skipif(...)``)."""
        if isinstance(decorator, ast.Call):
            name = _name(decorator.func)
            condition = decorator.args[0] if decorator.args else None
            if condition is not None and (name in self.skip_if or name in self.skip_unless):
                if _names_other_target(condition, words):
                    return False
                if name in self.skip_if:
                    return _true_without_cuda(condition, polarity)
                return polarity(condition) == 1
            decorator = decorator.func  # ``@require_cuda()``
        if isinstance(decorator, ast.Name) and decorator.id in aliases:
            return True
        return self._named_requirement(_name(decorator), words)

    def required(self, mark: ast.expr) -> ast.expr | None:
        """What a conditional mark asks for the test to run: ``X`` of ``skipif(not X, ...)``
        or of ``skipUnless(X, ...)``; None for any other mark."""
        if not (isinstance(mark, ast.Call) and mark.args):
            return None
        name, condition = _name(mark.func), mark.args[0]
        if name in self.skip_unless:
            return condition
        if (
            name in self.skip_if
            and isinstance(condition, ast.UnaryOp)
            and isinstance(condition.op, ast.Not)
        ):
            return condition.operand
        return None

    def _named_requirement(self, name: str | None, words: Mapping[str, str]) -> bool:
        """``require_cuda``, ``require_torch_gpu``, ``cuda_only``, ``onlyCUDA``: a requirement
        word and words that name CUDA by the vendor words of rules/device.toml (``gpu`` is
        CUDA's there), and nothing else (``require_cuda_or_xpu`` is not one)."""
        if not name:
            return False
        parts = CAMEL_BOUNDARY.sub("_", name).lower().split("_")
        if self.requirement_words.isdisjoint(parts):
            return False
        # every word is a requirement, a word for CUDA or a neutral one (``torch``, ``multi``):
        # ``require_torch_gpu_if_bnb_not_multi_backend_enabled`` is a condition, not one
        return any(words.get(part) == "cuda" for part in parts) and all(
            part in self.requirement_words
            or part in self.neutral_words
            or words.get(part) == "cuda"
            for part in parts
        )

    def runs_only_on(
        self, decorator: ast.expr, words: Mapping[str, str], targets: frozenset[str]
    ) -> frozenset[str] | None:
        """``@pytest.mark.skipif(torch_device not in ["cuda", "xpu"], ...)``,
        ``@unittest.skipUnless(device == "npu", ...)``: the targets the test runs on (ROCm
        with CUDA, which it runs as), or None when the condition is not such a list of device
        types."""
        if not (isinstance(decorator, ast.Call) and decorator.args):
            return None
        name, condition = _name(decorator.func), decorator.args[0]
        if not (isinstance(condition, ast.Compare) and len(condition.ops) == 1):
            return None
        op = condition.ops[0]
        if name in self.skip_if and isinstance(op, ast.NotIn | ast.NotEq):
            pass  # skipped unless the device type is listed
        elif name in self.skip_unless and isinstance(op, ast.In | ast.Eq):
            pass
        else:
            return None
        listed = condition.comparators[0]
        if isinstance(listed, ast.Constant):
            listed = ast.List([listed])
        if not isinstance(listed, ast.List | ast.Tuple | ast.Set) or not listed.elts:
            return None
        admitted: set[str] = set()
        for element in listed.elts:
            if not (isinstance(element, ast.Constant) and isinstance(element.value, str)):
                return None
            vendor = words.get(element.value.split(":")[0].lower())
            if vendor is None:
                return None  # not a device type
            admitted |= {"rocm"} if vendor == "cuda" else {vendor} & targets
        return frozenset(admitted)

    def mark_alias(
        self, statement: ast.stmt, polarity: Polarity, words: Mapping[str, str]
    ) -> str | None:
        """``cuda_required = pytest.mark.skipif(not torch.cuda.is_available(), ...)``: the
        name now used as a decorator that skips without CUDA, or None."""
        if not (
            isinstance(statement, ast.Assign)
            and len(statement.targets) == 1
            and isinstance(statement.targets[0], ast.Name)
            and statement.targets[0].id != "pytestmark"
            and isinstance(statement.value, ast.Call)
        ):
            return None
        if self.skips_without_cuda(statement.value, polarity, words):
            return statement.targets[0].id
        return None

    def marks_module(
        self, statement: ast.stmt, polarity: Polarity, words: Mapping[str, str]
    ) -> bool:
        """``pytestmark = pytest.mark.skipif(not torch.cuda.is_available(), ...)`` (or a list of
        marks holding one): every test of the module is skipped without CUDA."""
        if not (
            isinstance(statement, ast.Assign)
            and any(isinstance(t, ast.Name) and t.id == "pytestmark" for t in statement.targets)
        ):
            return False
        value = statement.value
        marks = value.elts if isinstance(value, ast.List | ast.Tuple) else [value]
        return any(self.skips_without_cuda(mark, polarity, words) for mark in marks)

    def skipped_from(
        self,
        statement: ast.stmt,
        polarity: Polarity,
        words: Mapping[str, str],
        in_test: bool = False,
    ) -> int | None:
        """``if not torch.cuda.is_available(): pytest.skip("needs CUDA")`` (or
        ``self.skipTest(...)``, ``raise unittest.SkipTest(...)``, or in a test a bare
        ``return``): what follows in the test runs only on CUDA, and so does an ``else`` arm;
        ``if torch.cuda.is_available(): ... else: pytest.skip(...)`` the same, from its first arm
        on. The first line that runs only on CUDA, or None."""
        if not isinstance(statement, ast.If):
            return None
        # the cheap look first: most ``if`` statements end in no skip
        skips_body = self.ends_in_skip(statement.body, in_test)
        skips_else = bool(statement.orelse) and self.ends_in_skip(statement.orelse, in_test)
        if not (skips_body or skips_else) or _names_other_target(statement.test, words):
            return None
        if skips_body and _true_without_cuda(statement.test, polarity):
            if statement.orelse:
                return statement.orelse[0].lineno
            return (statement.end_lineno or statement.lineno) + 1
        if skips_else and polarity(statement.test) == 1:
            return statement.body[0].lineno
        return None

    def ends_in_skip(self, body: list[ast.stmt], in_test: bool = False) -> bool:
        """The block ends by skipping the running test; in a test function (``in_test``), a
        bare ``return`` skips it too, silently; in a decorator, returning the test wrapped in a
        skip (``return unittest.skip(...)(test_case)``) does."""
        last = body[-1] if body else None
        if in_test and isinstance(last, ast.Return) and last.value is None:
            return True
        if (
            isinstance(last, ast.Return)
            and isinstance(last.value, ast.Call)
            and isinstance(last.value.func, ast.Call)
        ):
            # ``return unittest.skip("needs CUDA")(test_case)`` in a ``require_*`` decorator
            return _name(last.value.func.func) in self.skip_now
        if isinstance(last, ast.Raise) and last.exc is not None:
            called = last.exc.func if isinstance(last.exc, ast.Call) else last.exc
        elif isinstance(last, ast.Expr) and isinstance(last.value, ast.Call):
            called = last.value.func
        else:
            return False
        return _name(called) in self.skip_now


@functools.cache
def test_skips(catalog: Catalog) -> TestSkips:
    return TestSkips.from_catalog(catalog)


def in_skip_condition(node: ast.AST, parents: Mapping[int, ast.AST], skips: TestSkips) -> bool:
    """``unittest.skipUnless(torch.cuda.device_count() > 1, ...)``,
    ``pytest.mark.skipif(torch_device != "cuda", ...)``: the node decides whether a test runs.
    Skipping a CUDA test where there is no CUDA loses nothing (info)."""
    names = skips.skip_if | skips.skip_unless
    current = parents.get(id(node))
    while current is not None and not isinstance(current, ast.stmt):
        if isinstance(current, ast.Call) and _name(current.func) in names:
            return True
        current = parents.get(id(current))
    return False


def _names_other_target(condition: ast.expr, words: Mapping[str, str]) -> bool:
    """A string in the condition names a vendor other than CUDA (or ROCm, which runs CUDA's
    code), or the CPU: ``torch_device in ["cuda", "xpu"]``."""
    return any(
        isinstance(node, ast.Constant)
        and isinstance(node.value, str)
        and words.get(node.value.split(":")[0].lower(), "cuda") not in ("cuda", "rocm")
        for node in walk(condition)
    )


def _true_without_cuda(condition: ast.expr, polarity: Polarity) -> bool:
    """True wherever CUDA is missing: a negated CUDA test, or an ``or`` with one
    (``not torch.cuda.is_available() or slow``)."""
    if isinstance(condition, ast.BoolOp) and isinstance(condition.op, ast.Or):
        return any(_true_without_cuda(value, polarity) for value in condition.values)
    return polarity(condition) == -1


def _is_reason(node: ast.expr) -> bool:
    return isinstance(node, ast.Constant | ast.JoinedStr) and not isinstance(
        getattr(node, "value", None), bool
    )


def _dotted(node: ast.AST) -> str:
    """``pytest.mark.skip`` as written, or "" for any other shape."""
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        inner = _dotted(node.value)
        return f"{inner}.{node.attr}" if inner else ""
    return ""


def _name(node: ast.AST) -> str | None:
    if isinstance(node, ast.Attribute):
        return node.attr
    return node.id if isinstance(node, ast.Name) else None


def polarity_of(resolve: Resolve, cuda_flags: set[str]) -> Polarity:
    return lambda test: cuda_polarity(test, resolve, cuda_flags)
