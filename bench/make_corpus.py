"""Write a mixed corpus of N log lines from the bundled real samples, for benchmarks.

Every non-comment sample line is repeated with a fresh timestamp, and request-log lines of the
delegation-token and produce APIs are added, so every family is present. Not a simulation of a
cluster (that is the generator's job): a stand-in with the real formats' shapes and lengths.

    .venv/bin/python bench/make_corpus.py --lines 1000000 --out /tmp/corpus-1m
"""

from __future__ import annotations

import argparse
import itertools
import re
from datetime import datetime, timedelta
from pathlib import Path

SAMPLES = Path(__file__).resolve().parent.parent / "samples"
TS = re.compile(r"\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2},\d{3}")
REQUEST = (
    '[{ts}] DEBUG Completed request:{{"isForwarded":false,"requestHeader":{{"requestApiKey":39,'
    '"requestApiVersion":2,"correlationId":{n},"clientId":"admin-{c}","requestApiKeyName":'
    '"RENEW_DELEGATION_TOKEN"}},"request":{{"hmac":"c2VjcmV0LWhtYWMt{c}","renewPeriodMs":-1}},'
    '"response":{{"errorCode":0,"expiryTimestampMs":1700000000000,"throttleTimeMs":0}},'
    '"connection":"10.0.0.1:9093-10.0.0.{c}:5{n4}-0-3","totalTimeMs":1.2,"requestQueueTimeMs":0.1,'
    '"localTimeMs":0.5,"remoteTimeMs":0.4,"throttleTimeMs":0,"responseQueueTimeMs":0.1,'
    '"sendTimeMs":0.1,"securityProtocol":"SASL_SSL","principal":"User:admin-{c}","listener":'
    '"SASL_SSL","clientInformation":{{"softwareName":"apache-kafka-java","softwareVersion":"3.9.0"}}}}'
    " (kafka.request.logger)"
)


def sample_lines() -> list[str]:
    lines = []
    for path in sorted(SAMPLES.glob("*.log")):
        lines += [
            x for x in path.read_text(encoding="utf-8").splitlines() if x and not x.startswith("#")
        ]
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lines", type=int, default=1_000_000)
    parser.add_argument("--files", type=int, default=4, help="split into this many files")
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    base = sample_lines()
    start = datetime(2026, 11, 20)
    per_file = -(-args.lines // args.files)
    source = itertools.cycle(base + ["REQUEST"] * 10)
    n = 0
    for index in range(args.files):
        with (args.out / f"server-{index}.log").open("w", encoding="utf-8") as out:
            for _ in range(min(per_file, args.lines - n)):
                ts = (start + timedelta(milliseconds=n * 7)).strftime("%Y-%m-%d %H:%M:%S,%f")[:-3]
                line = next(source)
                if line == "REQUEST":
                    c = n % 200
                    out.write(REQUEST.format(ts=ts, n=n % 100000, n4=n % 10000, c=c) + "\n")
                else:
                    out.write(TS.sub(ts, line, count=1) + "\n")
                n += 1
    print(f"wrote {n} lines in {args.files} files under {args.out}")


if __name__ == "__main__":
    main()
