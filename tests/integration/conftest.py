"""The real PostgreSQL and Redis fixtures (tests/datastores.py) for the tests in this folder."""

from tests.datastores import pg_url, postgres, redis

__all__ = ["pg_url", "postgres", "redis"]
