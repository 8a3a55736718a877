"""Adapters: the ports of the core implemented over gRPC, HTTP, SQL and processes."""
