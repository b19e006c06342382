"""A seeded corpus of damaged and hostile log files (issue 21), for tests/integration/test_fuzz.py (a
small slice in the test command) and bench/fuzz_damaged.py (the full size).

Every line of a generated cluster (``kafka-audit generate``: every family, real token HMACs)
plus the bundled real samples is kept once; after it come damaged copies of random lines, one
kind of damage each (:data:`DAMAGE`). Special files sit beside them (:data:`SPECIAL_FILES`).
No Spark.
"""

from __future__ import annotations

import gzip
import random
import re
import shutil
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from jobs.simulator.generate import generate
from jobs.simulator.world import GenerateOptions

ROOT = Path(__file__).resolve().parents[2]
_TS = re.compile(rb"\d{4}-\d{2}-\d{2}[ T]\d{2}:\d{2}:\d{2}")
_PRINCIPAL = re.compile(rb"User:[A-Za-z0-9_.-]+")
_SECRET_JSON = re.compile(rb'"(?:hmac|authBytes|saslAuthBytes)"\s*:\s*"([^"]+)"')
_SECRET_ARRAY = re.compile(rb"(?:hmac|authBytes)=\[([^\]]+)\]")
#: Control characters a rendered report may never hold, except its own line ends.
CONTROL = re.compile("[\x00-\x09\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")


def _cut(rng: random.Random, line: bytes) -> list[bytes]:
    return [line[: rng.randrange(len(line) or 1)]]


def _control(rng: random.Random, line: bytes) -> list[bytes]:
    at = rng.randrange(len(line) + 1)
    junk = bytes(rng.choice([0x1B, 0x07, 0x08, 0x0B, 0x0C, 0x7F, 0x9B]) for _ in range(3))
    return [line[:at] + b"\x1b[31m" + junk + line[at:]]


def _invalid_utf8(rng: random.Random, line: bytes) -> list[bytes]:
    at = rng.randrange(len(line) + 1)
    return [
        line[:at] + rng.choice([b"\xff\xfe", b"\xc3", b"\xe2\x82", b"\xed\xa0\x80"]) + line[at:]
    ]


def _nul(rng: random.Random, line: bytes) -> list[bytes]:
    at = rng.randrange(len(line) + 1)
    return [line[:at] + b"\x00" * rng.randint(1, 4) + line[at:]]


def _lone_cr(rng: random.Random, line: bytes) -> list[bytes]:
    at = rng.randrange(len(line) + 1)
    return [line[:at] + b"\r" + line[at:]]


def _doubled_spaces(rng: random.Random, line: bytes) -> list[bytes]:
    return [line.replace(b" ", b"  ")]


def _respaced_json(rng: random.Random, line: bytes) -> list[bytes]:
    return [line.replace(b'":', b'" : ').replace(b",", b" , ").replace(b"{", b"{ ")]


def _split(rng: random.Random, line: bytes) -> list[bytes]:
    at = rng.randrange(1, max(2, len(line)))
    return [line[:at], line[at:]]


def _long(rng: random.Random, line: bytes) -> list[bytes]:
    at = rng.randrange(len(line) + 1)
    return [line[:at] + b"A" * 50_000 + line[at:]]


def _nested_json(rng: random.Random, line: bytes) -> list[bytes]:
    depth = rng.choice([200, 1_500])
    nested = b'{"a":' * depth + b"1" + b"}" * depth
    return [line.replace(b'"request":{', b'"request":' + nested + b',"x":{', 1)]


def _multibyte_principal(rng: random.Random, line: bytes) -> list[bytes]:
    name = rng.choice(["ユーザー名", "пользователь", "用户😀", "Ünïcödé", "\u202egnp.exe"])
    return [_PRINCIPAL.sub(b"User:" + name.encode(), line)]


def _impossible_time(rng: random.Random, line: bytes) -> list[bytes]:
    bad = rng.choice([b"2026-13-45 25:61:61", b"0000-00-00 00:00:00", b"2026-02-30 24:00:00"])
    return [_TS.sub(bad, line, count=1)]


def _random_bytes(rng: random.Random, line: bytes) -> list[bytes]:
    return [bytes(rng.randrange(256) for _ in range(rng.randint(1, 300))).replace(b"\n", b"")]


#: Damage kind -> mutator (a line without its ``\n`` -> the lines that replace it).
DAMAGE: dict[str, Callable[[random.Random, bytes], list[bytes]]] = {
    "cut_at_random_byte": _cut,
    "control_bytes": _control,
    "invalid_utf8": _invalid_utf8,
    "nul_bytes": _nul,
    "lone_cr": _lone_cr,
    "doubled_spaces": _doubled_spaces,
    "respaced_json": _respaced_json,
    "record_cut_in_two": _split,
    "line_50kb": _long,
    "deeply_nested_json": _nested_json,
    "multibyte_principal": _multibyte_principal,
    "impossible_timestamp": _impossible_time,
    "random_bytes": _random_bytes,
}


def _truncated(data: bytes) -> bytes:
    return data[: len(data) * 2 // 3]


_LINE = b"[2026-11-20 10:00:00,000] INFO Some broker line (kafka.server.KafkaServer)"
#: Special files: name -> bytes (the truncated gzip is cut at two thirds of its bytes).
SPECIAL_FILES: dict[str, bytes] = {
    "empty.log": b"",
    "binary.log": bytes(range(256)) * 64,
    "crlf.log": (_LINE + b"\r\n") * 20,
    "no-final-newline.log": (_LINE + b"\n") * 5 + _LINE,
    "rotated.log.1.gz": gzip.compress((_LINE + b"\n") * 50),
    "truncated.log.2.gz": _truncated(
        gzip.compress(b"".join(_LINE + b" %d\n" % i for i in range(3000)))
    ),
}


@dataclass
class FuzzCorpus:
    """What :func:`build` wrote: the folder, the secrets it holds, its line counts."""

    root: Path
    secrets: set[bytes] = field(default_factory=set)
    kept_lines: int = 0
    damaged_lines: int = 0
    kinds: Counter[str] = field(default_factory=Counter)
    files: int = 0


def expected_lines(data: bytes) -> int:
    """``\\n``-terminated lines, plus one for a final unterminated line."""
    return data.count(b"\n") + (1 if data and not data.endswith(b"\n") else 0)


def build(out: Path, *, seed: int, lines_target: int, damaged_per_line: float = 1.0) -> FuzzCorpus:
    """Write the corpus into ``out`` (replaced): the generated cluster, the samples, damaged
    copies (``damaged_per_line`` per kept line on average) and the special files."""
    if out.exists():
        shutil.rmtree(out)
    options = GenerateOptions(out=out, brokers=2, controllers=1, connect_workers=1, hours=1.0,
                              lines_target=lines_target, seed=seed)  # fmt: skip
    generate(options, progress=None)
    shutil.rmtree(out / "truth")
    shutil.copytree(ROOT / "samples", out / "samples")
    rng = random.Random(seed)
    corpus = FuzzCorpus(out)
    kinds = sorted(DAMAGE)
    for path in sorted(p for p in out.rglob("*") if p.is_file() and ".properties" not in p.name):
        lines = path.read_bytes().split(b"\n")
        if lines and lines[-1] == b"":
            lines.pop()
        for line in lines:
            corpus.secrets.update(m.group(1) for m in _SECRET_JSON.finditer(line))
            corpus.secrets.update(m.group(1) for m in _SECRET_ARRAY.finditer(line))
        mixed: list[bytes] = []
        for line in lines:
            mixed.append(line)
            copies = int(damaged_per_line) + (rng.random() < damaged_per_line % 1)
            for _ in range(copies):
                kind = kinds[rng.randrange(len(kinds))]
                mixed.extend(DAMAGE[kind](rng, rng.choice(lines)))
                corpus.kinds[kind] += 1
        corpus.kept_lines += len(lines)
        corpus.damaged_lines += len(mixed) - len(lines)
        path.write_bytes(b"\n".join(mixed) + b"\n")
    special = out / "special"
    special.mkdir()
    for name, data in SPECIAL_FILES.items():
        (special / name).write_bytes(data)
    corpus.files = sum(1 for p in out.rglob("*") if p.is_file() and ".properties" not in p.name)
    return corpus


def secret_pieces(secrets: set[bytes], size: int = 24) -> set[str]:
    """Every ``size``-character piece of every secret, as text."""
    texts = {s.decode("utf-8", "replace") for s in secrets}
    return {t[i : i + size] for t in texts for i in range(len(t) - size + 1)}
