"""Deep research: long-running, persisted, cited reports built from the agent's search steps."""
