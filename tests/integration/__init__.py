"""Pipeline runs, the command line, spark-submit, a standalone cluster, notebooks."""
