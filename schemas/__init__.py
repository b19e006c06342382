"""Explicit StructType contracts, one module per table, with each table's partition columns."""
