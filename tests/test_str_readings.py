"""Two `str` readings that replaced pyarrow calls on one-element lists
(issue 24: such a call imports pandas), checked against pyarrow itself:

* `categories.trimmed` (the checker's FZ221: a category with surrounding
  whitespace) trims exactly what Arrow's `utf8_trim_whitespace` trims from
  a cell, for every code point and every arrangement of them;
* the CSV header line is well formed by Python's `re` exactly when RE2 (via
  `pyarrow.compute.match_substring_regex`, as the data lines still are)
  says so.
"""

from __future__ import annotations

import sys

import pyarrow as pa
import pyarrow.compute as pc
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fuzzpy.data.csvframe import _WELL_FORMED_HEADER, WELL_FORMED_LINE, frame
from fuzzpy.language.categories import TRIMMED, trimmed
from fuzzpy.language.diagnostics import FuzzError

POINTS = [chr(c) for c in range(sys.maxunicode + 1) if not 0xD800 <= c <= 0xDFFF]


def _arrow_trim(texts: list[str]) -> list[str]:
    return [str(t) for t in pc.utf8_trim_whitespace(pa.array(texts, pa.string())).to_pylist()]


def test_trimmed_agrees_with_arrow_around_every_code_point() -> None:
    texts = [f"{p}x{p}" for p in POINTS] + [f"x{p}y" for p in POINTS[:0x3100]]
    assert [trimmed(t) for t in texts] == _arrow_trim(texts)


@settings(max_examples=300, deadline=None, derandomize=True)
@given(st.lists(st.sampled_from([*TRIMMED, "a", "\u200b", "\ufeff", "\u180e", "é", "-", "\x00"]), max_size=12))
def test_trimmed_agrees_with_arrow_on_runs(chars: list[str]) -> None:
    """Runs of whitespace and near-whitespace (zero-width space, BOM,
    Mongolian vowel separator: not trimmed by either) on both sides."""
    text = "".join(chars)
    assert trimmed(text) == _arrow_trim([text])[0]


FIELD = st.one_of(
    st.text(alphabet=st.sampled_from('ab ,"\r\n\'é'), max_size=6),
    st.builds(lambda t: '"' + t + '"', st.text(alphabet=st.sampled_from('ab,"\r\n '), max_size=5)),
)


@settings(max_examples=400, deadline=None, derandomize=True)
@given(st.lists(FIELD, min_size=1, max_size=5), st.sampled_from(["", "\n", "\r\n", "\r", "\n\n"]))
def test_header_match_agrees_with_re2(fields: list[str], end: str) -> None:
    line = (",".join(fields) + end).encode("utf-8")
    by_re2 = pc.match_substring_regex(pa.array([line], pa.binary()), WELL_FORMED_LINE)[0].as_py()
    assert (_WELL_FORMED_HEADER.fullmatch(line) is not None) == by_re2, line


@pytest.mark.parametrize(("header", "ok"), [
    (b'name,"age",zip\n', True),
    (b'"a ""quoted"" name",b\r\n', True),
    (b"5'11\",height\n", True),
    (b'"open,b\n', False),
    (b'a,b\rc\n', False),
])
def test_a_header_is_refused_only_when_not_a_csv_line(header: bytes, ok: bool) -> None:
    data = header + b"1,2,3\n"
    if ok:
        assert frame(data, "h.csv").names
    else:
        with pytest.raises(FuzzError) as caught:
            frame(data, "h.csv")
        assert caught.value.diagnostics[0].code == "FZ505"
