"""`group` over a public list of categories (issue 12): typing, refusals,
labelled releases, out-of-list rows dropped and counted for the owner.

The categorical form must be typed exactly as the int form (a row moves at
most one bucket: Reed & Pierce 2010, language design section 3), so every
comparison below is against the same program written with `group[k]`.
"""

from __future__ import annotations

import json
import re
import unicodedata
from collections import Counter
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fuzzpy.cli import main
from fuzzpy.language.categories import bucket_indices
from fuzzpy.ledger.book import Ledger

HEADER = "region,age\n"
TYPE = "type P = { region : string, age : num };\n"
CATEGORICAL = TYPE + """let regions = ["north", "south", "east"];
def cs (db : bag P) : vec[1] num = counts (group[regions] (fun r -> r.region) db);
def h (db : bag P) : fuzzy (vec[1] num) = laplace[0.5] (counts (group["north", "south", "east"] (fun r -> r.region) db));
def g (db : bag P) : fuzzy (vec[2] num) = gauss[2] (counts (group[regions] (fun r -> r.region) db));
def twice (db : bag P) = { sample a = h db; sample b = h db; return (a, b) };
"""
INT_FORM = TYPE + """let k = 3;
def key (r : P) : int = if r.region == "north" then 0 else if r.region == "south" then 1 else if r.region == "east" then 2 else 3;
def cs (db : bag P) : vec[1] num = counts (group[k] key db);
def h (db : bag P) : fuzzy (vec[1] num) = laplace[0.5] (counts (group[3] key db));
def g (db : bag P) : fuzzy (vec[2] num) = gauss[2] (counts (group[k] key db));
def twice (db : bag P) = { sample a = h db; sample b = h db; return (a, b) };
"""


def _check(capsys: pytest.CaptureFixture[str], tmp_path: Path, text: str) -> tuple[int, dict]:
    path = tmp_path / "p.fz"
    path.write_text(text, encoding="utf-8")
    code = main(["check", str(path), "--json"])
    return code, json.loads(capsys.readouterr().out)


def _run(capsys: pytest.CaptureFixture[str], tmp_path: Path, text: str, definition: str, rows: str,
         *extra: str) -> tuple[int, str, str]:
    program, data = tmp_path / "p.fz", tmp_path / "d.csv"
    program.write_text(text, encoding="utf-8")
    data.write_text(HEADER + rows, encoding="utf-8")
    code = main(["run", str(program), definition, "--data", f"db={data}", "--budget", "100,1e-3",
                 "--ledger", str(tmp_path / "l.sqlite"), "--seed", "7", *extra])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


# ---------------------------------------------------------------- checker


def test_typed_exactly_as_the_int_form(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    code, categorical = _check(capsys, tmp_path, CATEGORICAL)
    assert code == 0, categorical
    code, int_form = _check(capsys, tmp_path, INT_FORM)
    assert code == 0, int_form
    ints = {d["name"]: d for d in int_form["definitions"]}
    for definition in categorical["definitions"]:
        other = ints[definition["name"]]
        assert definition["type"] == other["type"]
        assert definition["params"] == other["params"]
        assert definition["privacy"] == other["privacy"]
    by_name = {d["name"]: d for d in categorical["definitions"]}
    assert by_name["cs"]["params"][0]["sensitivity"] == 1
    assert by_name["h"]["privacy"]["db"]["epsilon"] == 0.5
    assert by_name["twice"]["privacy"]["db"]["epsilon"] == 1.0
    assert by_name["g"]["privacy"]["db"]["delta"] > 0


REFUSED = {
    "duplicate": ('group["a", "b", "a"] (fun r -> r.region) db', "FZ219"),
    "duplicate in a let": ('group[dup] (fun r -> r.region) db', "FZ219"),
    "whitespace": ('group["a", "b "] (fun r -> r.region) db', "FZ221"),
    "non-breaking space": ('group["\u00a0a"] (fun r -> r.region) db', "FZ221"),
    "int key function": ('group["a", "b"] (fun r -> r.age) db', "FZ201"),
    "string key, int form": ("group[2] (fun r -> r.region) db", "FZ201"),
    "local list": ('{ let xs = ["a", "b"]; group[xs] (fun r -> r.region) db }', "FZ220"),
    "parameter list": ("(fun (xs : list string) -> group[xs] (fun r -> r.region) db) regions", "FZ220"),
    "hidden category list": ('(fun (regions : int) -> group[regions] (fun r -> r.region) db) 2', "FZ220"),
    "list literal in brackets": ('group[["a", "b"]] (fun r -> r.region) db', "FZ220"),
    "mixed": ('group["a", 2] (fun r -> r.region) db', "FZ220"),
    "two lists": ("group[regions, regions] (fun r -> r.region) db", "FZ220"),
    "int form, two numbers": ("group[2, 3] (fun r -> 1) db", "FZ208"),
    "computed category": ('group["a" , r] (fun r -> r.region) db', "FZ220"),
}


@pytest.mark.parametrize(("body", "code"), list(REFUSED.values()), ids=list(REFUSED))
def test_refusals_have_their_codes(capsys: pytest.CaptureFixture[str], tmp_path: Path, body: str, code: str) -> None:
    text = TYPE + 'let regions = ["a", "b"];\nlet dup = ["x", "y", "x"];\n' + f"def f (db : bag P) = {body};\n"
    status, document = _check(capsys, tmp_path, text)
    assert status == 1
    assert [d["code"] for d in document["diagnostics"]] == [code]


@pytest.mark.parametrize("value", ["[]", '["a", 1]', '[("a" : string)]'])
def test_a_top_level_let_is_a_number_or_a_non_empty_list_of_string_literals(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, value: str
) -> None:
    status, document = _check(capsys, tmp_path, f"let xs = {value};\n")
    assert status == 1 and [d["code"] for d in document["diagnostics"]] == ["FZ212"]


def test_a_category_list_is_a_public_list_of_strings(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    text = TYPE + 'let regions = ["a", "b"];\ndef n = len regions;\ndef f (db : bag P) : fuzzy num = laplace[1] (size db + len regions);\n'
    status, document = _check(capsys, tmp_path, text)
    assert status == 0, document
    by_name = {d["name"]: d for d in document["definitions"]}
    assert by_name["n"]["type"] == "int"
    assert by_name["f"]["privacy"]["db"]["epsilon"] == 1


# ---------------------------------------------------------------- keys to buckets


@settings(max_examples=200, deadline=None)
@given(
    st.lists(st.text(max_size=3), min_size=1, max_size=6, unique=True),
    st.lists(st.text(max_size=3), max_size=40),
)
def test_bucket_indices_are_exact_positions(categories: list[str], keys: list[str]) -> None:
    column = np.empty(len(keys), dtype=object)
    column[:] = keys
    found = bucket_indices(column, tuple(categories)).tolist()
    assert found == [categories.index(k) if k in categories else -1 for k in keys]


# ---------------------------------------------------------------- runtime


ROWS = "north,1\nsouth,2\n  north  ,3\neast,4\nNorth,5\nunknown,6\nnorth,7\n"


def _value(tmp_path: Path, text: str, definition: str, rows: str) -> object:
    """A definition's value on the rows, in process (deterministic ones too)."""
    from fuzzpy.data.loader import load_bag
    from fuzzpy.language.source import Source
    from fuzzpy.release.pipeline import check, parse, run

    checked = check(parse(Source("p.fz", text)))
    data = tmp_path / "v.csv"
    data.write_text(HEADER + rows, encoding="utf-8")
    bag = load_bag(data, checked.definitions[definition].params[0].type)
    return run(checked, definition, {"db": bag}, seed=7)


def test_counts_are_labelled_and_outside_rows_dropped(tmp_path: Path) -> None:
    from fuzzpy.runtime.values import render, to_json

    value = _value(tmp_path, CATEGORICAL, "cs", ROWS)
    assert render(value) == '{"north": 3, "south": 1, "east": 1}'
    assert to_json(value) == {"north": 3, "south": 1, "east": 1}


def test_released_with_labels_in_text(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    code, out, err = _run(capsys, tmp_path, CATEGORICAL, "h", ROWS)
    assert code == 0, err
    line = out.splitlines()[0]
    assert re.fullmatch(r'released:  \{"north": -?[0-9.e-]+, "south": -?[0-9.e-]+, "east": -?[0-9.e-]+\}', line), line


def test_released_with_labels_in_json_and_the_outside_rows_audited(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    code, out, err = _run(capsys, tmp_path, CATEGORICAL, "h", ROWS, "--json")
    assert code == 0, err
    document = json.loads(out)
    assert list(document["released"]) == ["north", "south", "east"]
    assert "outside" not in out  # the analyst never sees the audit
    (entry,) = Ledger(str(tmp_path / "l.sqlite")).history()
    assert entry.row_rules is not None and entry.row_rules["group_keys_outside"] == 2  # "North", "unknown"
    assert list(entry.released) == ["north", "south", "east"]  # the ledger keeps the declared order (a12)


def test_noise_keeps_the_labels(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    code, out, err = _run(capsys, tmp_path, CATEGORICAL, "g", ROWS, "--json")
    assert code == 0, err
    released = json.loads(out)["released"]
    assert list(released) == ["north", "south", "east"]
    assert all(isinstance(v, float) for v in released.values())
    code, out, _ = _run(capsys, tmp_path, CATEGORICAL, "twice", ROWS, "--json")
    first, second = json.loads(out)["released"]
    assert list(first) == list(second) == ["north", "south", "east"]


def test_the_same_noise_as_the_int_form(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    _, labelled, _ = _run(capsys, tmp_path / "a" if (tmp_path / "a").mkdir() is None else tmp_path, CATEGORICAL,
                          "h", ROWS, "--json")
    _, plain, _ = _run(capsys, tmp_path / "b" if (tmp_path / "b").mkdir() is None else tmp_path, INT_FORM,
                       "h", ROWS, "--json")
    assert list(json.loads(labelled)["released"].values()) == json.loads(plain)["released"]


def test_the_int_form_is_unlabelled(tmp_path: Path) -> None:
    from fuzzpy.runtime.values import to_json

    assert to_json(_value(tmp_path, INT_FORM, "cs", ROWS)) == [3, 1, 1]


MORE = CATEGORICAL + """
def scaled (db : bag P) : vec[1] num = 2 * cs db;
def tab (db : bag P) = tabulate regions (fun c -> size (filter (fun r -> r.region == c) db));
def tab_dup (db : bag P) = tabulate ["north", "north"] (fun c -> size (filter (fun r -> r.region == c) db));
def tab_int (db : bag P) = tabulate [1, 2] (fun c -> size (filter (fun r -> r.age < c) db));
"""


@pytest.mark.parametrize(("definition", "released"), [
    ("scaled", [6, 2, 2]),  # arithmetic does not keep positions' names
    ("tab", {"north": 3, "south": 1, "east": 1}),
    ("tab_dup", [3, 3]),  # labels must be distinct to name entries
    ("tab_int", [0, 1]),
])
def test_which_operations_keep_labels(tmp_path: Path, definition: str, released: object) -> None:
    from fuzzpy.runtime.values import to_json

    assert to_json(_value(tmp_path, MORE, definition, ROWS)) == released


@pytest.mark.parametrize("spelling", ["Zürich", unicodedata.normalize("NFD", "Zürich"), "zürich", "Zurich"])
def test_keys_compare_by_code_points(tmp_path: Path, spelling: str) -> None:
    from fuzzpy.runtime.values import to_json

    text = TYPE + 'def cs (db : bag P) = counts (group["Zürich"] (fun r -> r.region) db);\n'
    inside = spelling == unicodedata.normalize("NFC", "Zürich")
    assert to_json(_value(tmp_path, text, "cs", f"{spelling},1\n")) == {"Zürich": 1 if inside else 0}


@settings(max_examples=25, deadline=None)
@given(st.lists(st.sampled_from(["north", "south", "east", "west", "North", " south", "e ast"]), max_size=30))
def test_counts_match_a_reference(keys: list[str]) -> None:
    import tempfile

    with tempfile.TemporaryDirectory() as folder:
        released = _value(Path(folder), CATEGORICAL, "cs", "".join(f"{k},1\n" for k in keys))
    trimmed = Counter(k.strip() for k in keys)
    assert released.tolist() == [trimmed["north"], trimmed["south"], trimmed["east"]]
    assert released.labels == ("north", "south", "east")


# ---------------------------------------------------------------- engines


def test_duckdb_releases_and_audits_as_memory(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    results = []
    for engine in ("memory", "duckdb"):
        folder = tmp_path / engine
        folder.mkdir()
        code, out, err = _run(capsys, folder, MORE, "h", ROWS, "--json", "--engine", engine)
        assert code == 0, err
        (entry,) = Ledger(str(folder / "l.sqlite")).history()
        results.append((json.loads(out)["released"], entry.row_rules))
    assert results[0] == results[1]
    assert results[0][1]["group_keys_outside"] == 2
