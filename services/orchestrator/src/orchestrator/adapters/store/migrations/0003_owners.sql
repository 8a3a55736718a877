-- Owners: every research run and session belongs to a principal (orchestrator/principals.py).
-- Rows written before owners existed belong to "local", the single-user default (with tokens
-- configured: to a token named "local", and admins see them).
ALTER TABLE research_runs ADD COLUMN owner TEXT NOT NULL DEFAULT 'local';
CREATE INDEX research_runs_owner ON research_runs (owner, created_at DESC);

-- Session ids are chosen by clients, so a session is addressed by (owner, id): two users may
-- both have a session "work". SQLite cannot change a primary key in place: rebuild the tables.
CREATE TABLE sessions_owned (
    owner TEXT NOT NULL,
    id TEXT NOT NULL,
    title TEXT NOT NULL DEFAULT '',
    kind TEXT NOT NULL DEFAULT 'chat',
    created REAL NOT NULL,
    updated REAL NOT NULL,
    PRIMARY KEY (owner, id)
);
CREATE TABLE session_turns_owned (
    owner TEXT NOT NULL,
    session_id TEXT NOT NULL,
    idx INTEGER NOT NULL,
    question TEXT NOT NULL,
    answer TEXT NOT NULL,
    sources TEXT NOT NULL,
    status TEXT NOT NULL,
    at REAL NOT NULL,
    PRIMARY KEY (owner, session_id, idx),
    FOREIGN KEY (owner, session_id) REFERENCES sessions_owned (owner, id) ON DELETE CASCADE
);
INSERT INTO sessions_owned (owner, id, title, kind, created, updated)
    SELECT 'local', id, title, kind, created, updated FROM sessions;
INSERT INTO session_turns_owned (owner, session_id, idx, question, answer, sources, status, at)
    SELECT 'local', session_id, idx, question, answer, sources, status, at FROM session_turns;
DROP TABLE session_turns;
DROP TABLE sessions;
-- RENAME also rewrites session_turns_owned's foreign key to name "sessions".
ALTER TABLE sessions_owned RENAME TO sessions;
ALTER TABLE session_turns_owned RENAME TO session_turns;
CREATE INDEX sessions_by_update ON sessions (updated DESC);
CREATE INDEX sessions_by_owner ON sessions (owner, updated DESC);
