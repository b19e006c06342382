"""Log-derived text made safe for where it is shown (terminal, Markdown and CSV). No Spark import.

Principals, client ids, software names, mechanisms and file names in the tables come from
whoever connected to the cluster, attacker included. A SASL username such as
``User\\x1b[31m:app`` must not recolour, hide or rewrite lines on the on-call engineer's
terminal, a client id such as ``=HYPERLINK(...)`` must not run as a spreadsheet formula, and
a ``|`` must not break a Markdown table. Every renderer of log-derived values (the run
summary, ``kafka-audit report`` in every format) passes each value through one of these:

* :func:`terminal`: control characters (C0, DEL, C1) and Unicode bidirectional / invisible
  format characters shown escaped (``\\x1b``, ``\\u202e``): nothing reaches the terminal as a
  control sequence, and the text stays readable.
* :func:`markdown`: :func:`terminal`, then Markdown and HTML markup escaped with a backslash
  (``|``, ``*``, ``_``, backticks, brackets, ``<``, ``>``, ``~``), so a value is one table
  cell of plain text.
* :func:`csv_cell`: :func:`terminal`, then OWASP's CSV-injection advice: a cell that starts
  with ``=``, ``+``, ``-``, ``@``, a tab or a carriage return gets a leading ``'``. Numbers
  are not text and are left alone.

JSON needs none: ``json.dumps`` escapes control characters (``\\u001b``) itself.
"""

from __future__ import annotations

import re
from typing import Any

#: C0 controls (tab, newline and carriage return included: one value is one line of one
#: cell), DEL, C1 controls, and the Unicode format characters that reorder or hide text:
#: bidi embeddings / overrides / isolates (Trojan Source), marks, zero-width characters.
_UNSAFE = re.compile("[\x00-\x1f\x7f-\x9f\u061c\u200b-\u200f\u2028-\u202e\u2060-\u2069\ufeff]")
#: What changes the meaning of text inside a Markdown table cell: cell borders, emphasis,
#: code, links and images, inline HTML, strike-through, and the escape character itself.
_MARKUP = re.compile(r"([\\`*_\[\]<>|~])")
#: OWASP: cells starting with these are formulas in spreadsheet programs.
_FORMULA_START = ("=", "+", "-", "@", "\t", "\r")


def _escaped(match: re.Match[str]) -> str:
    code = ord(match.group(0))
    return f"\\x{code:02x}" if code <= 0xFF else f"\\u{code:04x}"


def terminal(value: Any) -> str:
    """``value`` as text with every control and bidi / invisible format character escaped
    (``\\x1b``, ``\\u202e``); None -> ''."""
    if value is None:
        return ""
    return _UNSAFE.sub(_escaped, str(value))


def markdown(value: Any) -> str:
    """:func:`terminal`, then Markdown / HTML markup characters backslash-escaped."""
    return _MARKUP.sub(r"\\\1", terminal(value))


def csv_cell(value: Any) -> Any:
    """A CSV cell: numbers and None unchanged; text through :func:`terminal` and prefixed
    with ``'`` when a spreadsheet would read it as a formula (OWASP CSV injection)."""
    if value is None or isinstance(value, bool | int | float):
        return value
    text = str(value)
    safe = terminal(text)
    return "'" + safe if text.startswith(_FORMULA_START) else safe
