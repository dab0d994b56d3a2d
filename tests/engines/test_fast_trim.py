"""`scan.fast_trim` (DuckDB's trim called only where the first or last code
point is one it removes) is DuckDB's trim, and Arrow's, for every text:
each trimmed character and other code points at either end, before and
after combining marks, prepended marks and clusters that group a space
with its neighbours (a grapheme cluster is not a code point)."""

from __future__ import annotations

import duckdb
import pyarrow as pa
import pyarrow.compute as pc
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fuzzpy.engines.scan import TRIMMED, fast_trim
from fuzzpy.engines.sql import DIALECTS

CHARS = DIALECTS["duckdb"].string(TRIMMED)
ODD = ["\u0301", "\u0600", "\u200d", "\u200b", "\ufeff", "\U0001f468", "\u1100", "\u1161", "\r\n", "\u00ad",
       "é", "a", "", "'", "\x00", "\u2060", "\u180e"]


def _both(texts: list[str]) -> list[tuple[str, str]]:
    with duckdb.connect() as con:
        con.register("t", pa.table({"s": pa.array(texts, pa.string())}))
        return con.execute(f"SELECT trim(s, {CHARS}), {fast_trim('s', CHARS)} FROM t").fetchall()


def test_every_trimmed_character_at_each_end_next_to_odd_code_points() -> None:
    texts = []
    for w in TRIMMED + " ":
        for o in ODD:
            texts += [w, w + o, o + w, o + w + o, w + o + w, "x" + w, w + "x", o + "x" + w, w + "x" + o,
                      "\u0600" + w, w + "\u0301", "x\u0600" + w, w + w + o]
    for trimmed, fast in _both(texts):
        assert fast == trimmed
    arrow = pc.utf8_trim_whitespace(pa.array(texts)).to_pylist()
    assert [f for _, f in _both(texts)] == arrow


@settings(max_examples=150, deadline=None)
@given(st.lists(st.text(alphabet=st.sampled_from([c for c in list(TRIMMED) + ODD + ["b", "ß", "日"] if len(c) == 1]),
                             max_size=6),
                min_size=1, max_size=40))
@pytest.mark.slow  # 10-30 s: the slow job runs it (the default suite keeps its 10 minutes)
def test_random_texts(texts: list[str]) -> None:
    texts = [t.replace("\x00", "") for t in texts]
    assert [f for _, f in _both(texts)] == [t for t, _ in _both(texts)]
    assert [f for _, f in _both(texts)] == pc.utf8_trim_whitespace(pa.array(texts)).to_pylist()


def test_may_trim_holds_wherever_trimming_changes_a_text() -> None:
    from fuzzpy.engines.scan import may_trim

    texts = [w + o for w in TRIMMED + "x" for o in ODD] + [o + w for w in TRIMMED + "x" for o in ODD] + [""]
    with duckdb.connect() as con:
        con.register("t", pa.table({"s": pa.array(texts, pa.string())}))
        rows = con.execute(f"SELECT s, trim(s, {CHARS}), {may_trim(DIALECTS['duckdb'], 's')} FROM t").fetchall()
    for text, trimmed, may in rows:
        assert may or trimmed == text
