"""A progress bar on stderr for runs long enough to wonder about (rich, imported only then)."""

from __future__ import annotations

import time
from collections.abc import Iterable, Iterator
from typing import TypeVar

#: A run shorter than this shows no bar at all.
DELAY_SECONDS = 1.0

T = TypeVar("T")


def with_progress(items: Iterable[T], total: int, delay: float = DELAY_SECONDS) -> Iterator[T]:
    """``items`` unchanged; once ``delay`` seconds have passed, a bar counts them on stderr. The
    bar is removed when the run ends, so the report below it reads as without one."""
    started = time.perf_counter()
    iterator = iter(items)
    done = 0
    for item in iterator:
        done += 1
        yield item
        if time.perf_counter() - started > delay:
            break
    else:
        return
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TimeElapsedColumn

    columns = ("Checking", BarColumn(), MofNCompleteColumn(), TimeElapsedColumn())
    with Progress(*columns, console=Console(stderr=True), transient=True) as progress:
        task = progress.add_task("files", total=total, completed=done)
        for item in iterator:
            yield item
            progress.advance(task)
