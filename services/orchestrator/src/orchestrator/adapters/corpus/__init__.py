"""Local documents: walking folders into the index service and keeping it fresh."""
