"""KIP-48 delegation tokens: lifecycles, HMAC checks, findings."""
