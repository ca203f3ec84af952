"""A CUDA arm that only picks a FlashAttention kernel where its ``else`` picks a portable one.

``"flash_attention_2" if self.device.startswith("cuda") and use_fa2 else "sdpa"``, or::

    if device == "cuda":
        try:
            import flash_attn
            attn_implementation = "flash_attention_2"
        except ImportError:
            attn_implementation = "sdpa"
    else:
        attn_implementation = "sdpa"

The device test decides only which attention kernel a model loads: FlashAttention's where the
flash-attn package is built (NVIDIA and ROCm), the one PyTorch runs on every device elsewhere.
Every other target already gets what it should, so the test is correct by design and no target
is listed for it. The names come from rules/device.toml ``[device.attention_implementations]``.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING

from portlint.python.context import is_log_statement
from portlint.python.guards import Branch
from portlint.python.tree import walk

if TYPE_CHECKING:
    from portlint.catalog import Catalog

#: What an attention name becomes when two arms are compared.
PLACEHOLDER = "<attention>"


@dataclass(frozen=True)
class AttentionNames:
    #: FlashAttention's kernels (``flash_attention_2``)
    flash: frozenset[str]
    #: a string constant of any listed kernel, as ``ast.dump`` writes it
    constant: re.Pattern[str]

    @classmethod
    def from_catalog(cls, catalog: Catalog) -> AttentionNames:
        table = catalog.table("device").get("device", {}).get("attention_implementations", {})
        flash = frozenset(table.get("flash", ()))
        names = sorted(flash | frozenset(table.get("portable", ())))
        alternatives = "|".join(re.escape(repr(name)) for name in names) or "(?!)"
        return cls(flash, re.compile(rf"Constant\(value=(?:{alternatives})\)"))

    def only_picks_kernel(self, branch: Branch, fallback: Branch | None) -> bool:
        """The arm names a FlashAttention kernel, and does what ``fallback`` does once every
        attention name is the same placeholder."""
        if fallback is None or not any(
            isinstance(node, ast.Constant) and node.value in self.flash
            for statement in branch.body
            for node in walk(statement)
        ):
            return False
        mine = self._effects(branch.body)
        return bool(mine) and mine == self._effects(fallback.body)

    def _effects(self, statements: list[ast.AST]) -> list[str]:
        """The statements as text with the attention names made alike; imports and log lines
        left out, and a ``try`` read as its body, ``else`` and ``finally`` (its handler is the
        fallback CUDA takes when flash-attn is missing)."""
        effects = []
        for statement in statements:
            if isinstance(statement, ast.Try):
                effects += self._effects([*statement.body, *statement.orelse, *statement.finalbody])
            elif not isinstance(statement, ast.Import | ast.ImportFrom) and not is_log_statement(
                statement
            ):
                effects.append(
                    self.constant.sub(f"Constant(value={PLACEHOLDER!r})", ast.dump(statement))
                )
        return effects
