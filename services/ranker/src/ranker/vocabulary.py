"""A process-wide term dictionary: surface token -> term id (pure; thread-safe).

Ranking a call's chunks needs each token's analysed term; looking tokens up here costs one
dict lookup per token, against a Counter per chunk plus a stemming pass over the call's
vocabulary when done afresh each call (~40 % of the scoring time, bench/ranker). A warm
service sees the same words again and again, so the dictionary mostly only reads.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable, Sequence

import numpy as np
import numpy.typing as npt

#: The term id every stop-word maps to.
STOP_ID = 0
# Distinct surface forms kept before the dictionary starts afresh (~100 MB at most).
MAX_FORMS = 1_000_000

IsStopword = Callable[[str], bool]
Stems = Callable[[Iterable[str]], dict[str, str]]


class Snapshot:
    """One generation of the dictionary; grows only, so ids handed out stay valid."""

    __slots__ = ("form_ids", "term_ids")

    def __init__(self) -> None:
        self.form_ids: dict[str, int] = {}
        # term -> id; id 0 stands for every stop-word ("" is never a term).
        self.term_ids: dict[str, int] = {"": STOP_ID}


class Vocabulary:
    """Maps surface tokens to term ids with the analyser's stop-words and stemmer."""

    def __init__(self, is_stopword: IsStopword, stems: Stems, max_forms: int = MAX_FORMS) -> None:
        self._is_stopword = is_stopword
        self._stems = stems
        self._max_forms = max_forms
        self._lock = threading.Lock()
        self._snapshot = Snapshot()

    def lookup(self, forms: Sequence[str]) -> tuple[Snapshot, npt.NDArray[np.intp]]:
        """Term ids of ``forms`` (learning new forms), and the snapshot they belong to."""
        snap = self._snapshot
        try:
            ids = np.fromiter(map(snap.form_ids.__getitem__, forms), np.intp, len(forms))
        except KeyError:
            snap = self._learn(forms)
            ids = np.fromiter(map(snap.form_ids.__getitem__, forms), np.intp, len(forms))
        return snap, ids

    def _learn(self, forms: Sequence[str]) -> Snapshot:
        with self._lock:
            snap = self._snapshot
            if len(snap.form_ids) > self._max_forms:
                snap = self._snapshot = Snapshot()
            missing = [f for f in set(forms) if f not in snap.form_ids]
            stems = self._stems(f for f in missing if not self._is_stopword(f))
            term_ids = snap.term_ids
            for form in missing:
                stem = stems.get(form)
                if stem is None:
                    snap.form_ids[form] = STOP_ID
                else:
                    snap.form_ids[form] = term_ids.setdefault(stem, len(term_ids))
            return snap
