"""Finding whether a text holds any of many words, fast: the prefilters run this on every file.

``word in text`` for each word scans the whole text once per word. One regular expression over
all the words is slower still: its alternatives start with many different characters, so the
engine tries them all at every position. What is fast is a regular expression that starts with a
literal: the engine skips ahead to that text. So the words are grouped by their first character,
and each group becomes one expression that starts with the group's common prefix
(``cu(?:da|dnn|py)``). On the transformers source this halves the Python prefilter's time.

Each expression is still one pass over the text, however rare its first character. A word can
also be searched from a letter inside it, with a look-behind for the letters before it
(``anchors``): a few such letters, each inside many words, make fewer expressions. The Python
prefilter's forty words and contexts take eight passes so, against sixteen from their first
characters, and a third less time.

Faster still is one pass for every word at once: ``WordSet`` runs an Aho-Corasick automaton
(``ahocorasick_rs``, SIMD-accelerated) over the text and checks each context at the match, several
times faster than the expressions on real trees. The expressions stay as its exact fallback for the
rare text the automaton cannot answer alone (see ``WordSet``).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping

import ahocorasick_rs


def word_searches(
    words: Iterable[str],
    contexts: Mapping[str, re.Pattern[str]] | None = None,
    anchors: str = "",
) -> tuple[re.Pattern[str], ...]:
    """Expressions, any of which matching means the text holds one of ``words`` or matches one
    of the ``contexts`` (word -> pattern that starts with that word, as literal text).

    ``anchors``: characters to start the search of a word from, in order of preference. A word
    that holds one is searched from the first of them it holds, and a look-behind checks the
    letters before it (``tensorrt`` as ``n(?:sorrt(?<=tensorrt)|...)``); the others from their
    first character. Every search is one pass over the text, however rare its first character,
    so a few anchors that each start many words make fewer passes."""
    # first character of the expression -> (the word from that character on, what to check
    # after it: the look-behind for the letters before, then what follows the word)
    groups: dict[str, list[tuple[str, str]]] = {}
    alone: list[re.Pattern[str]] = []
    entries = [(word, "") for word in words]
    for word, pattern in (contexts or {}).items():
        if word and pattern.pattern.startswith(word) and re.escape(word) == word:
            entries.append((word, pattern.pattern[len(word) :]))
        else:
            alone.append(pattern)
    for word, tail in entries:
        start = next((word.index(a) for a in anchors if a in word), 0)
        behind = f"(?<={re.escape(word)})" if start else ""
        groups.setdefault(word[start], []).append((word[start:], behind + tail))
    searches = []
    for members in groups.values():
        prefix = _common_prefix([text for text, _ in members])
        rests = "|".join(re.escape(text[len(prefix) :]) + tail for text, tail in members)
        searches.append(re.compile(f"{re.escape(prefix)}(?:{rests})"))
    return (*searches, *alone)


def _common_prefix(words: list[str]) -> str:
    """The characters every word starts with (the first and last in order share the fewest)."""
    first, last = min(words), max(words)
    length = 0
    while length < len(first) and first[length] == last[length]:
        length += 1
    return first[:length]


def holds_any(text: str, searches: tuple[re.Pattern[str], ...]) -> bool:
    return any(search.search(text) is not None for search in searches)


class WordSet:
    """Words and contexts (word -> pattern that starts with that word) to find in texts: what
    ``word_searches`` finds, in one pass over the text.

    The automaton runs over the text's UTF-8 bytes (lone surrogates, from C++ files decoded with
    ``surrogateescape``, pass as their own bytes): asked for a ``str``, the library would map
    every byte to its character first, which costs more than the search and eight bytes of
    memory per byte of text. The words are ASCII, so a match starts on a character; where the
    text is not ASCII, a context's character position is counted from the previous match.

    The automaton reports matches leftmost first and without overlaps, so an occurrence that
    starts inside a reported match is not reported. That matters only where the reported match
    is a context that does not hold (``flash_attn`` followed by a letter, as in
    ``flash_attnvcc``): then the words that could start inside it are checked there, and if one
    does, the text is searched with the expressions instead."""

    def __init__(
        self,
        words: Iterable[str],
        contexts: Mapping[str, re.Pattern[str]] | None = None,
        anchors: str = "",
    ) -> None:
        words, contexts = tuple(words), dict(contexts or {})
        self.searches = word_searches(words, contexts, anchors)
        patterns = [*words, *contexts]
        if not all(pattern.isascii() for pattern in patterns):
            raise ValueError("WordSet takes ASCII words only")
        self._contexts = {len(words) + i: pattern for i, pattern in enumerate(contexts.values())}
        self._overlaps = {index: _overlaps(patterns[index], patterns) for index in self._contexts}
        self._automaton = ahocorasick_rs.BytesAhoCorasick(
            [pattern.encode() for pattern in patterns],
            matchkind=ahocorasick_rs.MATCHKIND_LEFTMOST_FIRST,
        )

    def holds_any(self, text: str) -> bool:
        """Does ``text`` hold one of the words, or match one of the contexts?"""
        return bool(self.positions(text, first=True))

    def positions(self, text: str, first: bool = False) -> list[int]:
        """Where words and contexts start in ``text``: at least one on every line that holds
        one (a match never spans lines, except a context's own pattern). ``first``: stop at the
        first."""
        data = text.encode("utf-8", "surrogatepass")
        ascii = text.isascii()
        found = []
        counted = characters = 0  # characters in data[:counted]
        for index, start, _ in self._automaton.find_matches_as_indexes(data):
            position = start
            if not ascii:
                characters += len(data[counted:start].decode("utf-8", "surrogatepass"))
                counted, position = start, characters
            context = self._contexts.get(index)
            if context is not None and not context.match(text, position):
                if any(text.startswith(w, position + at) for at, w in self._overlaps[index]):
                    return self._searched(text, first)
                continue
            found.append(position)
            if first:
                break
        return found

    def _searched(self, text: str, first: bool) -> list[int]:
        if first:
            return [0] if holds_any(text, self.searches) else []
        return sorted(match.start() for search in self.searches for match in search.finditer(text))


def _overlaps(reported: str, patterns: list[str]) -> tuple[tuple[int, str], ...]:
    """Where (offset into ``reported``) each of ``patterns`` could start inside a match of
    ``reported`` and so go unreported: where the two agree on the text they share."""
    return tuple(
        (at, other)
        for at in range(len(reported))
        for other in patterns
        if (at, other) != (0, reported)
        and (reported[at:].startswith(other) or other.startswith(reported[at:]))
    )
