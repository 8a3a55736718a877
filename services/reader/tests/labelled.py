"""A labelled main-text extraction set: generated pages with their expected main text.

No public benchmark (CleanEval, ScrapingHub AEB, WCXB) can be fetched offline, so the quality
gate runs on pages generated here: realistic boilerplate (navigation, cookie banners, share
bars, sidebars with teasers, related-article lists, reader comments, footers) around a main
text whose tokens are the label. Scoring is the bag-of-tokens F1 used by the AEB benchmark.
"""

from __future__ import annotations

import html
import random
import re
from collections import Counter
from dataclasses import dataclass

_WORDS = [
    "harbour",
    "river",
    "valley",
    "council",
    "engineer",
    "granite",
    "railway",
    "station",
    "winter",
    "summer",
    "market",
    "village",
    "museum",
    "archive",
    "record",
    "storm",
    "bridge",
    "tunnel",
    "quarry",
    "shore",
    "tide",
    "fleet",
    "fisherman",
    "festival",
    "library",
    "school",
    "teacher",
    "student",
    "research",
    "report",
    "survey",
    "measure",
    "water",
    "level",
    "energy",
    "wind",
    "solar",
    "panel",
    "battery",
    "grid",
    "network",
    "cable",
    "signal",
    "tower",
    "antenna",
    "farmer",
    "field",
    "harvest",
    "grain",
    "orchard",
    "apple",
    "cider",
    "bakery",
    "bread",
    "flour",
    "mill",
    "wheel",
    "stone",
    "timber",
    "roof",
    "wall",
    "window",
    "garden",
    "path",
    "forest",
    "trail",
    "mountain",
    "glacier",
    "lake",
    "island",
    "ferry",
    "captain",
    "crew",
    "cargo",
    "trade",
    "route",
    "merchant",
    "ledger",
    "price",
    "budget",
    "plan",
    "project",
    "permit",
    "committee",
    "vote",
    "decision",
    "history",
    "century",
    "decade",
    "season",
    "morning",
    "evening",
    "journey",
    "visitor",
    "guide",
    "map",
    "compass",
    "north",
    "south",
    "east",
    "west",
    "coast",
    "cliff",
    "lighthouse",
    "keeper",
    "lamp",
    "oil",
    "candle",
    "craft",
    "workshop",
    "tool",
    "hammer",
    "method",
    "result",
    "sample",
    "analysis",
    "data",
    "model",
    "theory",
    "evidence",
    "question",
    "answer",
    "problem",
    "source",
]
_VERBS = [
    "built",
    "carried",
    "rebuilt",
    "measured",
    "recorded",
    "opened",
    "closed",
    "crossed",
    "protected",
    "repaired",
    "studied",
    "described",
    "reported",
    "improved",
    "reduced",
    "increased",
    "moved",
    "shared",
    "planned",
    "approved",
    "funded",
]
_NAMES = ["Veldmark", "Orsund", "Kallby", "Tessin", "Marrow", "Lindqvist", "Harrow", "Quell"]


def _sentence(rng: random.Random) -> str:
    words = [rng.choice(_WORDS) for _ in range(rng.randint(7, 20))]
    words.insert(rng.randint(1, len(words) - 1), rng.choice(_VERBS))
    if rng.random() < 0.5:
        words.insert(rng.randint(0, len(words)), rng.choice(_NAMES))
    if rng.random() < 0.3:
        words.insert(rng.randint(0, len(words)), str(rng.randint(1800, 2030)))
    return " ".join(words).capitalize() + "."


def _paragraph(rng: random.Random, sentences: tuple[int, int] = (2, 6)) -> str:
    return " ".join(_sentence(rng) for _ in range(rng.randint(*sentences)))


def _teaser(rng: random.Random) -> str:
    return " ".join(rng.choice(_WORDS) for _ in range(rng.randint(4, 8))).title()


@dataclass(frozen=True)
class Labelled:
    """One page and the text a perfect extractor would return."""

    name: str
    html: str
    expected: str


def _main(rng: random.Random) -> tuple[str, str]:
    """The main content as HTML and as plain text (the label)."""
    title = _teaser(rng)
    parts_html = [f"<h1>{title}</h1>"]
    parts_text = [title]
    for _ in range(rng.randint(3, 10)):
        roll = rng.random()
        if roll < 0.12:
            head = _teaser(rng)
            parts_html.append(f"<h2>{head}</h2>")
            parts_text.append(head)
        elif roll < 0.22:
            items = [_sentence(rng) for _ in range(rng.randint(3, 6))]
            parts_html.append("<ul>" + "".join(f"<li>{i}</li>" for i in items) + "</ul>")
            parts_text.extend(items)
        elif roll < 0.28:
            rows = [[rng.choice(_WORDS), str(rng.randint(1, 999))] for _ in range(4)]
            cells = "".join(f"<tr><td>{a}</td><td>{b}</td></tr>" for a, b in rows)
            parts_html.append(f"<table><tr><th>Item</th><th>Count</th></tr>{cells}</table>")
            parts_text.append("Item Count " + " ".join(f"{a} {b}" for a, b in rows))
        elif roll < 0.33:
            quote = _sentence(rng)
            parts_html.append(f"<blockquote><p>{quote}</p></blockquote>")
            parts_text.append(quote)
        else:
            para = _paragraph(rng)
            parts_html.append(f"<p>{para}</p>")
            parts_text.append(para)
    return "\n".join(parts_html), "\n".join(parts_text)


def _links(rng: random.Random, n: int) -> str:
    return "".join(f"<li><a href='/{rng.choice(_WORDS)}'>{_teaser(rng)}</a></li>" for _ in range(n))


def _boilerplate(rng: random.Random) -> dict[str, str]:
    site = rng.choice(_NAMES) + " " + rng.choice(["Gazette", "Journal", "Notes", "Weekly"])
    comments = "".join(
        f"<div class='comment'><p class='author'>{rng.choice(_NAMES)} says:</p>"
        f"<p>{_paragraph(rng, (1, 3))}</p></div>"
        for _ in range(rng.randint(0, 5))
    )
    return {
        "site": site,
        "header": f"<header><div class='logo'>{site}</div><nav><ul>{_links(rng, 7)}</ul></nav>"
        "</header>",
        "cookie": "<div id='cookie-banner' class='cookie-consent'>We use cookies to improve your "
        "experience. By continuing you accept our cookie policy. <button>Accept</button></div>",
        "crumbs": f"<div class='breadcrumb'><a href='/'>Home</a> / <a href='/n'>{_teaser(rng)}"
        "</a></div>",
        "byline": f"<div class='byline'>By {rng.choice(_NAMES)} on "
        f"{rng.randint(1, 28)} March {rng.randint(2001, 2025)}</div>",
        "share": "<div class='share'>Share this: <a>Facebook</a> <a>Twitter</a> <a>Email</a></div>",
        "sidebar": f"<aside class='sidebar'><h3>Popular posts</h3><ul>{_links(rng, 6)}</ul>"
        f"<h3>Newsletter</h3><p>Sign up for our weekly newsletter.</p></aside>",
        "related": "<section class='related'><h3>Related articles</h3><ul>"
        + "".join(
            f"<li><a href='/r'>{_teaser(rng)}</a><p>{_sentence(rng)}</p></li>" for _ in range(3)
        )
        + "</ul></section>",
        "comments": f"<section id='comments'><h3>Comments</h3>{comments}</section>"
        if comments
        else "",
        "footer": f"<footer><ul>{_links(rng, 5)}</ul><p>Copyright {site}. All rights "
        "reserved.</p></footer>",
    }


# Main-content wrappers seen in the wild: semantic tags, CMS classes and anonymous div soup.
_WRAPPERS = [
    ("<article class='post'>", "</article>"),
    ("<main><div class='entry-content'>", "</div></main>"),
    ("<div id='content'><div class='post-body'>", "</div></div>"),
    ("<div class='c-7 x2'><div class='r1'>", "</div></div>"),
    ("<section class='story'>", "</section>"),
]


def make_page(seed: int) -> Labelled:
    """A deterministic labelled page for ``seed``."""
    rng = random.Random(seed)
    main_html, main_text = _main(rng)
    b = _boilerplate(rng)
    start, end = rng.choice(_WRAPPERS)
    body = (
        b["cookie"] * (rng.random() < 0.5)
        + b["header"]
        + b["crumbs"] * (rng.random() < 0.5)
        + "<div class='layout'>"
        + start
        + b["byline"] * (rng.random() < 0.6)
        + main_html
        + b["share"] * (rng.random() < 0.5)
        + end
        + b["sidebar"] * (rng.random() < 0.7)
        + "</div>"
        + b["related"] * (rng.random() < 0.6)
        + b["comments"]
        + b["footer"]
    )
    page = (
        f"<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'>"
        f"<title>{html.escape(main_text.splitlines()[0])} - {b['site']}</title></head>"
        f"<body>{body}</body></html>"
    )
    return Labelled(f"generated-{seed}", page, main_text)


def corpus(n: int, first_seed: int = 0) -> list[Labelled]:
    """``n`` labelled pages from consecutive seeds."""
    return [make_page(seed) for seed in range(first_seed, first_seed + n)]


# Word characters: markdown syntax (#, *, |, -) never counts as a token.
_TOKEN = re.compile(r"\w+")
# A markdown backslash escape (e.g. fix\_sentence\_endings): the character is the text.
_MD_ESCAPE = re.compile(r"\\([\\`*_{}\[\]()#+\-.!|~>])")


def tokens(text: str) -> Counter[str]:
    """Lower-cased word tokens as a multiset (markdown escapes removed first)."""
    return Counter(_TOKEN.findall(_MD_ESCAPE.sub(r"\1", text).lower()))


def token_f1(predicted: str, expected: str) -> tuple[float, float, float]:
    """Precision, recall and F1 over token multisets (the AEB benchmark's metric)."""
    got, want = tokens(predicted), tokens(expected)
    overlap = sum((got & want).values())
    if not got or not want:
        return (1.0, 1.0, 1.0) if got == want else (0.0, 0.0, 0.0)
    precision, recall = overlap / sum(got.values()), overlap / sum(want.values())
    f1 = 0.0 if overlap == 0 else 2 * precision * recall / (precision + recall)
    return precision, recall, f1
