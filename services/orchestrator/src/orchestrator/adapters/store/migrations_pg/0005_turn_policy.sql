-- What the source policy (orchestrator/domains.py) dropped for a quick-search answer: its rules
-- and every dropped result, as JSON ('{}' for turns without domain rules). PostgreSQL twin of the SQLite file. 0005: 0004 is taken
-- on another branch; migrations may leave gaps.
ALTER TABLE session_turns ADD COLUMN policy TEXT NOT NULL DEFAULT '{}';
