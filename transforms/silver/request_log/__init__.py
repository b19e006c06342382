"""``kafka.request.logger`` records into silver.request_events."""
