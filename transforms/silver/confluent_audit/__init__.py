"""Confluent audit-log CloudEvents into silver rows."""
