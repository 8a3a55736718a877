"""The PostgreSQL twins of ``../migrations``: the same numbers and names, each file producing the
same tables, columns, keys and indexes on PostgreSQL (tests/integration/test_pg_store.py
compares the two schemas after every version). Types differ only where the engines do: REAL
(SQLite's 8-byte float) is DOUBLE PRECISION here, since PostgreSQL's REAL has 4 bytes.
"""
