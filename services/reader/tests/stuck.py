"""Extraction jobs that are hostile by construction: they never finish on their own.

A "hostile" page that is merely slow is hostile only on a slow machine (a 20,000-line PDF took
~9 s on a loaded box and 1.5 s on a quiet one). These jobs block until their worker process is
killed, so a test of a time limit passes or fails the same on any machine. The pool runs jobs
in spawned processes: these must be top-level functions of an importable module.
"""

from __future__ import annotations

import threading
import time
from pathlib import Path

from reader.extract import Job, extract
from reader.model import Extracted

# A body containing this never finishes extracting (see extract_or_block).
STUCK_MARKER = b"%%quarry-test: extraction blocks until the worker is killed%%"


def extract_or_block(job: Job) -> Extracted:
    """The reader's own extraction, except that a body with STUCK_MARKER blocks forever."""
    if STUCK_MARKER in job.body:
        threading.Event().wait()  # nothing sets it: only the pool's kill ends this job
    return extract(job)


def stuck_pdf(pdf: bytes) -> bytes:
    """``pdf`` with the marker appended after %%EOF (still sniffed and typed as a PDF)."""
    return pdf + b"\n" + STUCK_MARKER + b"\n"


def wait_for_file(path: str) -> None:
    """A job that returns once ``path`` exists: the test decides when it ends."""
    while not Path(path).exists():
        time.sleep(0.01)
