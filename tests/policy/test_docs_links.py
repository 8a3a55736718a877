"""The docs stay true: every relative link in README.md and docs/*.md resolves (file and #anchor),
and every `make <target>` they name is a target of the Makefile.

Anchors follow GitHub's rule (github-slugger): the heading's text, lower-cased, punctuation but
`-` and `_` dropped, spaces as `-`, and `-1`, `-2`, … for repeats. Only the Markdown the docs use
is understood (ATX headings, inline links and images, reference definitions, HTML href/src/id);
a parser library would add a locked dependency for these few rules.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.conftest import ROOT

# A fence opens with ``` or ~~~ (up to 3 spaces in) and closes with the same characters.
_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
# An inline code span: a run of backticks, its content, the same run again.
_CODE_SPAN = re.compile(r"(`+)(.+?)\1")
_HEADING = re.compile(r"^ {0,3}#{1,6}[ \t]+(.*?)(?:[ \t]+#+)?[ \t]*$")
# [text](target "title") or ![alt](target); the text may hold one level of [brackets].
_INLINE_LINK = re.compile(
    r"!?\[(?:[^\[\]]|\[[^\[\]]*\])*\]\(\s*<?([^)\s>]*)>?(?:\s+\"[^\"]*\")?\s*\)"
)
_REFERENCE = re.compile(r"^ {0,3}\[[^\]]+\]:\s*<?(\S+?)>?(?:\s|$)", re.MULTILINE)
_HTML_URL = re.compile(r"""\b(?:href|src)\s*=\s*["']([^"']+)["']""")
_HTML_ID = re.compile(r"""<a\s[^>]*\b(?:id|name)\s*=\s*["']([^"']+)["']""")
_SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*:|^//")
_TARGET_WORD = re.compile(r"^[A-Za-z0-9_.-]+$")
_RULE = re.compile(r"^([A-Za-z0-9_.][A-Za-z0-9_./ -]*?)\s*::?(?!=)", re.MULTILINE)


def split_code(markdown: str) -> tuple[str, list[str]]:
    """The text outside code (fenced blocks blanked) and every piece of code (blocks, spans)."""
    prose: list[str] = []
    code: list[str] = []
    block: list[str] = []
    fence = ""
    for line in markdown.splitlines():
        opened = _FENCE.match(line)
        if fence:
            if opened and opened.group(1)[0] == fence[0] and len(opened.group(1)) >= len(fence):
                code.append("\n".join(block))
                block, fence = [], ""
            else:
                block.append(line)
            prose.append("")
        elif opened:
            fence = opened.group(1)
            prose.append("")
        else:
            prose.append(line)
    text = "\n".join(prose)
    code += [m.group(2) for m in _CODE_SPAN.finditer(text)]
    return text, code


def _without_spans(text: str) -> str:
    return _CODE_SPAN.sub(lambda m: " " * len(m.group(0)), text)


def slug(heading: str) -> str:
    """GitHub's anchor for a heading's Markdown text (before de-duplication)."""
    text = re.sub(r"!?\[([^\]]*)\]\([^)]*\)", r"\1", heading)  # links and images: their text
    text = re.sub(r"<[^>]+>", "", text).replace("`", "").replace("*", "")
    text = re.sub(r"[^\w\- ]", "", text.strip().lower())
    return text.replace(" ", "-")


def anchors(markdown: str) -> set[str]:
    """Every #fragment a Markdown file answers to."""
    text, _ = split_code(markdown)
    seen: dict[str, int] = {}
    out: set[str] = set(_HTML_ID.findall(_without_spans(text)))
    for line in text.splitlines():
        match = _HEADING.match(line)
        if not match:
            continue
        base = slug(match.group(1))
        count = seen.get(base, 0)
        seen[base] = count + 1
        out.add(base if count == 0 else f"{base}-{count}")
    return out


def link_targets(markdown: str) -> list[str]:
    """Every link and image target outside code."""
    text = _without_spans(split_code(markdown)[0])
    found = _INLINE_LINK.findall(text) + _REFERENCE.findall(text) + _HTML_URL.findall(text)
    return [t for t in found if t]


def _link_problem(root: Path, page: Path, target: str) -> str:
    """Why ``target`` (a link on ``page``) does not resolve; empty when it does."""
    name, _, fragment = target.partition("#")
    dest = (page.parent / name).resolve() if name else page.resolve()
    if not dest.is_relative_to(root.resolve()):
        return "outside the repository"
    if not dest.exists():
        return "no such file"
    if fragment and dest.suffix == ".md" and fragment not in anchors(dest.read_text("utf-8")):
        return f"no heading #{fragment} in {dest.relative_to(root.resolve())}"
    return ""


def broken_links(root: Path, files: list[Path]) -> list[str]:
    """``file: target (why)`` for every relative link that does not resolve."""
    return [
        f"{page.relative_to(root)}: {target} ({why})"
        for page in files
        for target in link_targets(page.read_text(encoding="utf-8"))
        if not _SCHEME.match(target) and (why := _link_problem(root, page, target))
    ]


def named_make_targets(markdown: str) -> set[str]:
    """Targets of every `make …` command written as code (spans and fenced blocks)."""
    names: set[str] = set()
    for code in split_code(markdown)[1]:
        for line in code.splitlines():
            words = line.split()
            for i in (i for i, word in enumerate(words) if word == "make"):
                # Targets follow, NAME=value variables between them; anything else (#, &&, /)
                # ends the command.
                for word in words[i + 1 :]:
                    if "=" in word:
                        continue
                    if not _TARGET_WORD.match(word):
                        break
                    names.add(word)
    return names


def makefile_targets(makefile: str) -> set[str]:
    """Every target a Makefile defines (rule lines and .PHONY)."""
    names: set[str] = set()
    for match in _RULE.finditer(makefile):
        names.update(match.group(1).split())
    for line in makefile.splitlines():
        if line.startswith(".PHONY:"):
            names.update(line.partition(":")[2].split())
    return names


def unknown_make_targets(root: Path, files: list[Path]) -> list[str]:
    """``file: make target`` for every named target the Makefile lacks."""
    known = makefile_targets((root / "Makefile").read_text(encoding="utf-8"))
    return [
        f"{path.relative_to(root)}: make {name}"
        for path in files
        for name in sorted(named_make_targets(path.read_text(encoding="utf-8")) - known)
    ]


def doc_files(root: Path) -> list[Path]:
    return [root / "README.md", *sorted((root / "docs").rglob("*.md"))]


def test_every_relative_link_resolves() -> None:
    assert broken_links(ROOT, doc_files(ROOT)) == []


def test_every_make_target_named_exists() -> None:
    assert unknown_make_targets(ROOT, doc_files(ROOT)) == []


def test_the_readme_links_every_docs_page() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    linked = {(ROOT / t.partition("#")[0]).resolve() for t in link_targets(readme)}
    assert [p.name for p in sorted((ROOT / "docs").glob("*.md")) if p.resolve() not in linked] == []


# The checker itself, on a small invented repository.


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    (tmp_path / "docs").mkdir()
    (tmp_path / "Makefile").write_text(
        ".PHONY: run test eval\nVAR := x\nrun: setup ## Run\n\t@echo run\nsetup:\n\ttrue\n"
    )
    (tmp_path / "docs" / "a.md").write_text(
        "# Page A\n\n## Answer quality: `make eval`\n\n## Notes\n\n## Notes\n"
    )
    return tmp_path


def _check(repo: Path, readme: str) -> list[str]:
    (repo / "README.md").write_text(readme)
    files = doc_files(repo)
    return broken_links(repo, files) + unknown_make_targets(repo, files)


def test_good_links_and_targets_pass(repo: Path) -> None:
    readme = (
        "# Top\n\nSee [A](docs/a.md#answer-quality-make-eval), [notes](docs/a.md#notes-1),\n"
        "[top](#top), ![img](docs/a.md) and <https://example.org>. Run `make run`,\n"
        "`make test VERBOSE=1` or\n\n```sh\nmake setup && make run  # comment\n```\n"
        "`[not a link](nowhere.md)`; to make sure is prose.\n"
    )
    assert _check(repo, readme) == []


@pytest.mark.parametrize(
    ("readme", "problem"),
    [
        ("[gone](docs/missing.md)", "README.md: docs/missing.md (no such file)"),
        (
            "[bad](docs/a.md#no-such)",
            "README.md: docs/a.md#no-such (no heading #no-such in docs/a.md)",
        ),
        ("[self](#nowhere)", "README.md: #nowhere (no heading #nowhere in README.md)"),
        ("[up](../x.md)", "README.md: ../x.md (outside the repository)"),
        ("[ref]: docs/gone.md\n", "README.md: docs/gone.md (no such file)"),
        ("Run `make deploy`.", "README.md: make deploy"),
        ("```\nmake run lint\n```", "README.md: make lint"),
    ],
)
def test_a_broken_link_or_unknown_target_is_reported(repo: Path, readme: str, problem: str) -> None:
    assert _check(repo, readme) == [problem]


def test_slugs_follow_github() -> None:
    assert slug("Errors (RFC 7807)") == "errors-rfc-7807"
    assert slug("`POST /v1/search`") == "post-v1search"
    assert slug("Modes, and what to expect from the embedded model") == (
        "modes-and-what-to-expect-from-the-embedded-model"
    )
    assert (
        slug("Use [Quarry](x.md) with `ORCHESTRATOR_MODE`") == "use-quarry-with-orchestrator_mode"
    )
