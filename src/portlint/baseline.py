"""``--baseline FILE``: hide the findings a legacy codebase already has; ``--update-baseline``
records them.

Entries are keyed by rule, path (relative to the repository root) and a hash of the normalised
source line plus its occurrence (see ``fingerprint``), never by line number: code added or
removed elsewhere in a file does not revive old findings. An updated baseline drops the entries
of linted files that no longer occur, and of files that no longer exist.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from portlint.fingerprint import Key
from portlint.model import Finding

FORMAT_VERSION = 1


class BaselineError(Exception):
    """The baseline file is missing or malformed; the message is one line."""


@dataclass(frozen=True)
class Update:
    written: int
    added: int
    removed: int


def load_baseline(path: Path) -> set[Key]:
    return set(load_entries(path))


def load_entries(path: Path) -> dict[Key, str]:
    """Baseline key -> the symbol it was recorded for (shown to people reading the file)."""
    try:
        document = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise BaselineError(
            f"{path}: baseline not found; create it with --update-baseline"
        ) from None
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as error:
        raise BaselineError(f"{path}: not a portlint baseline: {error}") from None
    if not isinstance(document, dict) or document.get("version") != FORMAT_VERSION:
        raise BaselineError(f"{path}: not a portlint baseline (version {FORMAT_VERSION})")
    try:
        return {
            Key(e["code"], e["path"], e["line_hash"], int(e["occurrence"])): e.get("symbol", "")
            for e in document["entries"]
        }
    except (KeyError, TypeError, ValueError) as error:
        raise BaselineError(f"{path}: malformed baseline entry ({error})") from None


def hide_baselined(keyed: Iterable[tuple[Finding, Key]], baseline: set[Key]) -> list[Finding]:
    return [finding for finding, key in keyed if key not in baseline]


def update_baseline(
    path: Path, keyed: list[tuple[Finding, Key]], linted: set[str], root: Path
) -> Update:
    """Write the current findings of the ``linted`` paths; keep other files' entries."""
    previous = load_entries(path) if path.exists() else {}
    symbols = {
        k: s for k, s in previous.items() if k.path not in linted and (root / k.path).exists()
    }
    symbols.update((key, finding.symbol) for finding, key in keyed)
    current = set(symbols)
    entries = [
        {
            "code": key.code,
            "path": key.path,
            "line_hash": key.line_hash,
            "occurrence": key.occurrence,
            "symbol": symbols[key],
        }
        for key in sorted(current)
    ]
    document = {"version": FORMAT_VERSION, "tool": "portlint", "entries": entries}
    try:
        path.write_text(json.dumps(document, indent=2, ensure_ascii=False) + "\n", "utf-8")
    except OSError as error:
        raise BaselineError(f"{path}: cannot write: {error.strerror}") from None
    return Update(len(current), len(current - set(previous)), len(set(previous) - current))
