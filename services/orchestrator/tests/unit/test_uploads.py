"""Upload names and bytes checked before anything is kept, and an upload folder that would
mix users' files with a shared folder refused at start."""

from __future__ import annotations

import pytest
from orchestrator.adapters.corpus.documents import owner_folder
from orchestrator.adapters.corpus.uploads import (
    BadFileName,
    UnsupportedUpload,
    safe_name,
    sniff,
)
from orchestrator.config import Settings
from pydantic import ValidationError


@pytest.mark.parametrize(
    "name",
    ["../x.md", "a/b.md", "a\\b.md", "..", ".", "", " ", ".env.md", "a\x00.md", "x\u202e.md"],
)
def test_names_with_paths_hidden_or_control_characters_are_refused(name: str) -> None:
    with pytest.raises(BadFileName):
        safe_name(name)


def test_names_are_normalised() -> None:
    assert safe_name("  Cafe\u0301 notes.MD ") == "Café notes.MD"
    with pytest.raises(BadFileName):
        safe_name("a" * 300 + ".md")
    with pytest.raises(UnsupportedUpload):
        safe_name("tool.exe")


@pytest.mark.parametrize(
    ("name", "head"),
    [
        ("a.txt", b"PK\x03\x04rest"),
        ("a.md", b"\x1f\x8b\x08\x00"),
        ("a.pdf", b"<html>not a pdf"),
        ("a.txt", b"text\x00binary"),
        ("a.html", b"\xff\xfe\xfa\xfb not utf-8 at all"),
    ],
)
def test_bytes_that_are_not_what_the_name_says_are_refused(name: str, head: bytes) -> None:
    with pytest.raises(UnsupportedUpload):
        sniff(name, head)


def test_documents_pass_the_sniff() -> None:
    sniff("a.pdf", b"%PDF-1.7\n")
    sniff("a.md", "# Café\n".encode())
    sniff("a.txt", "é".encode()[:1])  # a character cut at the end of the sample


def test_owner_folders_are_plain_names() -> None:
    assert owner_folder("alice") == "alice"
    assert owner_folder("token:ab12") == "token-ab12"


@pytest.mark.parametrize(
    ("corpus", "upload"), [("/srv/docs", "/srv/docs/uploads"), ("/srv/docs/shared", "/srv/docs")]
)
def test_an_upload_folder_nested_with_a_corpus_root_is_refused(corpus: str, upload: str) -> None:
    with pytest.raises(ValidationError, match="must not contain one another"):
        Settings(corpus_dir=corpus, upload_dir=upload)
    Settings(corpus_dir=corpus, upload_dir="/var/quarry/uploads")
