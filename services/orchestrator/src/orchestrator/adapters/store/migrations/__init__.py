"""Schema migrations, one SQL file each: ``NNNN_name.sql``, applied in number order.

A new table (e.g. chat sessions) is a new file with the next free number; nothing else
changes, so two branches that each add a migration only conflict if they pick the same number
(which `load_migrations` refuses loudly).

Every file here has a PostgreSQL twin with the same name in ``../migrations_pg`` (docs/scaling.md);
without it the PostgreSQL stores refuse to start and tests/integration/test_pg_store.py fails.
"""
