"""Principals from the token settings: today's formats keep working (every unnamed token a user of
its own), names and admins are added, and inconsistent settings stop the service."""

from __future__ import annotations

from pathlib import Path

import pytest
from orchestrator.adapters.store.session_db import SqliteSessionDB
from orchestrator.api.shared.security import ConfigError, load_tokens
from orchestrator.config import Settings
from orchestrator.core.principals import (
    LOCAL,
    NotVisible,
    Principal,
    acting_owner,
    listed_owner,
    unnamed_id,
)
from orchestrator.core.sessions import SessionStore, Turn

A = "first-token-0123456789"
B = "second-token-0123456789"


def principals(settings: Settings) -> dict[str, Principal]:
    return {c.token: c.principal for c in load_tokens(settings)}


def test_unnamed_tokens_are_users_with_stable_ids_that_are_not_the_token() -> None:
    found = principals(Settings(api_tokens=f"{A}, {B}"))
    assert found == {A: Principal(unnamed_id(A)), B: Principal(unnamed_id(B))}
    assert found[A].id != found[B].id
    assert found[A].id.startswith("token:")
    assert A not in found[A].id
    assert principals(Settings(api_tokens=A))[A].id == found[A].id  # stable across restarts


def test_names_roles_and_the_token_file(tmp_path: Path) -> None:
    token_file = tmp_path / "tokens"
    token_file.write_text(
        f"# name role token\n{A}\ncarol carol-token-0123456789\nroot admin root-token-0123456789\n"
    )
    found = principals(
        Settings(
            api_tokens="alice:alice-token-0123456789,alice:alice-2nd-token-0123",
            admin_tokens="ops:ops-token-0123456789",
            api_token_file=str(token_file),
        )
    )
    assert found["alice-token-0123456789"] == found["alice-2nd-token-0123"] == Principal("alice")
    assert found["ops-token-0123456789"] == Principal("ops", admin=True)
    assert found[A] == Principal(unnamed_id(A))
    assert found["carol-token-0123456789"] == Principal("carol")
    assert found["root-token-0123456789"] == Principal("root", admin=True)
    # A ':' after something that is not a name keeps the token whole.
    odd = "not a name:0123456789abcdef"
    assert principals(Settings(api_tokens=odd))[odd] == Principal(unnamed_id(odd))


@pytest.mark.parametrize(
    ("settings", "message"),
    [
        ({"api_tokens": f"alice:{A}", "admin_tokens": f"alice:{B}"}, "both the user and the admin"),
        ({"api_tokens": f"alice:{A},bob:{A}"}, "one token is given to both"),
        ({"api_tokens": "alice:short"}, "at least 16"),
    ],
)
def test_inconsistent_principals_stop_the_service(settings: dict[str, str], message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        load_tokens(Settings.model_validate(settings))


def test_a_bad_token_file_line_is_named(tmp_path: Path) -> None:
    token_file = tmp_path / "tokens"
    token_file.write_text(f"{A}\nbob owner {B}\n")
    with pytest.raises(ConfigError, match="line 2: 'owner' is not a role"):
        load_tokens(Settings(api_token_file=str(token_file)))
    token_file.write_text(f"a b c {B}\n")
    with pytest.raises(ConfigError, match="line 1: expected"):
        load_tokens(Settings(api_token_file=str(token_file)))


def test_whose_data_a_request_may_name() -> None:
    alice, root = Principal("alice"), Principal("root", admin=True)
    assert listed_owner(alice, None) == listed_owner(alice, "alice") == "alice"
    assert listed_owner(root, None) == "root"
    assert listed_owner(root, "alice") == "alice"
    assert listed_owner(root, "*") is None  # everyone's
    assert acting_owner(root, "alice") == "alice"
    for who, asked in ((alice, "bob"), (alice, "*"), (root, "*")):
        with pytest.raises(NotVisible):
            acting_owner(who, asked)
    assert LOCAL.admin  # no tokens: the one person on loopback sees everything


async def test_two_owners_may_use_one_session_id(tmp_path: Path) -> None:
    db = await SqliteSessionDB.open(str(tmp_path))
    store = SessionStore(ttl_s=60, max_chars=10_000, max_sessions=10, db=db)
    try:
        for owner in ("alice", "bob"):
            async with store.use(owner, "work") as session:
                turn = Turn(f"{owner}'s question", "answer", (), "answered", 1.0)
                await store.add_turn(session, turn)
        fresh = SessionStore(ttl_s=60, max_chars=10_000, max_sessions=10, db=db)
        for owner in ("alice", "bob"):
            loaded = await fresh.get(owner, "work")
            assert loaded is not None
            assert [t.question for t in loaded.turns] == [f"{owner}'s question"]
        assert [s["owner"] for s in (await fresh.page("bob", 0, 10))[0]] == ["bob"]
        assert (await fresh.page(None, 0, 10))[1] == 2
        assert await fresh.delete("alice", "work")
        assert await fresh.get("bob", "work") is not None
    finally:
        await db.close()
