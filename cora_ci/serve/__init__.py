"""Serving a bundle to agents: a session keeps it warm between calls; `mcp` speaks the protocol."""
