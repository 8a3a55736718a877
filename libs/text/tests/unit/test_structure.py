"""Passage units follow the page's structure, on the reader's real markdown of reference pages
(excerpts of git-doc's git-push.html and git-config.html and sqlite3-doc's limits.html and
fileformat.html as Trafilatura writes them): an option stays with its description, a limit's
title with its text, a table row with its header."""

from __future__ import annotations

from quarry_text.chunking import Page, chunk_page
from quarry_text.structure import units

# git-push.html: a definition list, flattened to one list with no blank lines.
GIT_PUSH_OPTIONS = """\
- --repo=\\<repository>
- This option is equivalent to the \\<repository> argument. If both are specified, the \
command-line argument takes precedence.
- -u
- --set-upstream
- For every branch that is up to date or successfully pushed, add
        upstream (tracking) reference, used by argument-less
        git-pull(1) and other commands. For more information,
        see `branch.<name>.merge` in git-config(1).
- --\\[no-\\]thin
- These options are passed to git-send-pack(1). A thin transfer
        significantly reduces the amount of sent data when the sender and
        receiver share many of the same objects in common. The default is
        `--thin`.
- -q
- --quiet
- Suppress all output, including the listing of updated refs, unless an error occurs. \
Progress is not reported to the standard error stream.
- -v
- --verbose
- Run verbosely."""

# limits.html: numbered items whose text runs on unindented, a nested list inside one.
SQLITE_LIMITS = """\
1. **Maximum length of a string or BLOB**
The maximum number of bytes in a string or BLOB in SQLite is defined by the preprocessor \
macro SQLITE\\_MAX\\_LENGTH. The default value of this macro is 1 billion (1 thousand million \
or 1,000,000,000).
2. **Maximum Number Of Columns**
The SQLITE\\_MAX\\_COLUMN compile-time parameter is used to set an upper bound on:
  - The number of columns in a table
  - The number of columns in an index
The default setting for SQLITE\\_MAX\\_COLUMN is 2000. You can change it at compile time to \
values as large as 32767. On the other hand, many experienced database designers will argue \
that a well-normalized database will never need more than 100 columns in a table."""

# fileformat.html: a table.
SQLITE_TABLE = """\
| Datatype | Appears in... | Description |
|---|---|---|
| 4-byte integer | Table Interior (0x05) | Page number of left child |
| varint | Table Leaf (0x0d) | Number of bytes of payload |
| varint | Table Leaf (0x0d) | Rowid |
| byte array | Index Leaf (0x0a) | Payload |
| 4-byte integer | Index Leaf (0x0a) | Page number of first overflow page |"""


def test_an_option_stays_with_its_aliases_and_its_description() -> None:
    got = [u.text.splitlines()[:3] for u in units(GIT_PUSH_OPTIONS, 120)]
    assert got[1] == [
        "- -u",
        "- --set-upstream",
        "- For every branch that is up to date or " + "successfully pushed, add",
    ]
    assert [u.label for u in units(GIT_PUSH_OPTIONS, 120)] == [
        "- --repo=\\<repository>",
        "- -u\n- --set-upstream",
        "- --\\[no-\\]thin",
        "- -q\n- --quiet",
        "- -v\n- --verbose",
    ]


def test_no_passage_separates_an_option_from_its_description() -> None:
    chunks = chunk_page(Page("u", "git-push", f"## OPTIONS\n\n{GIT_PUSH_OPTIONS}"), 50)
    (upstream,) = [c.text for c in chunks if "--set-upstream" in c.text]
    assert "- -u\n- --set-upstream\n- For every branch" in upstream
    assert "branch.<name>.merge" in upstream
    (quiet,) = [c.text for c in chunks if "- --quiet" in c.text]
    assert "Suppress all output" in quiet


def test_a_numbered_entry_keeps_its_title_and_a_split_repeats_it() -> None:
    first, second = units(SQLITE_LIMITS, 120)
    assert first.label == "1. **Maximum length of a string or BLOB**"
    assert "1,000,000,000" in first.text
    assert "- The number of columns in an index" in second.text  # nested: a continuation
    chunks = chunk_page(Page("u", "Limits", SQLITE_LIMITS), 40)
    columns = [c.text for c in chunks if "32767" in c.text or "2000" in c.text]
    assert columns
    assert all(c.startswith("2. **Maximum Number Of Columns**") for c in columns)


def test_table_rows_are_grouped_under_their_header() -> None:
    groups = units(SQLITE_TABLE, 30)
    assert len(groups) > 1
    header = "| Datatype | Appears in... | Description |\n|---|---|---|"
    assert all(g.text.startswith(header + "\n| ") for g in groups)
    rows = [line for g in groups for line in g.text.splitlines()[2:]]
    assert rows == SQLITE_TABLE.splitlines()[2:]


def test_prose_code_and_a_fence_opened_mid_line_are_not_cut_into_items() -> None:
    prose = "Updates remote refs using local refs.\nIt sends objects."
    assert [u.text for u in units(prose, 120)] == [prose]
    fence = "```\n- not an item\n- nor this\n```"
    assert [u.text for u in units(fence, 120)] == [fence]
    # git-config.html: a fence opened at the end of a line; the items inside are code.
    mixed = (
        "- core.fsmonitor\n- The monitor is available only ```\n- code\n```\n- core.eol\n- Sets it."
    )
    assert [u.label for u in units(mixed, 120)] == ["- core.fsmonitor", "- core.eol"]


# postconf.5.html (postfix-doc): each parameter's term is two lines, its name and its default.
POSTCONF = """\
- **max\\_use
(default: 100)**
- The maximal number of incoming connections that a Postfix daemon process will service \
before terminating voluntarily. This parameter is ignored by the Postfix queue manager.
- **maximal\\_backoff\\_time
(default: 4000s)**
- The maximal time between attempts to deliver a deferred message. This parameter should \
be set to a value greater than or equal to $minimal\\_backoff\\_time."""


def test_a_two_line_term_stays_with_its_description() -> None:
    assert [u.label for u in units(POSTCONF, 120)] == [
        "- **max\\_use\n(default: 100)**",
        "- **maximal\\_backoff\\_time\n(default: 4000s)**",
    ]
    # Cut small, every passage that describes the backoff still names it and its default.
    chunks = chunk_page(Page("u", "postconf", POSTCONF), 30)
    described = [c.text for c in chunks if "between attempts" in c.text]
    assert described
    assert all("(default: 4000s)" in c for c in described)


def test_a_head_left_alone_leads_the_passage_of_its_text_not_the_one_before() -> None:
    # A bold title leading a list (no heading markup): packed on its own it fit at the end of
    # the passage before it; it opens the passage of the entries it introduces.
    prose = "The first section says a lot about itself. " * 5
    head = "**Second section**"
    entries = "- The second entry's value is 42. More words follow here.\n- Another entry."
    page = f"{prose.strip()}\n\n{head}\n{entries}"
    chunks = [c.text for c in chunk_page(Page("u", "t", page), 50)]
    (opening,) = [c for c in chunks if "value is 42" in c]
    assert opening.startswith(head)
    assert not any(c.rstrip().endswith(head) for c in chunks)


def test_a_block_that_fits_a_passage_is_never_split_across_two() -> None:
    # sqlite3-doc lang_createtable.html: three items on a column's default value. Cut at each
    # item, the packer put the first at the end of the passage before and the rest after it.
    prose = "A column may have a default value, used when an INSERT names no value. " * 5
    items = (
        "- If the default value is a constant, then that value is used directly.\n"
        "- If it is an expression in parentheses, it is evaluated once for each row.\n"
        "- If it is CURRENT_TIME, the value is a text representation of the UTC time."
    )
    chunks = [c.text for c in chunk_page(Page("u", "t", f"{prose.strip()}\n\n{items}"), 80)]
    assert any(items in c for c in chunks)
