"""A one-line progress display for long work, on a terminal only.

``leapp compile`` and ``leapp lint`` wrap steps that can take many seconds
(export, validation, the lint of many files) in ``progress(...)``. On a
terminal (stderr is a tty, ``TERM`` is not ``dumb``, ``CI`` is unset) a line
on stderr shows what runs, the count done so far and the seconds spent; it
appears only once the step has run ``delay`` seconds and is erased when the
step ends, so short steps print nothing. In pipes, files and CI logs it writes
nothing at all. No dependency: a daemon thread redraws the line twice a second.
This module imports neither torch nor numpy.
"""

from __future__ import annotations

import os
import sys
import threading
import time
from typing import TextIO


def enabled(stream: TextIO) -> bool:
    """Whether ``stream`` is a terminal that a progress line may be drawn on."""
    if os.environ.get("CI") or os.environ.get("TERM") == "dumb":
        return False
    isatty = getattr(stream, "isatty", None)
    try:
        return bool(isatty and isatty())
    except (ValueError, OSError):  # a closed stream
        return False


class Progress:
    """``with Progress("exporting") as p: ... p.advance()``: see the module docstring."""

    def __init__(self, label: str, total: int | None = None, *, stream: TextIO | None = None,
                 delay: float = 1.0, interval: float = 0.5) -> None:
        self.label, self.total, self.done = label, total, 0
        self.stream = stream if stream is not None else sys.stderr
        self.delay, self.interval = delay, interval
        self.active = enabled(self.stream)
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._drawn = 0  # characters of the line on screen, to erase

    def advance(self, n: int = 1) -> None:
        self.done += n

    def line(self) -> str:
        count = f" {self.done}/{self.total}" if self.total is not None else ""
        return f"  {self.label}{count} ... {time.perf_counter() - self._start:.0f} s"

    def __enter__(self) -> Progress:
        self._start = time.perf_counter()
        if self.active:
            self._thread = threading.Thread(target=self._run, name="leapp-progress", daemon=True)
            self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        if self._thread is not None:
            self._stop.set()
            self._thread.join()
            if self._drawn:
                self._write("\r" + " " * self._drawn + "\r")

    def _run(self) -> None:
        if self._stop.wait(self.delay):
            return
        while True:
            text = self.line()
            self._write("\r" + text.ljust(self._drawn))
            self._drawn = max(self._drawn, len(text))
            if self._stop.wait(self.interval):
                return

    def _write(self, text: str) -> None:
        try:
            self.stream.write(text)
            self.stream.flush()
        except (ValueError, OSError):  # the terminal went away: the work goes on without it
            self._stop.set()
