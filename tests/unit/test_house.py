"""The house's size rule (docs/architecture.md): no function of the project over 70 lines.

The import rules are checked by ``lint-imports`` in the test command; ruff checks branches and
statements per function (PLR0912, PLR0915); this checks length, which neither tool measures.
"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("jobs", "transforms", "schemas")
MAX_LINES = 70


def long_functions(root: Path, max_lines: int) -> list[str]:
    """``path:line name (N lines)`` of every function or method over ``max_lines`` lines
    (decorators and docstrings included) in the packages under ``root``."""
    found = []
    for package in PACKAGES:
        for path in sorted((root / package).rglob("*.py")):
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                    first = min([node.lineno, *(d.lineno for d in node.decorator_list)])
                    lines = (node.end_lineno or node.lineno) - first + 1
                    if lines > max_lines:
                        where = path.relative_to(root)
                        found.append(f"{where}:{node.lineno} {node.name} ({lines} lines)")
    return found


def test_no_function_over_70_lines() -> None:
    assert long_functions(ROOT, MAX_LINES) == []


def test_the_check_sees_a_long_function(tmp_path: Path) -> None:
    body = "\n".join(f"    x{i} = {i}" for i in range(MAX_LINES))
    (tmp_path / "jobs").mkdir()
    (tmp_path / "jobs" / "long.py").write_text(f"def short():\n    pass\n\n\ndef long():\n{body}\n")
    assert long_functions(tmp_path, MAX_LINES) == [f"jobs/long.py:5 long ({MAX_LINES + 1} lines)"]
