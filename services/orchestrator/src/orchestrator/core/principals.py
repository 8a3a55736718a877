"""Who owns what: the principal behind each bearer token (a named user, or an admin).

Sessions and research runs belong to the principal that created them; only it (or an admin)
sees them. A principal's id is stable across restarts and never holds a raw token:

- a named token's id is its name (``alice:tok…`` in ``ORCHESTRATOR_API_TOKENS``, or a
  ``alice tok…`` / ``alice admin tok…`` line in the token file): two tokens with one name are
  one user (e.g. while rotating a token);
- an unnamed token (the format from before names existed: ``ORCHESTRATOR_API_TOKENS=a,b``) is a
  user of its own, ``token:`` plus the start of the token's SHA-256 (so two unnamed tokens are
  two users, and rotating one starts an empty history: name it to keep its data);
- with no token configured (one person on loopback) everyone is ``local``, an admin, which
  also owns every row written before owners existed (migration 0003). A token named ``local``
  inherits those rows once tokens are set.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable
from dataclasses import dataclass, field

LOCAL_ID = "local"
#: Names may not contain ':', so a name can never be mistaken for an unnamed token's id.
NAME_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$")
ROLES = ("user", "admin")
# 96 bits of the token's digest: unique among any realistic number of tokens, and says nothing
# usable about a random 16+ character token.
_ID_HEX = 24


class PrincipalError(ValueError):
    """A token setting that names principals inconsistently (the message says which)."""


@dataclass(frozen=True)
class Principal:
    """A user (owns what it creates) or an admin (also sees and acts on everyone's data)."""

    id: str
    admin: bool = False

    def may_see(self, owner: str) -> bool:
        """True when this principal may read and act on data owned by ``owner``."""
        return self.admin or owner == self.id


#: The single-user default: no tokens configured, everything is one person's.
LOCAL = Principal(LOCAL_ID, admin=True)


@dataclass(frozen=True)
class Credential:
    """A bearer token and the principal it authenticates."""

    token: str = field(repr=False)
    principal: Principal


def unnamed_id(token: str) -> str:
    """The stable id of a token given without a name."""
    return "token:" + hashlib.sha256(token.encode()).hexdigest()[:_ID_HEX]


def _credential(name: str | None, role: str, token: str) -> Credential:
    if name is not None and not NAME_RE.match(name):
        raise PrincipalError(
            f"{name!r} is not a principal name (letters, digits, '_', '.', '-'; up to 64)"
        )
    if role not in ROLES:
        raise PrincipalError(f"{role!r} is not a role (use 'user' or 'admin')")
    pid = name if name is not None else unnamed_id(token)
    return Credential(token, Principal(pid, admin=role == "admin"))


def from_setting(value: str, role: str) -> list[Credential]:
    """Comma-separated ``token`` or ``name:token`` entries, each a principal with ``role``.

    ``name:`` is read only when it is a valid name, so a token with a ':' further in stays whole.
    """
    out = []
    for entry in (e.strip() for e in value.split(",")):
        if not entry:
            continue
        name, sep, token = entry.partition(":")
        if sep and NAME_RE.match(name) and token.strip():
            out.append(_credential(name, role, token.strip()))
        else:
            out.append(_credential(None, role, entry))
    return out


def from_file_line(line: str, where: str) -> Credential | None:
    """One token-file line: ``token``, ``name token`` or ``name role token`` (None: blank or a
    ``#`` comment).

    Raises:
        PrincipalError: a line with more fields, an unknown role or a bad name (``where`` says
            which line).
    """
    fields = line.split()
    if not fields or fields[0].startswith("#"):
        return None
    try:
        if len(fields) == 1:
            return _credential(None, "user", fields[0])
        if len(fields) == 2:
            return _credential(fields[0], "user", fields[1])
        if len(fields) == 3:
            return _credential(fields[0], fields[1], fields[2])
    except PrincipalError as err:
        raise PrincipalError(f"{where}: {err}") from None
    raise PrincipalError(f"{where}: expected 'token', 'name token' or 'name role token'")


def consistent(credentials: Iterable[Credential]) -> tuple[Credential, ...]:
    """The credentials without repeats, checked: one token is one principal, one name one role.

    Raises:
        PrincipalError: a token given to two principals, or a name given two roles.
    """
    by_token: dict[str, Credential] = {}
    roles: dict[str, bool] = {}
    for cred in credentials:
        seen = by_token.setdefault(cred.token, cred)
        if seen.principal != cred.principal:
            raise PrincipalError(
                f"one token is given to both {seen.principal.id} and {cred.principal.id}"
            )
        pid = cred.principal.id
        if roles.setdefault(pid, cred.principal.admin) != cred.principal.admin:
            raise PrincipalError(f"{pid} is given both the user and the admin role")
    return tuple(by_token.values())


#: The ``owner`` an admin asks for to list every principal's data.
ALL = "*"


class NotVisible(LookupError):
    """The principal asked for another principal's data without being an admin."""


def listed_owner(who: Principal, asked: str | None) -> str | None:
    """Whose data a list shows: the caller's own by default; an admin may ask for any owner's,
    or ``*`` for everyone's (None).

    Raises:
        NotVisible: a user asked for someone else's.
    """
    if asked is None or asked == who.id:
        return who.id
    if not who.admin:
        raise NotVisible(asked)
    return None if asked == ALL else asked


def acting_owner(who: Principal, asked: str | None) -> str:
    """Whose record (e.g. a session, addressed by owner and id) a request acts on: the
    caller's own by default; an admin may name any owner.

    Raises:
        NotVisible: a user named someone else, or anyone named ``*``.
    """
    owner = listed_owner(who, asked)
    if owner is None:
        raise NotVisible(asked)
    return owner
