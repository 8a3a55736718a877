"""gRPC clients of the reader, ranker and index services."""
