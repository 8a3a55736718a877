"""A self-contained English corpus for the ranker benchmark: the stdlib's own docstrings.

Docstrings are real technical English (the shape of documentation pages a question about
code retrieves), present on every Python install, and stable for a given Python version.
"""

from __future__ import annotations

import importlib
import inspect
import random
import re

from quarry_text.chunking import Page
from ranker.model import SearchResult

_MODULES = [
    "argparse",
    "asyncio.events",
    "asyncio.tasks",
    "asyncio.streams",
    "collections",
    "configparser",
    "csv",
    "datetime",
    "decimal",
    "difflib",
    "email.message",
    "email.utils",
    "enum",
    "functools",
    "http.client",
    "http.cookiejar",
    "http.server",
    "imaplib",
    "inspect",
    "io",
    "ipaddress",
    "json",
    "logging",
    "logging.handlers",
    "mailbox",
    "multiprocessing.pool",
    "optparse",
    "os",
    "pathlib",
    "pickle",
    "pydoc",
    "random",
    "re",
    "shutil",
    "smtplib",
    "socket",
    "sqlite3",
    "ssl",
    "statistics",
    "string",
    "subprocess",
    "tarfile",
    "tempfile",
    "textwrap",
    "threading",
    "tkinter",
    "turtle",
    "typing",
    "unittest.case",
    "unittest.mock",
    "urllib.parse",
    "urllib.request",
    "uuid",
    "xml.dom.minidom",
    "xml.etree.ElementTree",
    "zipfile",
]

# Questions a user might ask about these modules (some words inflected on purpose).
QUERIES = (
    "how to parse a date string with a timezone",
    "read a csv file into dictionaries",
    "create a temporary directory that is removed automatically",
    "send an email with an attachment over smtp",
    "run a subprocess and capture its output with a timeout",
    "parse command line arguments with subcommands",
    "mock a method in a unit test",
    "extract files from a zip archive",
    "log messages to a rotating file handler",
    "serialize objects to json with custom encoders",
)


def paragraphs() -> list[str]:
    """Every docstring paragraph of the modules above (functions, classes, methods)."""
    out: list[str] = []
    for name in _MODULES:
        try:
            module = importlib.import_module(name)
        except ImportError:  # e.g. tkinter is missing on slim images
            continue
        objects = [module, *(v for _, v in inspect.getmembers(module))]
        for obj in objects:
            doc = inspect.getdoc(obj) if callable(obj) or obj is module else None
            if not doc:
                continue
            for para in re.split(r"\n\s*\n", doc):
                text = " ".join(para.split())
                if len(text.split()) >= 8:
                    out.append(text)
    return list(dict.fromkeys(out))


def pages(n_pages: int, words_per_page: int, seed: int = 11) -> list[Page]:
    """``n_pages`` markdown pages of about ``words_per_page`` words, with headings."""
    rng = random.Random(seed)
    paras = paragraphs()
    out = []
    for p in range(n_pages):
        blocks: list[str] = []
        count = 0
        while count < words_per_page:
            if rng.random() < 0.15:
                blocks.append("## " + " ".join(rng.choice(paras).split()[:5]))
            para = rng.choice(paras)
            blocks.append(para)
            count += len(para.split())
        out.append(Page(f"https://docs{p}.example.org/page/{p}", f"Page {p}", "\n\n".join(blocks)))
    return out


def results(n: int, seed: int = 5) -> list[SearchResult]:
    """``n`` search results: title from a docstring's first words, snippet ~30 words."""
    rng = random.Random(seed)
    paras = paragraphs()
    out = []
    for i in range(1, n + 1):
        words = rng.choice(paras).split()
        out.append(
            SearchResult(
                url=f"https://site{i}.example.org/doc/{i}?utm_source=bench",
                title=" ".join(words[:8]),
                snippet=" ".join(rng.choice(paras).split()[:30]),
                engine_rank=i,
                engines=("bench",),
            )
        )
    return out
