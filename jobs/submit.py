"""spark-submit driver: ``spark-submit [--py-files kafka_security_audit.zip] jobs/submit.py run
--input ... --lake ...``. Takes the same arguments as ``kafka-audit``; the master and Spark
settings come from spark-submit."""

from __future__ import annotations

import sys
from pathlib import Path

# Python puts the script's own folder first on sys.path. When that folder is the package
# folder (``jobs/``), its modules become top-level names (``config``, ``report``, ...) that can
# shadow other packages' modules (a module named secrets once shadowed the standard library's): put
# the project root there instead, so that ``jobs`` itself imports from a checkout.
_here = Path(__file__).resolve().parent
if _here.name == "jobs" and sys.path and Path(sys.path[0] or ".").resolve() == _here:
    sys.path[0] = str(_here.parent)

from jobs.cli.main import main  # noqa: E402

if __name__ == "__main__":
    sys.exit(main(sys.argv[1:], under_spark_submit=True))
