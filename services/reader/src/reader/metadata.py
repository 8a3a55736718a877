"""Page metadata (pure): title, date, site name, author, language from markup.

A lighter take on ``trafilatura.extract_metadata``: its author search scans every element
with a list of XPaths and cost as much as the extraction itself on documentation pages
(~48 ms/page, bench/reader), and htmldate's date search still cost 11-13 ms/page with
``extensive_search`` off. So authors come from meta tags and JSON-LD, the date from
publication markup (JSON-LD, meta tags, <time>), and categories/tags/licences are skipped.
"""

from __future__ import annotations

import datetime
import logging
import re
from dataclasses import dataclass
from typing import Any

from trafilatura.metadata import examine_meta, extract_meta_json, extract_sitename, extract_title

logger = logging.getLogger(__name__)

# A BCP 47-ish language tag as found in <html lang> (e.g. "en", "pt-BR", "zh_Hant").
_LANG_TAG = re.compile(r"^[A-Za-z]{2,3}(?:[-_][A-Za-z0-9]{1,8}){0,3}$")
# Publication-date markup, most specific first: meta tags used by news/CMS/scholarly pages.
_DATE_XPATH = (
    "//meta[@property='article:published_time' or @name='article:published_time'"
    " or @itemprop='datePublished' or @property='og:published_time'"
    " or @name='citation_publication_date' or @name='citation_date' or @name='DC.date.issued'"
    " or @name='dc.date.issued' or @name='DC.date' or @name='dc.date' or @name='date'"
    " or @name='pubdate' or @name='publishdate' or @name='parsely-pub-date'"
    " or @name='sailthru.date']/@content"
    "|//*[@itemprop='datePublished']/@datetime|//time[@datetime]/@datetime"
)
# "datePublished": "2021-03-04T10:00:00Z" inside JSON-LD.
_JSONLD_DATE = re.compile(r'"datePublished"\s*:\s*"([^"]{6,40})"')
# A calendar date at the start of a value: 2021-03-04, 2021/3/4 or 20210304.
_YMD = re.compile(r"^\s*(\d{4})[-/]?(\d{1,2})[-/]?(\d{1,2})")
# Dates before the web or far in the future are markup errors, not publication dates.
_MIN_YEAR = 1990


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


def _iso_date(value: str) -> str:
    match = _YMD.match(value)
    if match is None:
        return ""
    try:
        day = datetime.date(int(match[1]), int(match[2]), int(match[3]))
    except ValueError:
        return ""
    if not _MIN_YEAR <= day.year <= datetime.date.today().year + 1:
        return ""
    return day.isoformat()


def published_date(tree: Any) -> str:
    """The publication date (YYYY-MM-DD) from JSON-LD, meta tags or <time>, else ""."""
    for script in tree.xpath("//script[@type='application/ld+json']/text()"):
        for value in _JSONLD_DATE.findall(str(script)):
            if day := _iso_date(value):
                return day
    for value in tree.xpath(_DATE_XPATH):
        if day := _iso_date(str(value)):
            return day
    return ""


def page_metadata(tree: Any) -> Meta:
    """Read metadata from a parsed page."""
    meta = examine_meta(tree)
    if meta.author and " " not in meta.author:
        meta.author = None  # single tokens are usually handles or site names
    try:
        meta = extract_meta_json(tree, meta)
    except Exception:  # noqa: BLE001 -- Trafilatura's JSON-LD parser is best-effort on bad data
        logger.debug("JSON-LD metadata unreadable")
    title = meta.title or extract_title(tree) or ""
    site = (meta.sitename or extract_sitename(tree) or "").lstrip("@")
    published = published_date(tree)
    return Meta(
        title=str(title).strip(),
        published=str(published),
        site_name=str(site).strip(),
        author=str(meta.author or "").strip(),
        language=language(tree),
    )
