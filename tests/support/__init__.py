"""Test helpers: bronze rows, request-log lines, corpora, lake comparisons."""
