"""KIP-368 SASL re-authentication: replay, sessions, outputs."""
