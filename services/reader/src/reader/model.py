"""Domain types shared by the reader's modules (no transport, no I/O)."""

from __future__ import annotations

import enum
from dataclasses import dataclass


class Status(enum.Enum):
    """Per-URL outcome; names mirror ``quarry.v1.ReadResponse.Status``."""

    OK = "OK"
    EMPTY = "EMPTY"
    BLOCKED = "BLOCKED"
    TOO_LARGE = "TOO_LARGE"
    TIMEOUT = "TIMEOUT"
    HTTP_ERROR = "HTTP_ERROR"
    UNSUPPORTED = "UNSUPPORTED"
    NETWORK_ERROR = "NETWORK_ERROR"
    INVALID_URL = "INVALID_URL"


class Kind(enum.Enum):
    """What a body is (valued by its usual media type), from Content-Type and first bytes."""

    HTML = "text/html"
    TEXT = "text/plain"
    PDF = "application/pdf"


@dataclass(frozen=True)
class Extracted:
    """What the extractor found in one document (picklable: crosses the process pool)."""

    markdown: str
    title: str = ""
    published: str = ""
    site_name: str = ""
    language: str = ""
    author: str = ""


@dataclass(frozen=True)
class RenderInfo:
    """The rendering tier's part in one read (``reader.render``)."""

    status: str
    reason: str = ""
    ms: int = 0
    requests: int = 0
    refused: int = 0
    bytes: int = 0


@dataclass(frozen=True)
class ReadResult:
    """The outcome of one Read or Extract, before it is mapped to the proto."""

    status: Status
    url: str
    final_url: str = ""
    error: str = ""
    content_type: str = ""
    http_status: int = 0
    fetched_bytes: int = 0
    truncated: bool = False
    cached: bool = False
    extracted: Extracted | None = None
    # Which tier produced the text (fetch, pdf, render, cache) and what each step took.
    tier: str = ""
    render: RenderInfo | None = None
    fetch_ms: int = 0
    extract_ms: int = 0
