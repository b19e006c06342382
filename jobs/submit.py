"""spark-submit driver: ``spark-submit [--py-files kafka_security_audit.zip] jobs/submit.py run
--input ... --lake ...``. Takes the same arguments as ``kafka-audit``; the master and Spark
settings come from spark-submit."""

from __future__ import annotations

import sys

from jobs.cli import main

if __name__ == "__main__":
    sys.exit(main(sys.argv[1:], under_spark_submit=True))
