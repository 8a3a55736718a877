"""A small web of real-looking pages for end-to-end tests, served on 127.0.0.1
(by tests/offline/web.py).

The facts are invented, so an answer can only have come from these pages.
"""

from __future__ import annotations

import html
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

from tests.offline.web import DRIP_TICK_S, LocalWeb, serve

__all__ = ["DRIP_TICK_S", "PAGES", "FixtureWeb", "Page", "render", "serve_web"]


@dataclass(frozen=True)
class Page:
    """One article: path, title and paragraphs."""

    path: str
    title: str
    paragraphs: tuple[str, ...]

    @property
    def text(self) -> str:
        """The main text, as a search snippet source."""
        return " ".join(self.paragraphs)


PAGES = (
    Page(
        "/lighthouses/zephyrine.html",
        "The Zephyrine Lighthouse",
        (
            "The Zephyrine Lighthouse stands on the basalt headland of Karvik Point. "
            "It was designed by the engineer Mara Olsen and first lit in 1874.",
            "Its lantern burned colza oil until 1911, when an acetylene lamp replaced it. "
            "The tower is 31 metres tall and its light reaches 19 nautical miles.",
            "Keepers lived in two cottages at the foot of the tower until automation in 1969.",
        ),
    ),
    Page(
        "/lighthouses/karvik-history.html",
        "A short history of Karvik Point",
        (
            "Karvik Point was a fishing settlement long before the lighthouse was built. "
            "Shipwrecks on the Karvik reef led the harbour board to commission a light in 1869.",
            "Mara Olsen won the design competition with a tapering stone tower; construction "
            "took four years because stone had to be shipped from the Dunmore quarry.",
        ),
    ),
    Page(
        "/food/saltbread.html",
        "Karvik saltbread recipe",
        (
            "Karvik saltbread is a dense rye loaf baked with seawater instead of salt. "
            "Bakers proof the dough for 14 hours in a cool cellar.",
            "The loaf is baked at 210 degrees Celsius for 55 minutes and brushed with "
            "buttermilk while still hot.",
        ),
    ),
    Page(
        "/science/glowmoss.html",
        "Glowmoss: the luminous moss of the northern fjords",
        (
            "Glowmoss (Bryum lucens) emits a faint green light at night. The glow comes from "
            "a luciferin that the moss produces only when air temperature is below 8 degrees.",
            "Colonies grow on wet north-facing rock and can live for more than 200 years.",
        ),
    ),
    Page(
        "/science/glowmoss-research.html",
        "Research notes on glowmoss luminescence",
        (
            "In 2019 a team at the Tromsvik field station measured glowmoss brightness across "
            "a full winter. Brightness peaked in January at about 0.2 lux.",
            "The team found that the glow attracts springtails, which spread the moss spores.",
        ),
    ),
    Page(
        "/transport/ferry.html",
        "The Karvik-Holm ferry timetable",
        (
            "The ferry between Karvik and Holm island sails four times a day in summer and "
            "twice a day from October to April. The crossing takes 40 minutes.",
            "Bicycles travel free; cars must be booked at least one day in advance.",
        ),
    ),
)

_NAV = "".join(f'<li><a href="{p.path}">{html.escape(p.title)}</a></li>' for p in PAGES)


def render(page: Page) -> bytes:
    """A page with navigation, a cookie banner and a footer around the article."""
    body = "".join(f"<p>{html.escape(par)}</p>" for par in page.paragraphs)
    doc = f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>{html.escape(page.title)} | Karvik Notes</title>
<meta property="og:site_name" content="Karvik Notes"></head>
<body><header><nav><ul>{_NAV}</ul></nav></header>
<div class="cookie">We use cookies to remember your settings. <button>Accept</button></div>
<main><article><h1>{html.escape(page.title)}</h1>{body}</article></main>
<aside><h2>Related</h2><ul>{_NAV}</ul></aside>
<footer><p>Copyright 2026 Karvik Notes. All rights reserved.</p></footer></body></html>"""
    return doc.encode("utf-8")


FixtureWeb = LocalWeb
_BODIES = {p.path: render(p) for p in PAGES}


@contextmanager
def serve_web() -> Iterator[FixtureWeb]:
    """Serve :data:`PAGES` on 127.0.0.1 (a free port) for the duration of the block."""
    with serve(_BODIES.get) as web:
        yield web
