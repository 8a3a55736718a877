"""The browser's processes, read from /proc (Linux): their memory, and their CPU priority.

Chromium is a tree (Playwright's driver, the browser, its zygote, renderers, GPU/utility
processes), all descendants of the reader; memory caps and the lower priority apply to all.
"""

from __future__ import annotations

import contextlib
import os
from pathlib import Path

_PROC = Path("/proc")


def descendants(root: int) -> list[int]:
    """Every live process below ``root`` (not ``root`` itself)."""
    parents: dict[int, list[int]] = {}
    for entry in _PROC.iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:  # it exited while we looked
            continue
        # "pid (comm) state ppid ...": comm may hold spaces and parentheses.
        ppid = int(stat.rsplit(")", 1)[1].split()[1])
        parents.setdefault(ppid, []).append(int(entry.name))
    found: list[int] = []
    todo = [root]
    while todo:
        for child in parents.get(todo.pop(), []):
            found.append(child)
            todo.append(child)
    return found


def find_marked(marker: bytes) -> int | None:
    """The process whose command line holds ``marker`` (a browser launched with it)."""
    for entry in _PROC.iterdir():
        if entry.name.isdigit():
            with contextlib.suppress(OSError):
                if marker in (entry / "cmdline").read_bytes():
                    return int(entry.name)
    return None


def tree(root: int) -> list[int]:
    """``root`` and every process below it."""
    return [root, *descendants(root)]


def pss_mb(pids: list[int]) -> float:
    """Proportional set size of ``pids`` together, in MiB: shared pages are split between the
    processes sharing them, so a multi-process browser is not counted several times over."""
    total_kb = 0
    for pid in pids:
        with contextlib.suppress(OSError, ValueError, IndexError):
            for line in (_PROC / str(pid) / "smaps_rollup").read_text().splitlines():
                if line.startswith("Pss:"):
                    total_kb += int(line.split()[1])
                    break
    return total_kb / 1024


def lower_priority(pids: list[int], niceness: int) -> None:
    """Run ``pids`` at ``niceness`` at least: renders never take CPU from plain reads first."""
    for pid in pids:
        with contextlib.suppress(OSError):
            if os.getpriority(os.PRIO_PROCESS, pid) < niceness:
                os.setpriority(os.PRIO_PROCESS, pid, niceness)
