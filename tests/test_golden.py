"""Golden files for `fuzzpy check`.

* Every `X.fz` under examples/ or tests/golden/ with an `X.check.expected`
  beside it must check with exactly that output (`fuzzpy check X.fz`).
* Every `.fz` file in a `rejected/` folder must be rejected, and each
  `// expect: FZnnn` comment names a code that must be reported at that line.

`FUZZPY_UPDATE_GOLDEN=1 pytest tests/test_golden.py` writes the expected
files afresh; review every number in the diff against the rules before
keeping it.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

from fuzzpy.checker import check_program
from fuzzpy.checker.report import text_report
from fuzzpy.language.diagnostics import FuzzError
from fuzzpy.release.pipeline import load_source, parse

ROOT = Path(__file__).resolve().parent.parent
SEARCHED = [ROOT / "examples", ROOT / "tests" / "golden"]
EXPECT = re.compile(r"//\s*expect:\s*(FZ\d{3})")


def _files(predicate) -> list[Path]:
    found: list[Path] = []
    for folder in SEARCHED:
        found.extend(p for p in sorted(folder.rglob("*.fz")) if predicate(p))
    return found


def _with_expected(path: Path) -> bool:
    return path.with_suffix(".check.expected").exists()


def _rejected(path: Path) -> bool:
    return path.parent.name == "rejected"


def _id(path: Path) -> str:
    return str(path.relative_to(ROOT))


#: `// golden: --neighbours replace-one --rows N` in a file: its golden output
#: is `fuzzpy check --neighbours replace-one --rows N`'s
GOLDEN_OPTIONS = re.compile(r"//\s*golden:\s*--neighbours\s+(\S+)(?:\s+--rows\s+(\d+))?")


def _check_text(path: Path) -> str:
    from fuzzpy.accounting.neighbours import Neighbours
    from fuzzpy.checker.report import under

    source = load_source(path)
    found = GOLDEN_OPTIONS.search(source.text)
    neighbours = Neighbours() if found is None else Neighbours(found[1], int(found[2]) if found[2] else None)
    with under(neighbours):
        return text_report(check_program(parse(source)), None) + "\n"


@pytest.mark.parametrize("path", _files(_with_expected), ids=_id)
def test_checked_output_matches(path: Path) -> None:
    golden = path.with_suffix(".check.expected")
    if os.environ.get("FUZZPY_UPDATE_GOLDEN"):
        golden.write_text(_check_text(path), encoding="utf-8")
    assert _check_text(path) == golden.read_text(encoding="utf-8")


@pytest.mark.parametrize("path", _files(_rejected), ids=_id)
def test_rejected_with_expected_codes(path: Path) -> None:
    text = path.read_text(encoding="utf-8")
    expected = {
        (line_number, code)
        for line_number, line in enumerate(text.splitlines(), 1)
        for code in EXPECT.findall(line)
    }
    assert expected, f"{path.name} has no `// expect: FZnnn` comment"
    with pytest.raises(FuzzError) as info:
        check_program(parse(load_source(path)))
    reported = {(d.span.line, d.code) for d in info.value.diagnostics}
    assert expected <= reported, f"expected {sorted(expected)}, reported {sorted(reported)}"


def test_every_example_is_golden_or_rejected() -> None:
    """No example is left without an expectation."""
    loose = [p for p in _files(lambda p: not _rejected(p) and not _with_expected(p)) if not p.name.startswith("_")]
    if os.environ.get("FUZZPY_UPDATE_GOLDEN"):
        for path in loose:
            path.with_suffix(".check.expected").write_text(_check_text(path), encoding="utf-8")
        return
    assert [_id(p) for p in loose] == []
