"""Tests that run only on CUDA: their body is correct by construction, the skip is the site.

``@pytest.mark.skipif(not torch.cuda.is_available(), reason=...)`` on a test, a module-level
``pytestmark`` of that kind, ``@unittest.skipUnless(torch.cuda.is_available(), ...)`` on a test
class, a project helper named for it (``@require_cuda``), or ``if not torch.cuda.is_available():
pytest.skip(...)`` at the start of a test: on every other target the test is skipped, so nothing
in its body runs there. The CUDA calls, ``.cuda()`` moves and ``"cuda"`` strings of the body are
no sites of their own; the skip condition is (info: the other targets lose the test, nothing
breaks), or, for a project helper, the helper's own CUDA check where it is defined.

The words that make these up are data: rules/device.toml ``[device.test_skips]``.
"""

from __future__ import annotations

import ast
from collections.abc import Callable, Mapping
from dataclasses import dataclass

from portlint.catalog import Catalog
from portlint.python.guards import Resolve, cuda_polarity

Polarity = Callable[[ast.expr], int]


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

    @classmethod
    def from_catalog(cls, catalog: Catalog) -> TestSkips:
        table = catalog.table("device").get("device", {}).get("test_skips", {})
        return cls(
            frozenset(table.get("skip_if", ())),
            frozenset(table.get("skip_unless", ())),
            frozenset(table.get("skip_now", ())),
            frozenset(table.get("requirement_words", ())),
        )

    def skips_without_cuda(
        self, decorator: ast.expr, polarity: Polarity, words: Mapping[str, str]
    ) -> bool:
        """The decorator skips the test wherever CUDA is missing."""
        if isinstance(decorator, ast.Call):
            name = _name(decorator.func)
            condition = decorator.args[0] if decorator.args else None
            if name in self.skip_if and condition is not None:
                return _true_without_cuda(condition, polarity)
            if name in self.skip_unless and condition is not None:
                return polarity(condition) == 1
            decorator = decorator.func  # ``@require_cuda()``
        return self._named_requirement(_name(decorator), words)

    def _named_requirement(self, name: str | None, words: Mapping[str, str]) -> bool:
        """``require_cuda``, ``requires_cuda``, ``cuda_only``: a name with the word ``cuda``, a
        requirement word, and no other vendor's word (``require_cuda_or_xpu`` is not one)."""
        if not name:
            return False
        parts = name.lower().split("_")
        if "cuda" not in parts or self.requirement_words.isdisjoint(parts):
            return False
        return all(words.get(part, "cuda") == "cuda" for part in parts)

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

    def skips_rest(self, statement: ast.stmt, polarity: Polarity) -> bool:
        """``if not torch.cuda.is_available(): pytest.skip("needs CUDA")`` (or
        ``self.skipTest(...)``, ``raise unittest.SkipTest(...)``): what follows in the test
        runs only on CUDA."""
        if not (isinstance(statement, ast.If) and not statement.orelse):
            return False
        return self.ends_in_skip(statement.body) and _true_without_cuda(statement.test, polarity)

    def ends_in_skip(self, body: list[ast.stmt]) -> bool:
        """The block ends by skipping the running test."""
        last = body[-1] if body else None
        if isinstance(last, ast.Raise) and last.exc is not None:
            called = last.exc.func if isinstance(last.exc, ast.Call) else last.exc
        elif isinstance(last, ast.Expr) and isinstance(last.value, ast.Call):
            called = last.value.func
        else:
            return False
        return _name(called) in self.skip_now


def _true_without_cuda(condition: ast.expr, polarity: Polarity) -> bool:
    """True wherever CUDA is missing: a negated CUDA test, or an ``or`` with one
    (``not torch.cuda.is_available() or slow``)."""
    if isinstance(condition, ast.BoolOp) and isinstance(condition.op, ast.Or):
        return any(_true_without_cuda(value, polarity) for value in condition.values)
    return polarity(condition) == -1


def _name(node: ast.AST) -> str | None:
    if isinstance(node, ast.Attribute):
        return node.attr
    return node.id if isinstance(node, ast.Name) else None


def polarity_of(resolve: Resolve, cuda_flags: set[str]) -> Polarity:
    return lambda test: cuda_polarity(test, resolve, cuda_flags)
