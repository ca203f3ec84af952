"""What every C++ check sees of one file, and how it reports.

Checks find candidate text with a regular expression over the file's UTF-8 bytes and confirm it
with the syntax tree (``node_at``): a regex pass costs little on files where nothing matches, and
the tree says whether a hit is code, a comment or a string, and which construct it belongs to.
Positions are tree-sitter byte offsets until ``span`` turns them into portlint's character columns.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

from tree_sitter import Node, Tree

from portlint.catalog import Catalog
from portlint.cxx.preprocessor import NO_BRANCHES, Branches, in_regions
from portlint.fix import join_fixes
from portlint.model import (
    PORTABLE,
    Advice,
    Applicability,
    Edit,
    Finding,
    Fix,
    Severity,
    Span,
    says_all,
)
from portlint.sink import FindingSink
from portlint.textindex import LineIndex

#: Leaf node types whose text is not code.
NOT_CODE = frozenset(
    {
        "comment",
        "string_literal",
        "string_content",
        "raw_string_literal",
        "raw_string_content",
        "raw_string_delimiter",
        "char_literal",
        "character",
        "escape_sequence",
        "system_lib_string",
        "concatenated_string",
    }
)
FUNCTION_KINDS = frozenset({"function_definition", "lambda_expression"})
#: Nodes a name's search for the call it is an argument of does not go past.
STATEMENT_ENDS = frozenset(
    {
        "expression_statement",
        "declaration",
        "compound_statement",
        "preproc_def",
        "lambda_expression",
    }
)
DEVICE_QUALIFIERS = frozenset({"__global__", "__device__"})


@dataclass
class Unit:
    path: str
    suffix: str
    data: bytes
    tree: Tree
    index: LineIndex
    catalog: Catalog
    guarded: list[tuple[int, int]]
    #: Where ``report`` puts the file's findings (the engine's).
    sink: FindingSink
    #: Targets the file's folder already answers for (``backend_targets``): none of their sites.
    covered: frozenset[str] = frozenset()
    #: PyTorch's build compiles the file, as its own includes show (``cxx.includes``).
    torch_built: bool = False
    #: What the preprocessor leaves out (``preprocessor.Branches``).
    branches: Branches = NO_BRANCHES
    _reported: set[tuple[str, int, int]] = field(default_factory=set)
    #: The findings made so far, in order, until ``flush`` hands them to ``sink``; by (rule,
    #: line, symbol, message), the index of the one that stands for that name on that line.
    _pending: list[Finding] = field(default_factory=list)
    _on_line: dict[tuple[str, int, str, str], int] = field(default_factory=dict)
    #: By (start, end) bytes, the index in ``_pending`` of a name's finding (a call's callee).
    _at: dict[tuple[int, int], int] = field(default_factory=dict)
    _per_line_rules: frozenset[str] | None = None
    _line_starts: list[int] | None = None
    _folded: bytes | None = None
    _facts: dict[str, object] = field(default_factory=dict)

    # -- the tree ----------------------------------------------------------------------------

    def node_at(self, start: int, end: int) -> Node:
        return self.tree.root_node.descendant_for_byte_range(start, end)

    def code_node(self, start: int, end: int) -> Node | None:
        """The node for the token at ``start:end``, or None when the token is in a comment or a
        string, or is only part of a longer token."""
        node = self.node_at(start, end)
        if node.type in NOT_CODE or _inside_not_code(node):
            return None
        # A leaf that covers more than the token: the hit is text inside it. preproc_arg holds a
        # macro body as raw text, which is code; any other such leaf is not a token of its own.
        covers_more = (node.start_byte, node.end_byte) != (start, end)
        if node.child_count == 0 and covers_more and node.type != "preproc_arg":
            return None
        return node

    def finditer(self, pattern: re.Pattern[bytes]):
        return pattern.finditer(self.data)

    def contains(self, *literals: bytes) -> bool:
        """Whether any of ``literals`` occurs in the file: a substring search is far cheaper
        than a regex scan, so each check first asks for the text it cannot do without."""
        return any(literal in self.data for literal in literals)

    def contains_folded(self, *literals: bytes) -> bool:
        """``contains`` ignoring ASCII case (``literals`` in lower case)."""
        if self._folded is None:
            self._folded = self.data.lower()
        return any(literal in self._folded for literal in literals)

    def file_fact(self, name: str, compute: Callable[[bytes], object]) -> object:
        """What ``compute`` reads in the whole file's text, once per file (a part's unit asks
        the file's: ``parts.PartUnit``)."""
        if name not in self._facts:
            self._facts[name] = compute(self.data)
        return self._facts[name]

    def file_line(self, line: int) -> int | None:
        """The file's line number of the unit's ``line`` (a part's unit maps its own lines to
        the file's, and has none for the context lines it borrows: ``parts.PartUnit``)."""
        return line

    def text(self, node: Node) -> str:
        return self.data[node.start_byte : node.end_byte].decode("utf-8", "surrogateescape")

    @staticmethod
    def in_error(node: Node) -> bool:
        current: Node | None = node
        while current is not None:
            if current.type == "ERROR" or current.is_missing:
                return True
            current = current.parent
        return False

    @staticmethod
    def enclosing_function(node: Node) -> Node | None:
        current = node.parent
        while current is not None and current.type not in FUNCTION_KINDS:
            current = current.parent
        return current

    def in_device_code(self, node: Node) -> bool:
        """Inside a ``__global__`` or ``__device__`` function (``__host__ __device__`` too)."""
        function = self.enclosing_function(node)
        return function is not None and is_device_function(function)

    # -- positions ---------------------------------------------------------------------------

    def point(self, offset: int) -> tuple[int, int]:
        """(1-based line, character column) of a byte offset."""
        if self._line_starts is None:
            self._line_starts = [0, *(m.end() for m in re.finditer(b"\n", self.data))]
        row = bisect.bisect_right(self._line_starts, offset) - 1
        line = row + 1
        return line, self.index.char_column(line, offset - self._line_starts[row])

    def span(self, start: int, end: int) -> Span:
        return Span(*self.point(start), *self.point(end))

    # -- reporting ---------------------------------------------------------------------------

    def report(
        self,
        code: str,
        start: int,
        end: int,
        message: str,
        targets: Mapping[str, Advice] | None = None,
        replacement: str | None = None,
        node: Node | None = None,
        severity: Severity | None = None,
    ) -> None:
        """A finding at bytes ``start:end``. ``replacement`` makes a rocm-only rename fix, dropped
        when ``node`` sits in a region tree-sitter could not parse."""
        key = (code, start, end)
        if key in self._reported:
            return
        self._reported.add(key)
        span = self.span(start, end)
        if in_regions(span.line, self.guarded) or self.is_inactive(span.line):
            return
        rule = self.catalog.rules[code]
        chosen = dict(targets if targets is not None else rule.targets)
        covered = self.covered | ({"rocm"} if self.is_hip_skipped(span.line) else set())
        for target in covered & chosen.keys():
            chosen[target] = PORTABLE
        if "rocm" in covered:
            replacement = None  # the rename is for ROCm, which does not compile the line
        if chosen and all(advice.portable for advice in chosen.values()):
            return
        fix = None
        if replacement is not None and not (node is not None and self.in_error(node)):
            edit = Edit(span, replacement)
            fix = Fix(Applicability.UNSAFE, (edit,), f"Replace with `{replacement}`", "rocm")
        symbol = self.index.text(span.line, span.column, span.end_line, span.end_column)
        finding = rule.finding(self.path, span, message, symbol, chosen, severity, fix)
        if code not in self._one_per_line():
            self._pending.append(finding)
            return
        key_on_line = (code, span.line, symbol, message)
        first = self._on_line.get(key_on_line)
        if first is None:
            # ``cudaMemcpy(d, h, n, cudaMemcpyHostToDevice)``: an argument of a call whose
            # callee is reported is that call's site, one statement to port
            site = self._callee_site(node)
            if site is not None and _stands_for(self._pending[site], finding):
                first = site
        if first is None:
            self._on_line[key_on_line] = len(self._pending)
            self._at[(start, end)] = len(self._pending)
            self._pending.append(finding)
            return
        # ``cudaStream_t s = static_cast<cudaStream_t>(p);``, ``typedef cub::BlockLoad<T, N,
        # cub::BLOCK_LOAD_DIRECT> Load;``: the same name again on a line is one site, one edit
        # of the line; its finding stands for both, with both renames as its fix. Where the two
        # fixes cannot be one, both findings stay: ``--fix`` edits what check mode reports.
        twin = self._pending[first]
        if twin.fix is None and finding.fix is None:
            return
        joined = join_fixes(twin.fix, fix)
        if joined is None:
            self._pending.append(finding)
        else:
            self._pending[first] = twin._replace(fix=joined)

    def _callee_site(self, node: Node | None) -> int | None:
        """The index in ``_pending`` of the finding of the callee of the call ``node`` is an
        argument of, on the same line, or None. Only the innermost call counts
        (``CHECK(cudaMemcpy(..., cudaMemcpyDeviceToHost))``: ``cudaMemcpy``)."""
        if node is None or not self._at:
            return None
        child, current = node, node.parent
        while current is not None and current.type != "call_expression":
            if current.type in STATEMENT_ENDS:
                return None
            child, current = current, current.parent
        if current is None or child.type != "argument_list":
            return None
        callee = current.child_by_field_name("function")
        if callee is None or callee.start_point[0] != node.start_point[0]:
            return None
        return self._at.get((callee.start_byte, callee.end_byte))

    def _one_per_line(self) -> frozenset[str]:
        """The rules whose findings on one line are one per name (rules/cxx.toml
        ``[api_sites] one_per_line``)."""
        if self._per_line_rules is None:
            table = self.catalog.table("cxx").get("api_sites", {})
            self._per_line_rules = frozenset(table.get("one_per_line", ()))
        return self._per_line_rules

    def flush(self) -> None:
        """Hand the findings made so far to ``sink``, in the order they were made."""
        for finding in self._pending:
            self.sink.emit(finding)
        self._pending.clear()
        self._on_line.clear()
        self._at.clear()

    def is_inactive(self, line: int) -> bool:
        """Whether no compiler sees the line (``preprocessor.Branches``)."""
        return in_regions(line, self.branches.inactive)

    def is_hip_skipped(self, line: int) -> bool:
        """Whether hip-clang does not compile the line (``preprocessor.Branches``)."""
        return in_regions(line, self.branches.hip_skipped)


def is_device_function(function: Node) -> bool:
    return any(child.type in DEVICE_QUALIFIERS for child in function.children)


def _inside_not_code(node: Node) -> bool:
    parent = node.parent
    return parent is not None and parent.type in NOT_CODE


def _stands_for(call: Finding, argument: Finding) -> bool:
    """The finding of a call can stand for that of a name among its arguments: it says all the
    argument's does (targets, as severe), and the argument's own says nothing more: it has a
    rename to join to the call's (``report`` keeps both where the two cannot be one fix), or it
    has none and names no counterpart of its own (a manual port's hint such as cuDNN's
    ``CUDNN_DATA_FLOAT`` to ``miopenFloat`` stays a finding of its own)."""
    if not says_all(call, argument):
        return False
    if call.fix is not None and argument.fix is not None:
        return True
    return argument.fix is None and all(
        advice.replacement is None for advice in argument.targets.values() if not advice.portable
    )
