"""The bare Spark process a ``kafka-audit run`` is compared with, as a whole process (issue 15):
start a session with the job's own settings, read every log file under the inputs, split the
log4j prefix with one regex, parse the request-log JSON, write Parquet, stop.

    .venv/bin/python bench/bare_process.py samples --out /tmp/bare

Time it beside the pipeline with any whole-process timer, e.g. ``/usr/bin/time -v`` or
hyperfine's ``--warmup 1 'bench/bare_process.py ...' 'kafka-audit run ...'``; JVM start-up is
in both. The read + parse is ``bench/end_to_end.bare_read_parse``, the same the end-to-end
benchmark compares with. Its JVM starts as a plain PySpark script's does: without the class
archive ``kafka-audit`` maps (``jobs.jvm_startup``) unless ``--class-archive`` is given.
"""

from __future__ import annotations

import argparse
import os
from pathlib import Path

from end_to_end import bare_read_parse  # bench/ is the script's folder: first on sys.path

from jobs.config import SourceSpec
from jobs.inputs import discover_sources
from jobs.jvm_startup import ARCHIVE_ENV
from jobs.session import build_session


def main() -> None:
    """Parse the arguments, run the bare read + parse once, print its seconds."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("inputs", nargs="+", help="files or folders, as kafka-audit run --input")
    parser.add_argument("--out", type=Path, required=True, help="Parquet output folder")
    parser.add_argument("--master", default="local[2]")
    parser.add_argument(
        "--class-archive",
        action="store_true",
        help="map kafka-audit's JVM class archive too (default: a plain JVM start)",
    )
    args = parser.parse_args()
    if not args.class_archive:
        os.environ[ARCHIVE_ENV] = "off"
    files = [s.path for s in discover_sources(tuple(SourceSpec(p) for p in args.inputs))]
    spark = build_session("bench-bare-process", args.master)
    seconds, cpu_s = bare_read_parse(spark, files, args.out)
    print(f"bare read + parse of {len(files)} file(s): {seconds:.1f} s (JVM CPU {cpu_s:.1f} s)")
    spark.stop()


if __name__ == "__main__":
    main()
