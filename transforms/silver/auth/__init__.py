"""SASL/SSL authentication lines into silver.auth_events."""
