"""`quarry` against a real HTTP server: it sends its token, and indexes a folder outside the
server's roots only after the user said yes (on a terminal) or with --allow-outside."""

from __future__ import annotations

import io

import pytest
from quarry_cli import main as cli

from clients.cli.tests.unit.conftest import FakeApi, Reply, Seen, events, problem

DONE = {"root": "/outside", "status": "ok", "error": None, "total": 1, "done": 1, "added": 1}
OUTSIDE = {
    "type": "about:blank",
    "title": "Path not allowed",
    "status": 403,
    "detail": "/outside is outside the corpus roots (/srv/notes)",
    "code": "outside_roots",
}


@pytest.fixture
def api(fake_api: FakeApi) -> FakeApi:
    """The refresh endpoint of a server whose roots exclude /outside: refused (403) unless
    the request carries the user's consent, then a finished refresh."""

    def respond(request: Seen) -> Reply:
        if not request.body.get("allow_outside"):
            return problem(403, OUTSIDE)
        return events([("refresh.completed", DONE)])

    fake_api.respond = respond
    return fake_api


class _Terminal(io.StringIO):
    """Standard input that claims to be a terminal, with the user's typed answer."""

    def isatty(self) -> bool:
        return True


def test_outside_the_roots_without_a_terminal_is_refused_with_a_hint(api: FakeApi) -> None:
    code, _, err = api.run("index", "/outside")
    assert code == cli.EXIT_USAGE
    assert "--allow-outside" in err
    assert [s.body for s in api.seen] == [{"path": "/outside"}]  # asked once, no retry


def test_the_flag_sends_the_users_consent(api: FakeApi) -> None:
    code, out, _ = api.run("index", "--allow-outside", "/outside")
    assert code == cli.EXIT_OK
    assert "/outside: 1 files" in out
    assert [s.body for s in api.seen] == [{"path": "/outside", "allow_outside": True}]


@pytest.mark.parametrize(("answer", "indexed"), [("y\n", True), ("\n", False), ("no\n", False)])
def test_a_terminal_asks_the_user_first(api: FakeApi, answer: str, indexed: bool) -> None:
    code, _, err = api.run("index", "/outside", stdin=_Terminal(answer))
    assert "Index /outside anyway? [y/N]" in err
    bodies = [s.body for s in api.seen]
    if indexed:
        assert code == cli.EXIT_OK
        assert bodies == [{"path": "/outside"}, {"path": "/outside", "allow_outside": True}]
    else:
        assert code == cli.EXIT_USAGE
        assert bodies == [{"path": "/outside"}]


def test_the_token_goes_in_the_authorization_header(api: FakeApi) -> None:
    api.run("--token", "t" * 20, "index", "--allow-outside", "/outside")
    api.run("index", "--allow-outside", "/outside", env_token="e" * 20)
    api.run("index", "--allow-outside", "/outside")
    assert [s.auth for s in api.seen] == [f"Bearer {'t' * 20}", f"Bearer {'e' * 20}", None]
