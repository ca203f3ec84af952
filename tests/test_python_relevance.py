"""portlint.python.relevance: which lines name another vendor, and which use a flow name."""

from portlint.python.relevance import VENDOR_TEXT, VENDOR_WORDS, Relevance

TEXT = """\
use_npu = is_npu_available()
HAS_XPU = True
x = compute(1)
chip = "AScend"
flag = "mpſ"
dev = "cuda"
y = devices
z = dev + 1
"""


def test_vendor_words_are_the_vendor_expressions_words():
    words = VENDOR_TEXT.pattern.removeprefix("(?i:").removesuffix(")").split("|")
    assert tuple(words) == VENDOR_WORDS


def test_lines_that_name_a_vendor_as_the_expression_finds_them():
    relevance = Relevance(TEXT)
    lines = TEXT.split("\n")
    found = [n for n in range(1, len(lines) + 1) if relevance.names_vendor(n, n)]
    assert found == [1, 2, 4, 5]
    expected = [n for n, line in enumerate(lines, 1) if VENDOR_TEXT.search(line)]
    assert found == expected
    assert relevance.names_vendor(3, 4) and not relevance.names_vendor(6, 8)
    # not ASCII: the case-insensitive expression decides (it reads the long s as an "s")
    assert "mps" not in lines[4].lower()


def test_a_flow_name_is_used_as_a_word_only():
    relevance = Relevance(TEXT)
    assert not relevance._uses_flow_name(7, 8)
    relevance.add_flow_name("dev")
    assert not relevance._uses_flow_name(7, 7)  # ``devices`` is another name
    assert relevance._uses_flow_name(8, 8) and relevance._uses_flow_name(7, 8)
    assert not relevance._uses_flow_name(1, 4)


DOCSTRINGS = '''\
def documented(device):
    """Moves the model.

    device: "cuda" or "cpu"
    """
    return device


def used(device):
    """Moves the model to "cuda"."""
    return torch.cuda.current_device()


class Options:
    """Options for "cuda" runs."""

    device: str = "cpu"
    """The device: "cuda" or "cpu"."""  # cuda, as a comment too


def shared(device):
    "cuda"; torch.cuda.synchronize()


def formatted(device):
    """on cuda {}""".format(device)


async def nested():
    def inner():
        """On cuda."""
'''


def test_a_definition_that_mentions_cuda_only_in_its_docstrings_is_skipped():
    """Strings that stand alone on their own lines in a definition's body (its docstring,
    attribute docstrings) report nothing: a definition whose only candidate lines are there is
    skipped like one without any. A string that shares its line with code, or is part of an
    expression, still counts, and so does a nested definition's docstring for the outer one
    (the walk asks the nested one for itself)."""
    import ast

    relevance = Relevance(DOCSTRINGS)
    tree = ast.parse(DOCSTRINGS)
    asked = {node.name: relevance.may_report(node) for node in tree.body}
    assert asked == {
        "documented": False,
        "used": True,
        "Options": False,
        "shared": True,
        "formatted": True,
        "nested": True,
    }
    inner = tree.body[-1].body[0]
    assert not relevance.may_report(inner)
    # the docstring statements themselves are still candidate statements when walked
    assert relevance.may_report(tree.body[0].body[0])
