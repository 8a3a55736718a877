"""quarry: Quarry's terminal client. It talks to a running Quarry over its HTTP API only."""
