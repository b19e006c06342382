"""The fuzz suite at full size (issue 21): a damaged and hostile corpus through the real CLI.

Builds ``tests.support.fuzz_corpus`` (a generated cluster and the real samples, each line kept once,
with about as many damaged copies of every kind, plus the special files), runs
``kafka-audit run`` on it as a user would, renders ``kafka-audit report`` in every format, and
checks: exit 0; the accounting balances file by file on newline-terminated lines; no
24-character piece of any secret of the corpus in any table, log line or output; no control
character in any rendered report. Prints the figures the README quotes.

    .venv/bin/python bench/fuzz_damaged.py --work /tmp/fuzz --lines 10000
"""

from __future__ import annotations

import argparse
import gzip
import json
import subprocess
import sys
import time
from pathlib import Path

from deltalake import DeltaTable

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from tests.support.fuzz_corpus import CONTROL, build, expected_lines, secret_pieces

CLI = [sys.executable, "-m", "jobs.cli.main"]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--work", type=Path, required=True, help="folder for corpus and lake")
    parser.add_argument("--lines", type=int, default=10_000, help="generated lines (about)")
    parser.add_argument("--seed", type=int, default=21)
    args = parser.parse_args(argv)
    corpus = build(args.work / "corpus", seed=args.seed, lines_target=args.lines)
    lake = args.work / "lake"
    started = time.monotonic()
    done = subprocess.run(
        [*CLI, "run", "--input", str(corpus.root), "--lake", str(lake), "--engine", "embedded",
         "--json", "--no-progress"],
        capture_output=True, text=True, check=False,
    )  # fmt: skip
    seconds = time.monotonic() - started
    problems: list[str] = []
    if done.returncode != 0:
        problems.append(f"exit {done.returncode}: {done.stderr[-2000:]}")
        summary: dict = {"accounting": [], "damaged_files": {}}
    else:
        summary = json.loads(done.stdout)
    rows = {r["source_path"]: r for r in summary["accounting"]}
    files = [p for p in corpus.root.rglob("*") if p.is_file() and ".properties" not in p.name]
    for path in files:
        row = rows.get(str(path))
        if row is not None and not row["balanced"]:
            problems.append(f"not balanced: {path}")
        if str(path) in summary["damaged_files"]:
            continue
        data = path.read_bytes()
        try:
            data = gzip.decompress(data) if path.name.endswith(".gz") else data
        except (EOFError, OSError):
            problems.append(f"damaged gzip not named in the summary: {path}")
            continue
        if (row["physical_lines"] if row else 0) != expected_lines(data):
            problems.append(f"physical lines differ: {path}")
    pieces = secret_pieces(corpus.secrets)
    outputs = done.stdout + done.stderr
    for fmt in ("table", "markdown", "csv", "json"):
        section = ["--section", "findings"] if fmt == "csv" else []
        report = subprocess.run([*CLI, "report", "--lake", str(lake), "--format", fmt, *section],
                                capture_output=True, text=True, check=False)  # fmt: skip
        outputs += report.stdout + report.stderr
        if CONTROL.search(report.stdout):
            problems.append(f"control character in the {fmt} report")
    leaks = sorted({p for p in pieces if p in outputs})
    for table in sorted(p.parent for p in lake.glob("*/_delta_log")):
        text = repr(DeltaTable(str(table)).to_pyarrow_table().to_pylist())
        leaks += [f"{table.name}: {p}" for p in pieces if p in text][:3]
    problems += [f"leak: {leak}" for leak in leaks]
    print(
        f"kept lines {corpus.kept_lines:,}, damaged lines {corpus.damaged_lines:,} "
        f"({len(corpus.kinds)} kinds: {dict(sorted(corpus.kinds.items()))}), files {corpus.files}, "
        f"secrets {len(corpus.secrets)}; run exit {done.returncode} in {seconds:.0f} s; "
        f"damaged files named {len(summary['damaged_files'])}; leaks {len(leaks)}; "
        f"problems {len(problems)}"
    )
    for problem in problems[:20]:
        print("  " + problem)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
