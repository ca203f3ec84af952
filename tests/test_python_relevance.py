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
