-- Conversations (sessions) and their turns, so they survive restarts.
CREATE TABLE sessions (
    id TEXT PRIMARY KEY,
    title TEXT NOT NULL DEFAULT '',
    kind TEXT NOT NULL DEFAULT 'chat',
    created DOUBLE PRECISION NOT NULL,
    updated DOUBLE PRECISION NOT NULL
);
CREATE INDEX sessions_by_update ON sessions (updated DESC);
CREATE TABLE session_turns (
    session_id TEXT NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
    idx INTEGER NOT NULL,
    question TEXT NOT NULL,
    answer TEXT NOT NULL,
    sources TEXT NOT NULL,
    status TEXT NOT NULL,
    at DOUBLE PRECISION NOT NULL,
    PRIMARY KEY (session_id, idx)
);
