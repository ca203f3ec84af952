"""Sliced parsing (portlint.python.slices): where the splitter cuts a module, and that a module
parsed in slices gives the findings of a whole parse. ``benchmarks/slice_equivalence.py``
compares the two on real trees."""

import ast

import pytest

from portlint.catalog import load_catalog
from portlint.config import Settings
from portlint.model import SourceFile
from portlint.output.json_format import finding_to_json
from portlint.python import slices
from portlint.python.analyser import analyse_python
from portlint.python.backends import vendor_words
from portlint.python.relevance import Relevance
from portlint.python.slices import Slice, split
from portlint.sink import FindingList
from portlint.textindex import LINE_BREAK


def dumped(node: ast.AST) -> str:
    return ast.dump(node, include_attributes=True)


def cut(text: str) -> list[tuple]:
    return [
        (s.first, s.last, s.kind, s.name, s.end) if s.kind else (s.first, s.last)
        for s in split(LINE_BREAK.split(text))
    ]


MODULE = '''"""A docstring with code at column 0:
def not_code():
"""
import torch


@register(
    "arg",
)
@other
def f(x):
    return x

# a comment

class A(Base):
    x = 1
if __name__ == "__main__":
    f(1)
else:
    pass
'''


def test_statements_decorators_comments_and_continued_clauses():
    assert cut(MODULE) == [
        (1, 3),  # a string that holds a line at column 0 is one slice
        (4, 6),
        (7, 15, "def", "f", 12),  # decorators go with the definition; trailing comments not
        (16, 17, "class", "A", 17),
        (18, 22),  # ``else:`` continues the ``if``
    ]


def test_crlf_and_lone_cr_cut_where_lf_does():
    assert cut(MODULE.replace("\n", "\r\n")) == cut(MODULE)
    assert cut(MODULE.replace("\n", "\r")) == cut(MODULE)


def test_tabs_do_not_start_statements_and_a_form_feed_is_in_doubt():
    text = "def f():\n\tif x:\n\t\treturn 1\nasync def h(): pass\n"
    assert cut(text) == [(1, 3, "def", "f", 3), (4, 5, "async def", "h", 4)]
    # the tokenizer puts a line after a form feed at column 0: ``g`` is a statement of its own
    text = "def f():\n    pass\n\fdef g():\n    pass\nx = 1\n"
    assert cut(text) == [(1, 4), (5, 6)]


def test_brackets_continued_at_column_0_stay_in_one_slice():
    text = "x = [\n1,\n2]\ny = f('(')\ndef g():\n    pass\n"
    assert cut(text) == [(1, 3), (4, 4), (5, 7, "def", "g", 6)]
    # counting is fooled by a bracket in a string: the cut is wrong, and the slice before it
    # does not parse alone (the whole parse is taken, below)
    text = "y = f(')',\nz)\ndef g():\n    pass\n"
    assert cut(text) == [(1, 1), (2, 5)]


def test_a_backslash_continues_the_line():
    text = "y = 1 + \\\n2\ndef h(): pass\n"
    assert cut(text) == [(1, 2), (3, 4, "def", "h", 3)]


def test_triple_quotes_in_either_style_hide_column_0_code():
    text = "s = '''\ndef fake():\n    pass\n'''\nt = \"(\"\ndef real():\n    pass\n"
    assert cut(text) == [(1, 4), (5, 5), (6, 8, "def", "real", 7)]


def test_slices_in_doubt_and_other_names_are_no_definition():
    text = "def f():\n    return [\n1]\ndef g(): return '('\nclass Ü: pass\nclass B: pass # '\n\n"
    assert cut(text) == [
        (1, 3),  # a line at column 0 inside brackets: in doubt until they close
        (4, 4, "def", "g", 4),  # brackets in strings and comments do not count
        (5, 5),  # the parser normalises other names: the text does not say the name
        (6, 8, "class", "B", 6),
    ]


def test_a_decorator_with_nothing_after_it():
    assert split(["@decorator", "x = 1"]) == [Slice(1, 2)]


def test_a_comment_line_with_a_quote_stays_in_the_definition():
    text = "def f():\n    pass\n# it's\n\nx = 1\n"
    assert cut(text) == [(1, 4, "def", "f", 3), (5, 6)]


# -- parsing -------------------------------------------------------------------------------------


def parse(text: str):
    catalog = load_catalog()
    relevance = Relevance(text)
    return slices.parse(text, "m.py", relevance, vendor_words(catalog))


SLICED = """import torch
def plain(a):
    b = a + 1
    return b

@decorator
def on_gpu(x):
    return x.cuda()

class Plain:
    def method(self):
        return 1
"""


def test_definitions_without_candidate_words_are_stand_ins_on_the_same_lines():
    tree, stubs = parse(SLICED)
    assert [(type(s).__name__, s.name, s.lineno, s.end_lineno) for s in stubs] == [
        ("FunctionDef", "plain", 2, 4),
        ("ClassDef", "Plain", 10, 12),
    ]
    whole = ast.parse(SLICED)
    # every statement that was parsed is the one a whole parse gives, at the same place
    assert dumped(tree.body[0]) == dumped(whole.body[0])
    assert dumped(tree.body[2]) == dumped(whole.body[2])
    assert ast.dump(slices.whole(tree)) == ast.dump(whole)


def test_a_stand_in_filled_is_the_definition():
    tree, stubs = parse(SLICED)
    assert slices.fill(stubs[1])
    assert not slices.is_stub(stubs[1])
    whole = ast.parse(SLICED)
    assert dumped(tree.body[3]) == dumped(whole.body[3])


@pytest.mark.parametrize(
    "text",
    [
        # a cut inside brackets: the slice before it does not parse alone
        "import torch\ndef f():\n    return call(')',\nx)\ndef g(): torch.cuda.init()\n",
        # names of vendors in a class name and in a registering decorator
        "import torch\nclass NpuPlatform(Platform): pass\n",
        'import torch\n@register("n" "pu")\ndef op(): pass\n',
        'import torch\nclass A:\n    @property\n    @register(\n        "XPU",\n    )\n'
        "    def op(self): pass\n",
        # an ``if`` whose analysis reads the statements around it
        "import torch\nif not torch.cuda.is_available():\n    raise SystemExit\ndef f(): pass\n",
        "import torch\nif x is None:\n    x = 1\ndef f(): pass\n",
        # a future import that changes the grammar
        "from __future__ import barry_as_FLUFL\nimport torch\ndef f(): pass\n",
    ],
)
def test_whole_parse_where_slices_are_not_sure(text):
    try:
        tree, stubs = parse(text)
    except SyntaxError:
        with pytest.raises(SyntaxError):
            ast.parse(text)
        return
    assert stubs == []
    assert dumped(tree) == dumped(ast.parse(text))


@pytest.mark.parametrize(
    ("text", "complete"),
    [
        ("def f():\n    return g(x)  # it's (\n\n", True),
        ("def f():\n    s = \"'''\"\n    t = r'\\''\n", True),
        ("def f():\n    return f\"{d['k']}\" + f'{x!r:>{w}}'\n", True),
        # a syntax error that leaves every string and bracket closed is not looked for
        ('def f():\n    print "x"\n', True),
        # a string still open: a comment's triple quote fooled the splitter's count
        ('def f():\n    x = 1  # """\n    """Example:\n', False),
        ("def f():\n    s = 'a\\\nb'\n", True),  # a string continued by a backslash
        ("def f():\n    s = 'a\nb'\n", False),  # a string that does not close on its line
        # three quotes that do not close are no empty string and a quote, nor an escaped one
        ('def f():\n    x = 1  # """\n    s = """a"\n', False),
        ('def f():\n    s = """a \\""" ("""\n', True),
        ("def f():\n    return call(')',\n", False),  # brackets still open
        ("def f():\n    return 1 + \\\n\n", False),  # a backslash at the end
        # the quote that opened an f-string or t-string, inside a replacement field (PEP 701)
        ('def f():\n    return f"{d["k"]}"\n', False),
        ('def f():\n    return Rf"{d["k"]}"\n', False),
        ("def f():\n    return fR'{d['k']}'\n", False),
        ('def f():\n    return t"{d["k"]}"\n', False),
    ],
)
def test_a_slice_left_out_must_end_where_a_statement_can_start(text, complete):
    assert slices._complete(text) is complete


DOCSTRING = '''import torch


def f():
    x = 1  # """
    """Example:
def g():
    torch.cuda.synchronize()
"""
'''


def test_a_cut_inside_a_docstring_is_refused():
    # counting triple quotes, the splitter cuts before ``def g``, inside the docstring
    assert cut(DOCSTRING) == [(1, 3), (4, 6, "def", "f", 6), (7, 8, "def", "g", 8), (9, 10)]
    # ``f`` would be left out and ``g`` parsed, but the string in ``f`` does not close
    tree, stubs = parse(DOCSTRING)
    assert stubs == []
    assert dumped(tree) == dumped(ast.parse(DOCSTRING))
    assert findings(DOCSTRING, sliced=True) == findings(DOCSTRING, sliced=False) == []


MEMBERS = """import torch


class Model(Base):
    \"\"\"A model.\"\"\"

    size = 2

    def plain(self, x):
        return x + self.size

    @property
    def also_plain(self):
        return 1

    def to_gpu(self, x):
        return x.cuda()
"""


LEAK = """import torch

device = "cuda"


class Model:
    x = torch.zeros(2).to(device)

    def helper(self):
        device = 1
        return device

    def to_gpu(self, x):
        return x.cuda()
"""


def test_methods_without_candidate_words_are_stand_ins_in_their_class():
    tree, stubs = parse(MEMBERS)
    assert [(type(s).__name__, s.name, s.lineno, s.end_lineno, s.col_offset) for s in stubs] == [
        ("FunctionDef", "plain", 9, 10, 4),
        ("FunctionDef", "also_plain", 12, 14, 4),
    ]
    model, whole = tree.body[1], ast.parse(MEMBERS).body[1]
    assert [type(s).__name__ for s in model.body] == [
        "Expr",
        "Assign",
        "FunctionDef",
        "FunctionDef",
        "FunctionDef",
    ]
    assert model.body[2] is stubs[0] and model.body[3] is stubs[1]
    for position in (0, 1, 4):
        assert dumped(model.body[position]) == dumped(whole.body[position])
    assert slices.fill(stubs[1])
    assert dumped(model.body[3]) == dumped(whole.body[3])


@pytest.mark.parametrize(
    "header",
    [
        "class Model(Base):  # a comment",
        'class Model(Base, tag="("):',
        "class Model(  # a comment\n    Base,\n):",
        "class Model(\n    Base,  # a comment\n):",
        'class Model(\n    Base, tag="("\n):',
        "class Model(\n    Base, \\\n):",
    ],
)
def test_a_class_header_in_doubt_keeps_its_methods(header):
    text = MEMBERS.replace("class Model(Base):", header)
    _, stubs = parse(text)
    assert stubs == []


def test_a_class_header_of_several_lines_is_cut_after_its_last():
    text = MEMBERS.replace("class Model(Base):", "class Model(\n    Base,\n    Mixin[int],\n):")
    tree, stubs = parse(text)
    assert [(s.name, s.lineno, s.end_lineno) for s in stubs] == [
        ("plain", 12, 13),
        ("also_plain", 15, 17),
    ]
    model, whole = tree.body[1], ast.parse(text).body[1]
    for position in (0, 1, 4):
        assert dumped(model.body[position]) == dumped(whole.body[position])
    assert findings(text, sliced=True) == findings(text, sliced=False)


def test_a_method_the_walk_reaches_through_a_name_is_parsed_then():
    text = MEMBERS.replace("return 1", "return self.dev").replace(
        "size = 2", 'size = 2\n    dev = "cuda"'
    )
    _, stubs = parse(text)
    assert [s.name for s in stubs] == ["plain", "also_plain"]
    assert findings(text, sliced=True) == findings(text, sliced=False)


def test_a_method_left_out_does_not_change_what_a_class_level_name_resolves_to():
    _, stubs = parse(LEAK)
    assert [(s.name, s.lineno, s.col_offset) for s in stubs] == [("helper", 9, 4)]
    # ``device`` at class level is the module's "cuda": the names ``helper`` binds are its own
    for sliced in (True, False):
        found = [(f["code"], f["line"]) for f in findings(LEAK, sliced=sliced)]
        assert found == [("PRT101", 3), ("PRT102", 14)]


def test_decorator_like_lines_in_a_docstring_are_read_once():
    doc = "".join(f"    @param p{n}: 'a string'\n" for n in range(300))
    text = f'import torch\ndef f():\n    """\n{doc}    """\n'
    _, stubs = parse(text)
    assert [s.name for s in stubs] == ["f"]


def test_a_decorator_string_that_is_no_vendor_leaves_the_definition_out():
    text = (
        'import torch\n@auto_docstring(intro="""\n    Text.\n    """\n)\nclass Model(Base): pass\n'
    )
    _, stubs = parse(text)
    assert [(s.name, s.lineno, s.end_lineno) for s in stubs] == [("Model", 2, 6)]
    # the string's end at column 0 is a cut in doubt: no stand-in
    _, stubs = parse(text.replace('    """\n)', '""")'))
    assert stubs == []


# -- findings ------------------------------------------------------------------------------------


def findings(text: str, sliced: bool) -> list[dict]:
    source = SourceFile("m.py", text)
    found = FindingList()
    analyse_python(source, load_catalog(), Settings(), found, sliced=sliced)
    found = found.findings
    return [finding_to_json(f) for f in sorted(found, key=lambda f: (f.span, f.code))]


FLOW = """import torch

DEVICE = "cuda"


def helper(x):
    # no candidate word here, but DEVICE carries one
    return x.to(DEVICE)


def other(y):
    return y + 1


def main():
    torch.cuda.synchronize()
"""


def test_a_definition_the_walk_reaches_through_a_name_is_parsed_then():
    _, stubs = parse(FLOW)
    assert [s.name for s in stubs] == ["helper", "other"]
    sliced = findings(FLOW, sliced=True)
    assert sliced == findings(FLOW, sliced=False)
    assert [(f["code"], f["line"]) for f in sliced] == [
        ("PRT101", 3),
        ("PRT201", 16),
    ]


@pytest.mark.parametrize("newline", ["\r\n", "\r"])
def test_other_line_endings_give_the_same_findings(newline):
    text = (FLOW + MEMBERS.replace("import torch\n", "")).replace("\n", newline)
    _, stubs = parse(text)
    assert [s.name for s in stubs] == ["helper", "other", "plain", "also_plain"]
    sliced = findings(text, sliced=True)
    assert sliced == findings(text, sliced=False)
    assert [f["line"] for f in sliced] == [3, 16, 32]


def test_a_syntax_error_is_reported_where_the_analysis_reads():
    # in a definition that is parsed: the whole parse's PRT001, and nothing else
    text = 'import torch\n\ndef f():\n    pass\n\ndef g():\n    print "x"\n    torch.cuda.init()\n'
    sliced = findings(text, sliced=True)
    assert sliced == findings(text, sliced=False)
    assert [(f["code"], f["line"]) for f in sliced] == [("PRT001", 7)]
    # in a definition left out (no candidate word): not looked for, the rest is analysed
    text = 'import torch\n\ndef f():\n    print "x"\n\ndef g():\n    torch.cuda.init()\n'
    assert [(f["code"], f["line"]) for f in findings(text, sliced=True)] == [("PRT201", 7)]
    assert [(f["code"], f["line"]) for f in findings(text, sliced=False)] == [("PRT001", 4)]


def test_nesting_too_deep_for_the_parser_is_reported_where_the_analysis_reads():
    deep = "    return " + "+".join(["a"] * 3000) + "\n"
    text = "import torch\ndef g():\n    torch.cuda.init()\n" + deep
    sliced = findings(text, sliced=True)
    assert sliced == findings(text, sliced=False)
    assert [(f["code"], f["line"]) for f in sliced] == [("PRT001", 1)]
    text = "import torch\ndef f():\n" + deep + "def g():\n    torch.cuda.init()\n"
    assert [(f["code"], f["line"]) for f in findings(text, sliced=True)] == [("PRT201", 5)]


def test_nesting_the_parser_takes_but_the_analysis_cannot_walk_is_one_finding():
    """A sum of 800 terms parses, and is deeper than the walk can recurse: one PRT001 finding
    on line 1 that says so, not an internal error."""
    text = "import torch\nx = torch.cuda.device_count() + " + " + ".join(["1"] * 800) + "\n"
    ast.parse(text)  # Python itself takes it
    result = findings(text, sliced=True)
    assert [(f["code"], f["line"], f["message"]) for f in result] == [
        (
            "PRT001",
            1,
            "cannot analyse: nested too deeply (maximum recursion depth exceeded)",
        )
    ]


def test_import_lines_are_candidate_lines():
    # the index the slices are chosen by: an import binds names that later lines resolve
    text = (
        "import os\n"
        "  from a.b import c\n"
        "x = 1  # import y\n"
        "from importlib import reload\n"
        "importlib.reload(x)\n"
        "\timport sys as s\n"
        "print('import z')\n"
    )
    relevance = Relevance(text)
    assert [n for n in range(1, 8) if relevance.has_candidate(n, n)] == [1, 2, 4, 6]
    # lines that end in a lone carriage return: only the first starts after a line feed
    relevance = Relevance(text.replace("\n", "\r"))
    assert [n for n in range(1, 8) if relevance.has_candidate(n, n)] == [1]


REFUSED = """import torch


def plain():
    return {'t': {'a': 1}}


def other(x):
    return x + 1


class Model:
    def table(self):
        return {'t': {'b': 2}}

    def rest(self):
        return 3

    def to_gpu(self, x):
        return x.cuda()
"""


def test_a_definition_the_string_check_refuses_is_parsed_and_the_rest_left_out():
    # ``'t': {'a'`` reads as a t-string with its quote in a replacement field (PEP 701) to
    # the check, loosely: that definition is parsed, the others are still left out
    assert not slices._complete("def plain():\n    return {'t': {'a': 1}}")
    tree, stubs = parse(REFUSED)
    assert [(s.name, s.lineno) for s in stubs] == [("other", 8), ("rest", 16)]
    assert tree.portlint_text == REFUSED
    assert dumped(tree.body[1]) == dumped(ast.parse(REFUSED).body[1])
    assert findings(REFUSED, sliced=True) == findings(REFUSED, sliced=False)
