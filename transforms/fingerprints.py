"""The keyed fingerprint that stands in for a secret: one definition for bronze and gold.

Bronze replaces each secret value as logged with ``[REDACTED hmac-sha256:<fingerprint>]``
(``transforms.bronze.redaction``); KIP-48's HMAC check (``transforms.gold.kip48_tokens.hmac``)
fingerprints the HMAC a token id should have and compares. Both must compute the same thing:
were they to drift, every ``hmac_verified`` would silently turn false.
"""

from __future__ import annotations

from cryptography.hazmat.primitives import hashes, hmac

#: Hex characters kept of the HMAC-SHA256 (128 bits).
FINGERPRINT_HEX_CHARS = 32


def keyed_fingerprint(key: bytes, value: str) -> str:
    """HMAC-SHA256 of ``value``'s UTF-8 bytes keyed with the lake's fingerprint key
    (``jobs.fingerprint_keys``), as its first ``FINGERPRINT_HEX_CHARS`` lowercase hex chars."""
    mac = hmac.HMAC(key, hashes.SHA256())
    mac.update(value.encode("utf-8"))
    return mac.finalize().hex()[:FINGERPRINT_HEX_CHARS]
