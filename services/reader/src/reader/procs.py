"""The browser's processes, read from /proc (Linux): their memory, and their CPU priority.

Chromium is a tree (Playwright's driver, the browser, its zygote, renderers, GPU/utility
processes), all descendants of the reader; memory caps and the lower priority apply to all.
"""

from __future__ import annotations

import contextlib
import os
from pathlib import Path

_PROC = Path("/proc")
_PAGE = os.sysconf("SC_PAGE_SIZE") if hasattr(os, "sysconf") else 4096


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


def browser_processes(root: int) -> list[int]:
    """The Chromium processes below ``root`` (the extraction workers are descendants too)."""
    found = []
    for pid in descendants(root):
        with contextlib.suppress(OSError):
            if b"chrom" in (_PROC / str(pid) / "cmdline").read_bytes().split(b"\0", 1)[0]:
                found.append(pid)
    return found


def rss_mb(pids: list[int]) -> float:
    """Resident memory of ``pids`` together, in MiB (shared pages are counted per process)."""
    total = 0
    for pid in pids:
        with contextlib.suppress(OSError, ValueError, IndexError):
            total += int((_PROC / str(pid) / "statm").read_text().split()[1])
    return total * _PAGE / (1024 * 1024)


def lower_priority(pids: list[int], niceness: int) -> None:
    """Run ``pids`` at ``niceness`` at least: renders never take CPU from plain reads first."""
    for pid in pids:
        with contextlib.suppress(OSError):
            if os.getpriority(os.PRIO_PROCESS, pid) < niceness:
                os.setpriority(os.PRIO_PROCESS, pid, niceness)
