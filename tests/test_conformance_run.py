"""`run` / `ledger` as a user drives them from the design page (sections 6-7):
programs and data files the team did not ship, exit codes and numbers.

Each test here pins a bug found by running user-written programs on
user-written CSVs; the comment above it names the input that showed it.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from fuzzpy.cli import main
from fuzzpy.ledger.book import Ledger
from tests.notes import without_registration

COUNTS = """
type Row = { age : num, name : string, ok : bool, kids : int };
def n (db : bag Row) : fuzzy num = laplace[0.5] (size db);
def tenth (db : bag Row) : fuzzy num = laplace[0.1] (size db);
def every (db : bag Row) : fuzzy num =
  laplace[0.5] (size (filter (fun r -> r.age == r.age && r.name == r.name && r.ok == r.ok && r.kids == r.kids) db));
"""

TWO_BAGS = """
type A = { x : num };
type B = { y : int };
def two (a : bag A) (b : bag B) : fuzzy (num, num) = {
  sample n = laplace[0.5] (size a);
  sample m = laplace[0.25] (size b);
  return (n, m)
};
"""

PUBLIC = """
type P = { age : num };
def over (t : num) (db : bag P) : fuzzy num = laplace[0.5] (size (filter (fun p -> p.age > t) db));
def pick (b : bool) (db : bag P) : fuzzy num =
  laplace[0.5] (size (filter (fun p -> if b then p.age > 10 else p.age < 10) db));
"""

BAG_NUM = "def total (xs : bag num) : fuzzy num = laplace[0.1] (sum[0, 10] xs);\n"


@pytest.fixture(autouse=True)
def _private_ledger(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """No test may touch the real per-user ledger."""
    monkeypatch.setenv("FUZZPY_LEDGER", str(tmp_path / "default-ledger.sqlite"))


def _write(tmp_path: Path, name: str, text: str | bytes) -> str:
    path = tmp_path / name
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(text, encoding="utf-8")
    return str(path)


def _run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(["run", *argv])
    captured = capsys.readouterr()
    return code, captured.out, without_registration(captured.err)  # a first run's note (issue 31, F1)


def _codes(err: str) -> list[str]:
    return [part.split("]")[0] for part in err.split("error[")[1:]]


@pytest.fixture
def rows(tmp_path: Path) -> str:
    # other column order, an extra column, a quoted field with a comma, CRLF
    text = 'ok,extra,kids,age,name\r\ntrue,x,1,34.5,"carol, jr"\r\nFALSE,y,2,17,bob\r\n1,z,0,70,al\r\n'
    return _write(tmp_path, "rows.csv", text)


# Input: `--seed -5` -> "internal error: ValueError: expected non-negative integer".
def test_negative_seed_is_a_usage_error(capsys: pytest.CaptureFixture[str], tmp_path: Path, rows: str) -> None:
    program = _write(tmp_path, "p.fz", COUNTS)
    code, out, err = _run(capsys, program, "n", "--data", f"db={rows}", "--budget", "1", "--seed", "-5")
    assert (code, out, _codes(err)) == (2, "", ["FZ523"])


# Input: `--arg t=1e400` -> "internal error: OverflowError".
def test_a_public_number_beyond_a_double_is_a_usage_error(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, rows: str
) -> None:
    program = _write(tmp_path, "p.fz", PUBLIC)
    code, out, err = _run(capsys, program, "over", "--data", f"db={rows}", "--budget", "1", "--arg", "t=1e400")
    assert (code, out, _codes(err)) == (2, "", ["FZ509"])


# Input: `--delta abc` -> "internal error: BudgetError". Now refused while the
# command line is read (FZ703, the usage error of every command).
def test_a_release_delta_that_is_no_number_is_a_usage_error(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, rows: str
) -> None:
    program = _write(tmp_path, "p.fz", COUNTS)
    ledger = str(tmp_path / "l.sqlite")
    code, out, err = _run(
        capsys, program, "n", "--data", f"db={rows}", "--budget", "1", "--ledger", ledger, "--delta", "abc"
    )
    assert (code, out, _codes(err)) == (2, "", ["FZ703"])
    assert not Path(ledger).exists() or Ledger(ledger).history() == []


# Input: `--arg b=1` for a `bool` parameter, though data files may spell booleans 1/0.
def test_a_public_bool_may_be_spelled_one_or_zero(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    program = _write(tmp_path, "p.fz", PUBLIC)
    data = _write(tmp_path, "ages.csv", "age\n5\n25\n35\n")
    released = []
    for spelling in ("1", "true", "0", "FALSE"):
        code, out, err = _run(
            capsys, program, "pick", "--data", f"db={data}", "--budget", "100",
            "--ledger", str(tmp_path / "l.sqlite"), "--arg", f"b={spelling}", "--seed", "3", "--json",
        )
        assert code == 0, err
        released.append(json.loads(out)["released"])
    # same seed, same noise: the counts (2 over ten, 1 under) differ by exactly 1
    assert released[0] == released[1]
    assert released[2] == released[3]
    assert released[0] - released[2] == pytest.approx(1)


# Input: `--dataset shared` (no PARAM=) with two bag parameters: silently ignored,
# both datasets were keyed by their content hash instead.
def test_a_bare_dataset_name_with_two_bags_is_a_usage_error(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    program = _write(tmp_path, "p.fz", TWO_BAGS)
    a, b = _write(tmp_path, "a.csv", "x\n1\n"), _write(tmp_path, "b.csv", "y\n2\n")
    ledger = str(tmp_path / "l.sqlite")
    code, out, err = _run(
        capsys, program, "two", "--data", f"a={a}", "--data", f"b={b}",
        "--budget", "1", "--ledger", ledger, "--dataset", "shared",
    )
    assert (code, out, _codes(err)) == (2, "", ["FZ508"])
    assert Ledger(ledger).history() == []


# Input: `--dataset a=same --dataset b=same --budget 0.6` for a release costing
# 0.5 + 0.25 in `same`: each quote fitted alone, so the data was read (a missing
# file gave exit 2) before the charge refused it. It must be refused first.
def test_two_parameters_on_one_dataset_are_quoted_together_before_reading_data(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    program = _write(tmp_path, "p.fz", TWO_BAGS)
    a = _write(tmp_path, "a.csv", "x\n1\n")
    ledger = str(tmp_path / "l.sqlite")
    common = ["--ledger", ledger, "--dataset", "a=same", "--dataset", "b=same"]
    missing = str(tmp_path / "missing.csv")
    code, out, err = _run(capsys, program, "two", "--data", f"a={a}", "--data", f"b={missing}",
                          "--budget", "0.6", *common)
    assert (code, out, _codes(err)) == (3, "", ["FZ601"])
    b = _write(tmp_path, "b.csv", "y\n2\n")
    code, out, err = _run(capsys, program, "two", "--data", f"a={a}", "--data", f"b={b}",
                          "--budget", "0.6", *common)
    assert (code, out) == (3, "")
    assert Ledger(ledger).history() == []


# Input: an int column holding 99999999999999999999: "values of type string are
# not ints", with no row named. Now the row is private: `run` drops it and says
# nothing; the data owner's `dataset check` names its line and column.
def test_an_int_beyond_64_bits_is_dropped_and_located_for_the_owner(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    program = _write(tmp_path, "p.fz", COUNTS)
    data = _write(tmp_path, "d.csv", "name,kids,age,ok\na,1,3,true\nb,99999999999999999999,3,true\n")
    code, out, err = _run(capsys, program, "n", "--data", f"db={data}", "--budget", "1")
    assert (code, err) == (0, "")
    assert main(["dataset", "check", data, "--type", "kids=int"]) == 0
    assert "d.csv:3:3" in capsys.readouterr().err


# Input: a `bag num` file with a header and no rows -> "internal error: IndexError".
def test_a_header_only_file_is_an_empty_bag(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    program = _write(tmp_path, "p.fz", BAG_NUM)
    data = _write(tmp_path, "v.csv", "v\n")
    code, out, err = _run(capsys, program, "total", "--data", f"xs={data}", "--budget", "1",
                          "--seed", "1", "--json")
    assert code == 0, err
    assert json.loads(out)["charged"]["epsilon"] == pytest.approx(1)


# Input: a header `age,age,...` for a row type with `age`: the first was used silently.
def test_a_needed_column_named_twice_is_refused(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    program = _write(tmp_path, "p.fz", COUNTS)
    data = _write(tmp_path, "d.csv", "age,age,name,kids,ok\n1,2,a,1,true\n")
    ledger = str(tmp_path / "l.sqlite")
    code, out, err = _run(capsys, program, "n", "--data", f"db={data}", "--budget", "1", "--ledger", ledger)
    assert (code, out, _codes(err)) == (2, "", ["FZ505"])
    assert Ledger(ledger).history() == []
    unneeded = _write(tmp_path, "e.csv", "x,x,age,name,kids,ok\n1,2,3,a,1,true\n")
    code, _, err = _run(capsys, program, "n", "--data", f"db={unneeded}", "--budget", "1", "--ledger", ledger)
    assert code == 0, err


def test_user_csv_variants_load_with_the_right_values(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, rows: str
) -> None:
    """Column order, extra columns, quoted commas, CRLF and true/FALSE/1 booleans."""
    program = _write(tmp_path, "p.fz", """
type Row = { age : num, name : string, ok : bool, kids : int };
def stats (db : bag Row) : fuzzy (num, num, num, num) = {
  sample a = laplace[1000] (size (filter (fun r -> r.ok) db));
  sample b = laplace[1000] (size (filter (fun r -> r.name == "carol, jr") db));
  sample c = laplace[1000 / 5] (sum[0, 5] (map (fun r -> r.kids) db));
  sample d = laplace[1000] (size (filter (fun r -> r.age > 18) db));
  return (a, b, c, d)
};
""")
    code, out, err = _run(capsys, program, "stats", "--data", f"db={rows}", "--budget", "1e6",
                          "--seed", "2", "--json")
    assert code == 0, err
    assert json.loads(out)["released"] == pytest.approx([2, 1, 3, 2], abs=0.1)


def test_bad_rows_are_dropped_silently_and_bad_schemas_refused_before_the_charge(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """Was: every file below exited 2. A bad row is private (dropped: the
    release is the clean file's, and nothing is said); a bad schema is public
    (exit 2, nothing charged). `every` reads every column (a count reads
    none: its rows are not dropped for a bad cell, issue 31)."""
    program = _write(tmp_path, "p.fz", COUNTS)
    header = "name,kids,age,ok\n"
    clean = header + "z,0,1,false\n"

    def released(name: str, text: str | bytes, typed: bool = True) -> tuple[int, object, str]:
        data = _write(tmp_path, name, text)
        ledger = str(tmp_path / f"{name}.sqlite")
        given = ["--budget", "1"]
        if typed:  # the holder registers the row type (a first run would type each column from every cell)
            assert main(["dataset", "register", "d", str(data), "--budget", "1", "--ledger", ledger, "--type",
                         "age=num", "--type", "name=string", "--type", "ok=bool", "--type", "kids=int"]) == 0
            capsys.readouterr()
            given = ["--dataset", "d"]
        code, out, err = _run(capsys, program, "every", "--data", f"db={data}", *given, "--seed", "4",
                              "--ledger", ledger, "--json")
        return code, json.loads(out)["released"] if code == 0 else None, err if code == 0 else err + out

    expected = released("clean.csv", clean)
    rows = {
        "missing.csv": clean + "a,1,,true\n",
        "bad_bool.csv": clean + "a,1,3,yes\n",
        "huge.csv": clean + "a,1,1e400,true\n",
        "latin1.csv": clean.encode() + b"a\xe9,1,3,true\n",
    }
    for name, text in rows.items():
        assert released(name, text) == expected, name
    # a first run types a CSV column from every cell, as `dataset register` does (issue 31): `1.5`
    # makes `kids` a num column, refused as `int` before any charge
    assert released("float_int.csv", clean + "a,1.5,3,true\n") == expected
    code, _, err = released("float_int_first.csv", clean + "a,1.5,3,true\n", typed=False)
    assert code == 2 and "FZ542" in err and Ledger(str(tmp_path / "float_int_first.csv.sqlite")).history() == []
    ledger = str(tmp_path / "l.sqlite")
    for name, text, code in [("empty.csv", "", "FZ502"), ("no_column.csv", "name,kids,ok\na,1,true\n", "FZ503")]:
        data = _write(tmp_path, name, text)
        result = _run(capsys, program, "n", "--data", f"db={data}", "--budget", "1", "--ledger", ledger)
        assert (result[0], result[1], _codes(result[2])) == (2, "", [code]), name
    assert Ledger(ledger).history() == []


def test_budget_is_spent_exactly_and_refused_before_the_data(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, rows: str
) -> None:
    """Ten releases of 0.1 spend a budget of 1 exactly; the eleventh is refused
    (exit 3, nothing on stdout) even when its data file does not exist."""
    program = _write(tmp_path, "p.fz", COUNTS)
    ledger = str(tmp_path / "l.sqlite")
    base = ["--ledger", ledger, "--dataset", "people"]
    for _ in range(10):
        code, _, err = _run(capsys, program, "tenth", "--data", f"db={rows}", "--budget", "1.0", *base)
        assert code == 0, err
    code, out, err = _run(capsys, program, "tenth", "--data", f"db={tmp_path / 'gone.csv'}", *base)
    assert (code, out, _codes(err)) == (3, "", ["FZ601"])
    assert len(Ledger(ledger).history()) == 10


def test_json_shape_of_section_7(capsys: pytest.CaptureFixture[str], tmp_path: Path, rows: str) -> None:
    program = _write(tmp_path, "p.fz", COUNTS)
    code, out, err = _run(capsys, program, "n", "--data", f"db={rows}", "--budget", "1.0,1e-6",
                          "--ledger", str(tmp_path / "l.sqlite"), "--json")
    assert code == 0, err
    document = json.loads(out)
    assert isinstance(document["released"], float)
    assert (document["charged"]["epsilon"], document["charged"]["delta"]) == (0.5, 0.0)
    assert (document["remaining"]["epsilon"], document["remaining"]["delta"]) == (0.5, 1e-6)
    assert document["private"] is True


# Input: `--arg t=3 --arg t=4`, `--data db=a.csv --data db=b.csv`, `--dataset a --dataset b`:
# the last silently won.
@pytest.mark.parametrize("option", ["--data", "--dataset"])
def test_an_option_given_twice_for_one_parameter_is_a_usage_error(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, rows: str, option: str
) -> None:
    program = _write(tmp_path, "p.fz", COUNTS)
    ledger = str(tmp_path / "l.sqlite")
    twice = [option, f"db={rows}", option, f"db={rows}"] if option == "--data" else [
        "--data", f"db={rows}", option, "first", option, "second"]
    code, out, err = _run(capsys, program, "n", *twice, "--budget", "1", "--ledger", ledger)
    assert (code, out, _codes(err)) == (2, "", ["FZ508"])
    assert Ledger(ledger).history() == []


# Input: `return (a * 1e308 * 10)` after `sample a = laplace[1] (size db)`:
# `--json` printed `"released": Infinity`, which is not JSON.
def test_a_non_finite_release_stays_valid_json(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    program = _write(tmp_path, "p.fz", """
type R = { age : num };
def big (db : bag R) : fuzzy (num, num) = {
  sample a = laplace[1] (size db);
  return (abs a * 1e308 * 10 + 1e308, 0 - (abs a * 1e308 * 10 + 1e308))
};
""")
    data = _write(tmp_path, "d.csv", "age\n1\n")
    code, out, err = _run(capsys, program, "big", "--data", f"db={data}", "--budget", "5", "--seed", "1", "--json")
    assert code == 0, err
    # macro-level numbers are exact (docs/semantics.md): the released value is
    # beyond the largest double, and printing it saturates instead of overflowing
    released = json.loads(out, parse_constant=lambda name: pytest.fail(f"non-JSON {name}"))["released"]
    assert released == [sys.float_info.max, -sys.float_info.max]


# Input: `fuzzpy budget --laplace 1e308 --rounds 10 --delta 1e-6` and
# `--gaussian 1e-300`: "internal error: OverflowError" / "ValueError: NaN".
@pytest.mark.parametrize("release", [["--laplace", "1e308", "--rounds", "10"], ["--gaussian", "1e-300"]])
def test_budget_of_extreme_releases_reports_infinity_not_a_crash(
    capsys: pytest.CaptureFixture[str], release: list[str]
) -> None:
    code = main(["budget", *release, "--delta", "1e-6", "--json"])
    document = json.loads(capsys.readouterr().out)
    assert code == 0
    assert document["tightest"]["epsilon"] == "inf"


# Input: a `bag (vec[2] num)` file with 3 columns and `dot v [1, 0]` / `v + [1, 0]`
# in `map`: "internal error: ValueError: shapes (3,) and (2,) not aligned".
# Per-row vectors of different lengths meet as if the shorter were padded with
# zeros (docs/semantics.md, "Vectors"): no failure after the data is read. A
# file whose width does not match the type may instead be refused while it is
# loaded (exit 2, nothing charged).
@pytest.mark.parametrize("body", ["dot v [1, 0]", "dot (v + [1, 0]) [1, 1]"])
def test_vectors_of_different_lengths_never_fail_after_the_data_is_read(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, body: str
) -> None:
    program = _write(tmp_path, "p.fz", f"""
def f (db : bag (vec[2] num)) : fuzzy num = laplace[1] (sum[0, 1] (map (fun v -> {body}) db));
""")
    wide = _write(tmp_path, "wide.csv", "a,b,c\n0.3,0.4,1\n")
    ledger = str(tmp_path / "l.sqlite")
    code, out, err = _run(capsys, program, "f", "--data", f"db={wide}", "--budget", "5", "--seed", "1", "--ledger", ledger)
    if code == 2:
        assert out == "" and all(c.startswith("FZ5") for c in _codes(err))
    else:
        assert code == 0 and out.startswith("released"), err
    narrow = _write(tmp_path, "narrow.csv", "a,b\n0.3,0.4\n")
    code, out, err = _run(capsys, program, "f", "--data", f"db={narrow}", "--budget", "5", "--seed", "1")
    assert code == 0, err


# Input: an int column with `+5` and ` 7 ` (the loader's own patterns accept
# them) -> refused as "not an int"; a string column `01234` keeps its zero.
def test_signed_and_padded_numbers_load(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    program = _write(tmp_path, "p.fz", """
type R = { zip : string, kids : int };
def z (db : bag R) : fuzzy (num, num) = {
  sample a = laplace[1000] (size (filter (fun r -> r.zip == "01234") db));
  sample b = laplace[1000 / 10] (sum[0, 10] (map (fun r -> r.kids) db));
  return (a, b)
};
""")
    data = _write(tmp_path, "z.csv", 'zip,kids\n01234,+5\n1234, 7 \n"01234",-1\n')
    code, out, err = _run(capsys, program, "z", "--data", f"db={data}", "--budget", "1e6", "--seed", "1", "--json")
    assert code == 0, err
    assert json.loads(out)["released"] == pytest.approx([2, 12], abs=0.1)


# Input: `--budget 1e400` -> "internal error: OverflowError".
def test_a_budget_beyond_a_double_is_a_usage_error(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, rows: str
) -> None:
    program = _write(tmp_path, "p.fz", COUNTS)
    code, out, err = _run(capsys, program, "n", "--data", f"db={rows}", "--budget", "1e400")
    assert (code, out, _codes(err)) == (2, "", ["FZ714"])
