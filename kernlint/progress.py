"""A progress bar for the long parts of ``kernlint check`` (the IR phase's compilations, the
confirming runs), as ``kernlint eval`` has: drawn with rich on stderr, only when stdout is a
terminal (never in pipes, CI logs or editors), and cleared when the run ends."""

from __future__ import annotations

import sys
from contextlib import contextmanager
from typing import Callable, Iterator


def wanted(quiet: bool) -> bool:
    return not quiet and sys.stdout.isatty() and sys.stderr.isatty()


@contextmanager
def bar(label: str, enabled: bool) -> Iterator[Callable[[int, int], None] | None]:
    """``with bar("IR phase", enabled) as update:`` gives ``update(done, total)``, or None when
    the bar is off (or rich is not installed: it comes with the ``ir`` extra)."""
    if not enabled:
        yield None
        return
    try:
        from rich.console import Console
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, SpinnerColumn, TextColumn, TimeElapsedColumn
    except ImportError:
        yield None
        return
    progress = Progress(SpinnerColumn(), TextColumn(f"[bold]{label}"), BarColumn(), MofNCompleteColumn(),
                        TimeElapsedColumn(), console=Console(stderr=True), transient=True)
    task = progress.add_task(label, total=None)

    def update(done: int, total: int) -> None:
        progress.update(task, completed=done, total=total)

    with progress:
        yield update
