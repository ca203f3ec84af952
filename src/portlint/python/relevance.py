"""Which statements of a parsed file can hold a finding, so the walk can skip the rest.

A statement can only lead to a finding if one of its lines holds a candidate word (the same words
the file prefilter looks for), or if it uses a name that was assigned on such a line (``dev`` in
``x.to(dev)`` after ``dev = "cuda"``), or an import (which binds the names later lines resolve
through). Everything else is skipped whole: on a typical file that mentions CUDA a few times,
most of the tree.
"""

from __future__ import annotations

import ast
import bisect
import re
from collections.abc import Callable
from itertools import accumulate

from portlint.python.prefilter import ANCHORS
from portlint.textindex import LINE_BREAK, split_lines
from portlint.wordsearch import WordSet

#: The file prefilter's words (portlint.python.analyser), as one pattern, to find their lines.
CANDIDATE_TEXT = re.compile(
    r"cuda|nccl|cudnn|nvcc|cupy|apex|xformers|bitsandbytes|tensorrt|cudf|cuml|cugraph|nvml|NVML"
    r"|NCCL|CUBLAS|NVIDIA_|NVTE_|flash_attn|CUDA(?:_|Extension)|nvidia(?:[._-]|\s+import)|sm_\d"
    r"|cpp_extension|transformer_engine|flashinfer|sageattention|q8_kernels|fbgemm_gpu|ProfilerActivity"
    r"|GradScaler|mamba_ssm|causal_conv1d|trtexec|trtllm|inline_asm_elementwise"
    r"|CUDA[\"']"
)
#: The same words, found in one pass (``portlint.wordsearch``; its fallback expressions start
#: from the prefilter's anchors: a match starts inside its word, on the word's line), to find
#: their lines in a whole file: many times faster than ``CANDIDATE_TEXT``.
CANDIDATE_WORDS = WordSet(
    (
        *("cuda", "nccl", "cudnn", "nvcc", "cupy", "apex", "xformers", "bitsandbytes"),
        *("tensorrt", "cudf", "cuml", "cugraph", "nvml", "NVML", "NCCL", "CUBLAS"),
        *("NVIDIA_", "NVTE_"),
        *("flash_attn", "cpp_extension", "transformer_engine", "flashinfer", "ProfilerActivity"),
        *("sageattention", "q8_kernels", "fbgemm_gpu", "GradScaler", "mamba_ssm", "causal_conv1d"),
        *("trtexec", "trtllm", "inline_asm_elementwise"),
    ),
    {
        "CUDA": re.compile(r"CUDA(?:_|Extension|[\"'])"),
        "nvidia": re.compile(r"nvidia(?:[._-]|\s+import)"),
        "sm_": re.compile(r"sm_\d"),
    },
    ANCHORS,
)
#: Words of vendor checks (``use_npu = is_npu_available()``, ``HAS_XPU = True``, a test of
#: ``torch._C._get_privateuse1_backend_name()``, the backend npu and mlu register as): an assignment
#: on such a line is walked, so that a later ``if use_npu:`` is known as a vendor branch; and an
#: ``if`` chain without them has no sibling branch to look for.
VENDOR_TEXT = re.compile(
    r"(?i:npu|mlu|xpu|mps|rocm|hip|ipex|ascend|camb|intel|amd|cpu|accelerator|get_device_module"
    r"|privateuse1)"
)
#: ``VENDOR_TEXT``'s words, to look for in lower-cased ASCII text: on ASCII text the same answer,
#: several times faster than the case-insensitive expression, which has no literal to skip to.
VENDOR_WORDS = (
    *("npu", "mlu", "xpu", "mps", "rocm", "hip", "ipex", "ascend", "camb", "intel", "amd", "cpu"),
    *("accelerator", "get_device_module", "privateuse1"),
)
#: Statements that are always walked: they bind names that later lines resolve through.
ALWAYS = (ast.Import, ast.ImportFrom)
#: Statements whose body's docstrings do not count as candidate lines (``_has_code_candidate``).
DEFINITIONS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)


#: Import lines: a statement holding one (``if is_torch_available(): import torch``) binds names.
#: Found as the word, then what is before it on its line: an expression that starts at the line
#: start cannot skip ahead to a literal, and is eight times slower.
IMPORT_WORD = re.compile(r"import[ \t]")
IMPORT_LINE_START = re.compile(r"[ \t]*(?:from[ \t]+\S+[ \t]+)?")

#: Up to this many flow names, a statement's text is searched for each; above, its words are
#: looked up among the names (a file whose every function sets a device variable).
FEW_FLOW_NAMES = 8
WORD = re.compile(r"\w+")


class Relevance:
    def __init__(self, text: str, lines: list[str] | None = None) -> None:
        """``lines``: ``LINE_BREAK.split(text)``, if the caller has it already."""
        self.lines = split_lines(text) if lines is None else lines
        # prefix[n] = how many of lines 1..n hold a candidate word.
        self.prefix = _candidate_prefix(text, len(self.lines))
        self.flow_names: set[str] = set()
        self._flow_pattern: re.Pattern[str] | None = None
        #: id(stand-in) -> what parses the definition it stands for (``python.slices``), for a
        #: walk that reaches it after all: True when the stand-in is now that definition.
        self.stand_ins: dict[int, Callable[[], bool]] = {}

    def has_candidate(self, first: int, last: int) -> bool:
        last = min(last, len(self.prefix) - 1)
        return self.prefix[last] - self.prefix[max(first, 1) - 1] > 0

    def add_flow_name(self, name: str) -> None:
        if name not in self.flow_names:
            self.flow_names.add(name)
            self._flow_pattern = None

    def _uses_flow_name(self, first: int, last: int) -> bool:
        if not self.flow_names:
            return False
        text = self._text_of(first, last)
        if len(self.flow_names) > FEW_FLOW_NAMES:  # one pass over the text, not one per name
            return not self.flow_names.isdisjoint(WORD.findall(text))
        if not any(name in text for name in self.flow_names):
            return False  # the names as words need the names as text first
        if self._flow_pattern is None:
            alternatives = "|".join(sorted(map(re.escape, self.flow_names)))
            self._flow_pattern = re.compile(rf"\b(?:{alternatives})\b")
        return self._flow_pattern.search(text) is not None

    def may_report(self, statement: ast.stmt) -> bool:
        if isinstance(statement, ALWAYS):
            return True
        first = statement.lineno
        decorators = getattr(statement, "decorator_list", None)
        if decorators:
            first = min(first, *(d.lineno for d in decorators))
        last = statement.end_lineno or statement.lineno
        if self._has_code_candidate(statement, first, last) or self._uses_flow_name(first, last):
            parse = self.stand_ins.pop(id(statement), None) if self.stand_ins else None
            # a stand-in spans the definition's lines or more: ask again of the definition
            return parse is None or not parse() or self.may_report(statement)
        return isinstance(statement, ast.Assign | ast.AnnAssign) and self.names_vendor(first, first)

    def _has_code_candidate(self, statement: ast.stmt, first: int, last: int) -> bool:
        """Lines ``first``..``last`` hold a candidate word, and for a definition not only in
        the strings that stand alone in its body (its docstring, attribute docstrings), on
        lines of their own: ``device (str): "cuda" or "cpu"`` in a docstring reports nothing,
        and a definition whose only mention is there is skipped like one with none. (Its
        nested definitions are asked for themselves when the walk gets to them.)"""
        if not self.has_candidate(first, last):
            return False
        if not isinstance(statement, DEFINITIONS):
            return True
        prefix = self.prefix
        found = prefix[min(last, len(prefix) - 1)] - prefix[first - 1]
        for child in statement.body:
            if _stands_alone(child, self.lines):
                end = child.end_lineno or child.lineno
                found -= prefix[end] - prefix[child.lineno - 1]
        return found > 0

    def names_vendor(self, first: int, last: int) -> bool:
        """Lines ``first``..``last`` name another vendor (checked on demand: few lines ask)."""
        text = self._text_of(first, last)
        if text.isascii():
            lower = text.lower()
            return any(word in lower for word in VENDOR_WORDS)
        return VENDOR_TEXT.search(text) is not None

    def _text_of(self, first: int, last: int) -> str:
        """Lines ``first``..``last`` joined by line breaks: one search over them finds what a
        search of each line finds, since neither pattern matches across a line break."""
        if first == last:
            return self.lines[first - 1] if 0 < first <= len(self.lines) else ""
        return "\n".join(self.lines[first - 1 : last])


def _stands_alone(statement: ast.stmt, lines: list[str]) -> bool:
    """A string statement (``\"\"\"docstring\"\"\"``) that starts its first line and ends
    its last one (a comment may follow): those lines hold nothing else."""
    if not (
        isinstance(statement, ast.Expr)
        and isinstance(statement.value, ast.Constant)
        and isinstance(statement.value.value, str)
        and statement.end_lineno is not None
        and statement.end_col_offset is not None
        and statement.end_lineno <= len(lines)
    ):
        return False
    # Columns count UTF-8 bytes.
    before = lines[statement.lineno - 1].encode()[: statement.col_offset]
    after = lines[statement.end_lineno - 1].encode()[statement.end_col_offset :].strip()
    return not before.strip() and (not after or after.startswith(b"#"))


#: The last text indexed and its prefix counts: the parse (``slices``) and the walk of one file
#: both ask, one after the other.
_last: tuple[str, int, list[int]] | None = None


def _candidate_prefix(text: str, count: int) -> list[int]:
    """``prefix[n]``: how many of lines 1..n of ``text`` (``count`` lines) hold a candidate
    word or an import."""
    global _last
    if _last is not None and _last[0] is text and _last[1] == count:
        return _last[2]
    positions = CANDIDATE_WORDS.positions(text) + _import_lines(text)
    marks = bytearray(count + 1)  # marks[n] = 1 where line n holds one
    for line in _line_numbers(text, positions):
        if line <= count:
            marks[line] = 1
    prefix = list(accumulate(marks))
    _last = (text, count, prefix)
    return prefix


def _import_lines(text: str) -> list[int]:
    """The start of each line (after a "\\n") that is ``import x`` or ``from x import y``."""
    found = []
    for match in IMPORT_WORD.finditer(text):
        start = text.rfind("\n", 0, match.start()) + 1
        if IMPORT_LINE_START.fullmatch(text, start, match.start()):
            found.append(start)
    return found


def _line_numbers(text: str, positions: list[int]) -> set[int]:
    """The (1-based) lines of ``positions`` in ``text``."""
    if "\r" in text:  # "\r\n" or a lone "\r" ends a line too
        starts = [0] + [match.end() for match in LINE_BREAK.finditer(text)]
        return {bisect.bisect_right(starts, position) for position in positions}
    lines, line, previous = set(), 1, 0
    for position in sorted(positions):
        line += text.count("\n", previous, position)
        previous = position
        lines.add(line)
    return lines
