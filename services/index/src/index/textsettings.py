"""What decides an index's passages and terms, as its manifest records it; pure.

The stored postings hold the terms the analyser made at commit time and the passages the
chunker cut. A query analysed otherwise (stemming or stop-words switched, a new analyser or
chunker version, another passage size) would silently miss them: BM25 degrades and nothing
says why. So the manifest records, beside ``passage_words``::

    "text": {"analyser": {"version": 2, "stemmer": "english", "stopwords":
             "lucene-en+contractions/<sha256 prefix>", "compounds": true}, "chunker": 2}

and an index whose record differs from the running settings is refused (the servicer answers
FAILED_PRECONDITION until it is rebuilt with ``quarry index``). Manifests written before
this record existed are read explicitly (:func:`recorded`):

- with an ``analysis`` string (``"v2 stem=True stopwords=True compounds=True chunker=v2"``,
  written 2026-11 until the text library): parsed into the same record; its stop-word list
  is the one named today, which has not changed since that string was introduced;
- with neither: written by analyser version 1 (no compound terms), which recorded nothing;
  always refused, since version 1 terms are not today's.
"""

from __future__ import annotations

import re
from typing import Any

from quarry_text.analyzer import STEMMER, STOPWORDS_ID, AnalyzerConfig
from quarry_text.chunking import CHUNKER_VERSION

# The legacy ``analysis`` string of a manifest (see the module doc).
_LEGACY = re.compile(
    r"v(\d+) stem=(True|False) stopwords=(True|False) compounds=(True|False) chunker=v(\d+)"
)
_UNRECORDED = "unrecorded"


def current(config: AnalyzerConfig) -> dict[str, Any]:
    """The record of an index built now with ``config`` (the manifest's ``text``)."""
    return {"analyser": config.record(), "chunker": CHUNKER_VERSION}


def recorded(manifest: dict[str, Any]) -> dict[str, Any]:
    """The record a manifest holds, old manifests included (see the module doc)."""
    text = manifest.get("text")
    if isinstance(text, dict):
        return text
    m = _LEGACY.fullmatch(str(manifest.get("analysis") or ""))
    if m is None:
        # Before any record: analyser version 1 and a chunker nobody wrote down.
        return {"analyser": {"version": 1}, "chunker": _UNRECORDED}
    version, stem, stopwords, compounds, chunker = m.groups()
    analyser = {
        "version": int(version),
        "stemmer": STEMMER if stem == "True" else "none",
        "stopwords": STOPWORDS_ID if stopwords == "True" else "none",
        "compounds": compounds == "True",
    }
    return {"analyser": analyser, "chunker": int(chunker)}


# The settings an operator changes, named in the message.
_SETTING = {"stemmer": "INDEX_STEM", "stopwords": "INDEX_STOPWORDS"}


def differences(manifest: dict[str, Any], now: dict[str, Any], passage_words: int) -> list[str]:
    """How the index a manifest describes was built otherwise than the record ``now``
    (:func:`current`) and ``passage_words`` would build it, one phrase per setting; none
    when alike."""
    built = recorded(manifest)
    out = []
    was, will = built.get("analyser") or {}, now["analyser"]
    if was.get("version") != will["version"]:
        # Another version makes other terms whatever its settings: they are not comparable.
        out.append(f"analyser version {_show(was.get('version'))} (now {will['version']})")
    else:
        for name, value in will.items():
            old = was.get(name, _UNRECORDED)
            if old != value:
                # The setting is named when it was switched (a changed list is an upgrade's).
                switched = "none" in (old, value)
                hint = f", {_SETTING[name]}" if name in _SETTING and switched else ""
                out.append(f"{name} {_show(old)} (now {_show(value)}{hint})")
    if built.get("chunker") != now["chunker"]:
        out.append(f"chunker version {_show(built.get('chunker'))} (now {now['chunker']})")
    if manifest.get("passage_words") != passage_words:
        out.append(
            f"{_show(manifest.get('passage_words'))}-word passages (now {passage_words}, "
            "INDEX_PASSAGE_WORDS)"
        )
    return out


def refusal(differences: list[str]) -> str:
    """What a search of a refused index answers (FAILED_PRECONDITION): why, and what to do."""
    return (
        f"the local-documents index was built with other text settings "
        f"({'; '.join(differences)}), so its terms no longer match the queries: rebuild it "
        "with `quarry index` (it re-reads every document)"
    )


def _show(value: object) -> str:
    if isinstance(value, bool):
        return "on" if value else "off"
    return str(value)
