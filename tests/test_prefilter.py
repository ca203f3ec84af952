"""The text prefilter decides which files are parsed at all: it must pass every file a Python rule
can flag, and should pass little else, because parsing is most of portlint's run time."""

from __future__ import annotations

import random
import re

import pytest

from portlint.catalog import load_catalog
from portlint.cxx.analyser import is_candidate as cxx_candidate
from portlint.python.prefilter import is_candidate
from portlint.wordsearch import WordSet, holds_any, word_searches

CATALOG = load_catalog()
PYTHON_EXAMPLES = [
    rule
    for rule in sorted(CATALOG.rules.values(), key=lambda r: r.code)
    # PRT001 is about files that do not parse; PRT003 (unused suppressions) is found from the
    # text alone, in files the prefilter turns away too.
    if rule.example and rule.example_suffix == ".py" and rule.code not in ("PRT001", "PRT003")
]


def catalog_shapes() -> list[str]:
    """Each name in rules/ written the way a rule finds it in code."""
    environment, packages = CATALOG.table("environment"), CATALOG.table("packages")
    shapes = [f'os.environ["{name}"] = "0"' for name in environment.get("env", {})]
    shapes += [f'subprocess.run(["{tool}", "-q"])' for tool in environment.get("tool", {})]
    for module in packages.get("package", {}):
        shapes.append(f"import {module}")
        shapes.append(f"from {module} import thing")
        parent, _, child = module.rpartition(".")
        if parent:
            shapes.append(f"from {parent} import {child}")
    return shapes


@pytest.mark.parametrize("rule", PYTHON_EXAMPLES, ids=lambda r: r.code)
def test_rule_example_passes_the_prefilter(rule):
    assert is_candidate(rule.example)


@pytest.mark.parametrize("code", catalog_shapes())
def test_catalog_name_passes_the_prefilter(code):
    assert is_candidate(code)


@pytest.mark.parametrize(
    "code",
    [
        "if is_flash_attn_2_available():\n    pass\n",
        'MODEL = "nvidia/mit-b0"  # modalities: image\n',
        '"""Runs faster on CUDA GPUs."""\n',
        "def validate(modality):\n    return modality\n",
    ],
)
def test_unrelated_mentions_do_not_pass(code):
    assert not is_candidate(code)


@pytest.mark.parametrize(
    "code",
    [
        'ok = "sm_90" in arch_list\n',
        'from torch.utils.cpp_extension import load\nm = load("m", sources=["k.cu"])\n',
    ],
)
def test_rules_without_a_cuda_word_still_pass_the_prefilter(code):
    assert is_candidate(code)


def test_names_that_only_look_alike_do_not_pass():
    assert not is_candidate("sm_scale = 0.5\nmodalities = ['text']\nis_flash_attn_available()\n")


# The C++ prefilter: plain substrings, plus a few names that count only at the start of a word.


@pytest.mark.parametrize(
    "code",
    [
        "CUresult status = cuInit(0);",
        "int x = cuMemAlloc(&p, n);",
        "if (CU_SUCCESS) {}",
        "texture<float, 1> tex;",
        "surface <void, 2> s;",
        "float v = tex2D(t, x, y);",
        "surf1Dwrite(v, s, x);",
        '#include "kernels.cuh"',
        "__global__ void k() {}",
        "if (lane < warpSize) {}",
        "auto r = cublasCreate(&h);",
        "#include <thrust/sort.h>",
        "namespace cg = cooperative_groups;",
        "k<<<grid, block>>>();",
    ],
)
def test_cxx_sites_pass_the_prefilter(code):
    assert cxx_candidate(code)


@pytest.mark.parametrize(
    "code",
    [
        "int accumulate(int curValue);",  # cu + lower case
        "int secuRity = 0;",  # cu inside a word
        "MY_CUSTOM = 1;",  # CU inside a word
        "int context2D = 0;",  # tex inside a word
        "std::vector<int> texture_ids;",  # texture, not texture<...>
        '#include "header.cuhx"',
        "int main() { return 0; }",
    ],
)
def test_plain_cxx_does_not_pass(code):
    assert not cxx_candidate(code)


def test_grouped_word_searches_match_exactly_what_plain_searches_match():
    words = ("cuda", "cudnn", "cupy", "cub::", "channel.h", "warp", "warpSize", "a+b")
    contexts = {
        "sm_": re.compile(r"sm_\d"),
        "cu": re.compile(r"cu[A-Z](?<!\wcu[A-Z])"),
        ".cuh": re.compile(r"\.cuh(?!\w)"),  # does not start with its text unescaped
    }
    texts = [f"x = {word}\n" for word in words]
    texts += [f"x = {word[:-1]}\n" for word in words] + [word[1:] for word in words]
    texts += ["sm_8", "sm_x", "cuInit(0)", "accuInit", "a.cuh", "a.cuhx", "channelXh", "aab"]
    texts += ["warpsize", "cub:", "CUDA", "", "m_8", "u", "pda", "ub::", "+b"]
    # each word from its first character, or from an anchor inside it (the look-behind
    # checks the characters before): the same answer on every text
    for anchors in ("", "u", "a", "pb:+", "m_hpr"):
        searches = word_searches(words, contexts, anchors)
        for text in texts:
            plain = any(word in text for word in words) or any(
                pattern.search(text) for pattern in contexts.values()
            )
            assert holds_any(text, searches) == plain, (anchors, text)
    assert len(word_searches(words, contexts, "a")) < len(word_searches(words, contexts))


def test_word_set_finds_exactly_what_plain_searches_find():
    """One pass of the automaton, contexts checked at their matches: the same answer, and the
    same lines, as searching for each word and pattern on its own. Texts where a word starts
    inside a context that does not hold (``flash_attnvcc``: ``flash_attn`` is reported and
    ``nvcc`` starts inside it), and lone surrogates, which the automaton cannot take."""
    words = ("cuda", "cudnn", "nvcc", "warp", "warpSize", "apex", "xformers", "cub::")
    contexts = {
        "flash_attn": re.compile(r"flash_attn(?!\w)(?<!\wflash_attn)"),
        "sm_": re.compile(r"sm_\d"),
        "cu": re.compile(r"cu[A-Z](?<!\wcu[A-Z])"),
        ".cuh": re.compile(r"\.cuh(?!\w)"),
    }
    found = WordSet(words, contexts, "u")

    def plain(text: str) -> bool:
        return any(word in text for word in words) or any(
            pattern.search(text) for pattern in contexts.values()
        )

    pieces = [*words, *contexts, "flash_attnvcc", "sm_x", "sm_9", "cuInit", "accuInit", "a.cuhx"]
    pieces += ["flash_attn_", "xflash_attn", "warpsiz", "cu", "apexformers", "\udcff", "é", " "]
    randomly = random.Random(7)
    texts = ["", "flash_attnvcc", "sm_apex", "flash_attnvc", "x\udcffcuda", "é cudnn", "cuInit"]
    texts += ["".join(randomly.choices(pieces, k=randomly.randint(1, 6))) for _ in range(3000)]
    for text in texts:
        assert found.holds_any(text) == plain(text), text
    for _ in range(300):
        lines = ["".join(randomly.choices(pieces, k=randomly.randint(0, 4))) for _ in range(6)]
        text = "\n".join(lines)
        expected = {number for number, line in enumerate(lines, 1) if plain(line)}
        assert {text.count("\n", 0, at) + 1 for at in found.positions(text)} == expected, text


def test_the_prefilter_searches_from_its_anchors():
    from portlint.python.prefilter import ANCHORS, CANDIDATE_CONTEXTS, CANDIDATE_WORDS, WORDS

    assert len(WORDS.searches) == len(ANCHORS)
    assert all(search.pattern.startswith(tuple(ANCHORS)) for search in WORDS.searches)
    shapes = ("x = CUDAExtension(", "sm_90", "import flash_attn", "import marlin", "import mii")
    shapes += ("from causal_conv1d import causal_conv1d_fn",)
    for word in (*CANDIDATE_WORDS, *shapes):
        assert is_candidate(f"# {word}\n") and is_candidate(word), word
    nears = (
        "flash_attn_func",
        "CUDA graphs",
        "nvidia smi",
        "sm_x",
        "cud",
        "CUBLA",
        "marlin_utils",
        "mii_config",
        "semiinfinite",
        "def causal_conv1d_ref(x):",
    )
    for near in nears:
        assert not is_candidate(near), near
    assert set(CANDIDATE_CONTEXTS) <= {
        *("flash_attn", "CUDA", "nvidia", "sm_", "cpp_extension", "marlin", "mii"),
        "causal_conv1d",
    }
