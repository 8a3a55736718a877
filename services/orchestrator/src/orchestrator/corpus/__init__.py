"""Local documents: walking folders into the ranker corpus and keeping it fresh."""
