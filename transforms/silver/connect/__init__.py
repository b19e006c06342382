"""Kafka Connect REST access and worker lines into silver.connect_requests."""
