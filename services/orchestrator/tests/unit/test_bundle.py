"""The run recorder stays within its cap and survives a damaged record; bundles drop every
secret the server holds and every credential-looking value, wherever it hides."""

from __future__ import annotations

import pytest
from orchestrator.config import Settings
from orchestrator.core.exports.bundle import REDACTED, Scrubber, secrets_of
from orchestrator.core.exports.proxies import recording
from orchestrator.core.exports.recorder import Recorder, decode_entries

from services.orchestrator.tests.unit.harness import harness


def test_the_recorder_stops_at_its_cap_and_counts_what_it_dropped() -> None:
    rec = Recorder(2000)
    for i in range(50):
        rec.add("read", url=f"https://example.org/{i}", text="x" * 100)
    assert 0 < len(rec.entries) < 50
    assert rec.dropped == 50 - len(rec.entries)
    assert rec.size <= 2000
    again = Recorder.decode(rec.encode(), 2000)
    assert again.entries == rec.entries
    assert again.dropped == rec.dropped
    head = decode_entries(rec.encode())[0]
    assert head == {"dropped": rec.dropped, "max_bytes": 2000}


def test_page_texts_give_way_so_the_model_outputs_still_fit() -> None:
    rec = Recorder(20_000)
    for i in range(40):
        rec.add("read", url=f"https://example.org/{i}", sha256="0" * 64, text="page " * 400)
    prompt = [{"role": "user", "content": "section prompt " * 2000}]
    rec.add("llm.stream", messages=prompt, output="The report section [1].")
    last = rec.entries[-1]
    assert last["kind"] == "llm.stream"
    assert last["output"] == "The report section [1]."
    assert last["omitted"] == ["messages"]  # the prompt did not fit; its hash did
    assert len(last["messages_sha256"]) == 64
    reads = [e for e in rec.entries if e["kind"] == "read"]
    assert reads[0]["text"]
    assert "text" not in reads[-1]
    assert reads[-1]["omitted"] == ["text"]
    assert rec.size <= 20_000


def test_a_damaged_record_starts_afresh_instead_of_failing_the_run() -> None:
    assert Recorder.decode("not base64 at all!", 1000).entries == []
    with pytest.raises(ValueError, match="not a run record"):
        decode_entries("aGVsbG8=")  # base64, but not a compressed record


async def test_recording_off_leaves_the_collaborators_alone() -> None:
    async with harness() as h:
        llm = object()
        assert recording(h.deps, llm, Recorder(0)) == (h.deps, llm)  # type: ignore[arg-type]
        wrapped, _ = recording(h.deps, llm, Recorder(1000))  # type: ignore[arg-type]
        assert wrapped.reader is not h.deps.reader
        page = await wrapped.reader.read("https://example.org/x", timeout=1)
    assert page.status


def test_secrets_of_the_settings_are_every_key_and_token() -> None:
    settings = Settings(
        llm_api_key="sk-llm-0123456789",
        brave_api_key="brave-0123456789",
        api_tokens="alice:alice-token-0123,bob-token-4567",
    )
    found = secrets_of(settings)
    for secret in ("sk-llm-0123456789", "brave-0123456789", "bob-token-4567"):
        assert any(secret in s for s in found), secret
    assert "llm_max_tokens" not in found


def test_the_scrubber_removes_secrets_from_keys_values_urls_and_headers() -> None:
    scrub = Scrubber(["sk-llm-0123456789"])
    dirty = {
        "prompt sk-llm-0123456789": ["key sk-llm-0123456789 here"],
        "url": "https://x.example/p?id=3&api_key=AKIA123456&sig=abcdef#frag",
        "header": "Authorization: Bearer abcdefghijklmnop",
        "n": 3,
    }
    clean = scrub(dirty)
    text = repr(clean)
    for leaked in ("sk-llm-0123456789", "AKIA123456", "abcdef#", "abcdefghijklmnop"):
        assert leaked not in text, leaked
    assert clean["url"] == f"https://x.example/p?id=3&api_key={REDACTED}&sig={REDACTED}#frag"
    assert clean["n"] == 3
