"""Pure DataFrame transforms and column functions; no I/O, no session, no collect."""
