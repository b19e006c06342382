"""Jobs: the only layer that builds SparkSessions, reads, writes, configures and logs."""
