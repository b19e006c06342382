"""Bronze: physical lines into log records, layouts, redaction, accounting."""
