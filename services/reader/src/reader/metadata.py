"""Page metadata (pure): title, date, site name, author, language from markup.

A lighter take on ``trafilatura.extract_metadata``: its author search scans every element
with a list of XPaths and cost as much as the extraction itself on documentation pages
(~48 ms/page, bench/reader), so authors come from meta tags and JSON-LD only, and
categories, tags and licences are not computed at all.
"""

from __future__ import annotations

import logging
import re
from dataclasses import dataclass
from typing import Any

from htmldate import find_date
from trafilatura.metadata import examine_meta, extract_meta_json, extract_sitename, extract_title

logger = logging.getLogger(__name__)

# A BCP 47-ish language tag as found in <html lang> (e.g. "en", "pt-BR", "zh_Hant").
_LANG_TAG = re.compile(r"^[A-Za-z]{2,3}(?:[-_][A-Za-z0-9]{1,8}){0,3}$")
# Dates from markup only (meta, JSON-LD, <time>, URL): scanning the text guesses too often.
_DATE_PARAMS: dict[str, Any] = {"extensive_search": False, "original_date": True}


@dataclass(frozen=True)
class Meta:
    """Metadata of one page; empty strings when unknown."""

    title: str = ""
    published: str = ""
    site_name: str = ""
    author: str = ""
    language: str = ""


def language(tree: Any) -> str:
    """Language from <html lang>, then <meta http-equiv=content-language>, then og:locale."""
    # The HTML parser keeps XHTML's xml:lang as a plain attribute name.
    candidates = [tree.get("lang") or tree.get("xml:lang")]
    candidates += tree.xpath(
        "//meta[translate(@http-equiv,'CONTENT-LANGUAGE','content-language')="
        "'content-language']/@content|//meta[@property='og:locale']/@content"
    )
    for value in candidates:
        tag = str(value or "").strip().split(",")[0].strip()
        if _LANG_TAG.match(tag):
            return tag.replace("_", "-")
    return ""


def page_metadata(tree: Any, url: str | None) -> Meta:
    """Read metadata from a parsed page (the tree may be pruned afterwards: call it last)."""
    meta = examine_meta(tree)
    if meta.author and " " not in meta.author:
        meta.author = None  # single tokens are usually handles or site names
    try:
        meta = extract_meta_json(tree, meta)
    except Exception:  # noqa: BLE001 -- Trafilatura's JSON-LD parser is best-effort on bad data
        logger.debug("JSON-LD metadata unreadable")
    title = meta.title or extract_title(tree) or ""
    site = (meta.sitename or extract_sitename(tree) or "").lstrip("@")
    try:
        published = find_date(tree, url=url, **_DATE_PARAMS) or ""
    except Exception:  # noqa: BLE001 -- htmldate raises on odd markup; a date is optional
        published = ""
    return Meta(
        title=str(title).strip(),
        published=str(published),
        site_name=str(site).strip(),
        author=str(meta.author or "").strip(),
        language=language(tree),
    )
