"""Chunking: paragraph packing, long paragraphs, headings, url/title, near-duplicates."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st
from quarry_text.chunking import Page, chunk_page, chunk_pages, count_words, dedupe_chunks


def _words(tag: str, n: int) -> str:
    return " ".join(f"{tag}{i}" for i in range(n))


def _page(markdown: str) -> Page:
    return Page("https://ex.org/p", "The Title", markdown)


def test_paragraphs_are_packed_and_never_cut() -> None:
    paras = [_words("a", 30), _words("b", 30), _words("c", 30), _words("d", 30)]
    chunks = chunk_page(_page("\n\n".join(paras)), chunk_words=70)
    assert [c.text for c in chunks] == [
        f"{paras[0]}\n\n{paras[1]}",
        f"{paras[2]}\n\n{paras[3]}",
    ]
    assert [c.index for c in chunks] == [0, 1]


def test_blank_lines_with_spaces_separate_paragraphs() -> None:
    chunks = chunk_page(_page(f"{_words('a', 10)}\n  \t\n\n{_words('b', 10)}"), chunk_words=10)
    assert [c.text for c in chunks] == [_words("a", 10), _words("b", 10)]


def test_long_paragraph_splits_at_sentences_then_words() -> None:
    sentences = [f"{_words(f's{i}x', 9)}." for i in range(6)]  # 9 words each
    long_sentence = _words("w", 25)
    markdown = " ".join(sentences) + " " + long_sentence
    chunks = chunk_page(_page(markdown), chunk_words=20)
    texts = [c.text for c in chunks]
    # Two whole sentences per chunk while they fit; the 25-word sentence is cut at words.
    assert texts[:3] == [" ".join(sentences[i : i + 2]) for i in (0, 2, 4)]
    assert texts[3:] == [_words("w", 20), " ".join(f"w{i}" for i in range(20, 25))]
    assert all(len(t.split()) <= 20 for t in texts)


def test_headings_stay_with_the_text_they_introduce() -> None:
    body = _words("a", 15)
    markdown = f"{_words('intro', 15)}\n\n## Setup\n\n### Debian\n\n{body}\n\n# Trailing"
    chunks = chunk_page(_page(markdown), chunk_words=20)
    assert chunks[0].text == _words("intro", 15)
    assert chunks[1].text.startswith(f"## Setup\n\n### Debian\n\n{body}")
    assert all(not c.text.endswith(("Setup", "Debian")) for c in chunks)


def test_heading_before_a_long_paragraph_joins_its_first_piece() -> None:
    markdown = "# Install\n\n" + " ".join(f"{_words(f's{i}x', 9)}." for i in range(4))
    chunks = chunk_page(_page(markdown), chunk_words=20)
    assert chunks[0].text.startswith("# Install\n\ns0x0")
    assert all(len(c.text.split()) <= 20 for c in chunks)


def test_every_chunk_keeps_url_and_title() -> None:
    pages = [Page(f"https://ex.org/{i}", f"Title {i}", _words("z", 100)) for i in range(3)]
    chunks = chunk_pages(pages, chunk_words=30)
    assert len(chunks) == 12
    for c in chunks:
        i = c.url.rsplit("/", 1)[1]
        assert c.title == f"Title {i}"


def test_empty_markdown_has_no_chunks() -> None:
    assert chunk_page(_page(""), 50) == []
    assert chunk_page(_page("\n\n \n"), 50) == []


def test_near_duplicates_across_pages_are_kept_once() -> None:
    shared = "Breaking: the **river** rose 3 metres overnight, officials said."
    pages = [
        Page("https://a.org/", "A", f"{shared}\n\nOnly on A."),
        Page(
            "https://b.org/", "B", "Breaking - the river rose 3 metres\novernight; Officials said!"
        ),
    ]
    chunks = chunk_pages(pages, chunk_words=10)
    kept = [chunks[i] for i in dedupe_chunks(chunks)]
    assert [(c.url, c.text) for c in kept] == [
        ("https://a.org/", shared),
        ("https://a.org/", "Only on A."),
    ]


paragraph = st.lists(
    st.sampled_from(["word", "Ünïcode", "数据", "end.", "Q?", "## Head", "-", "x", "a-b-c"]),
    min_size=1,
    max_size=60,
).map(" ".join)


@settings(max_examples=80, deadline=None)
@given(st.lists(paragraph, max_size=8), st.integers(16, 80))
def test_chunks_respect_the_limit_and_keep_every_word(paras: list[str], limit: int) -> None:
    markdown = "\n\n".join(paras)
    chunks = chunk_page(_page(markdown), limit)
    # Nothing lost or reordered (a CJK run may be cut between characters).
    assert "".join("".join(c.text.split()) for c in chunks) == "".join(markdown.split())
    for c in chunks:
        assert c.text.strip()
        # A heading glued to a long paragraph may tip its first piece over by its own words.
        heading_words = sum(count_words(line) for line in c.text.splitlines() if line[:1] == "#")
        assert len(c.text.split()) <= limit + heading_words


def test_count_words() -> None:
    assert count_words("one two\nthree\tfour") == 4
    assert count_words("a  b") == 3  # runs of spaces err high, never low
    assert count_words("搜索引擎很快") == 6  # CJK: one per character
    assert count_words("naïve café au lait") == 4


def test_cjk_without_spaces_is_split() -> None:
    chunks = chunk_page(_page("数" * 50), 16)
    assert [len(c.text) for c in chunks] == [16, 16, 16, 2]
