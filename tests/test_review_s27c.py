"""A new user's review (s27c, issue 31): a hint that led to a charged
pure-noise release, library mechanisms reading columns they never use,
options silently ignored, the Python API's foreign exceptions, and warnings
a user needed but never saw."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from fuzzpy.cli import main


def call(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


# ---------------------------------------------------------------- 1: a type no cell fits is refused

WHOLE_DECIMALS = "age,town\n" + "".join(f"{20 + i}.0,t{i % 3}\n" for i in range(12))


def test_a_declared_type_no_cell_fits_is_refused_and_nothing_is_written(
        capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    (tmp_path / "ages.csv").write_text(WHOLE_DECIMALS)
    ledger = str(tmp_path / "l.sqlite")
    code, _, err = call(capsys, "dataset", "register", "ages", str(tmp_path / "ages.csv"), "--budget", "3",
                        "--type", "age=int", "--ledger", ledger)
    assert code != 0 and "FZ542" in err and "`age`" in err and "--type age=num" in err
    assert "(`num`)" in err  # the cells' kind
    code, out, _ = call(capsys, "dataset", "list", "--ledger", ledger, "--json")
    assert "ages" not in out  # nothing registered
    assert call(capsys, "dataset", "register", "ages", str(tmp_path / "ages.csv"), "--budget", "3",
                "--ledger", ledger)[0] == 0
    code, _, err = call(capsys, "dataset", "update", "ages", "--type", "age=int", "--ledger", ledger)
    assert code != 0 and "FZ542" in err
    code, out, _ = call(capsys, "dataset", "show", "ages", "--ledger", ledger, "--json")
    columns = {c["name"]: c["type"] for c in json.loads(out)["dataset"]["columns"]}
    assert columns["age"] == "num"  # the update wrote nothing
    code, _, err = call(capsys, "dataset", "update", "ages", "--type", "town=bool", "--ledger", ledger)
    assert code != 0 and "`town`" in err and "--type town=string" in err


def test_a_type_some_cells_fit_is_still_the_owners_choice(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    (tmp_path / "mixed.csv").write_text("age\n30\n40.5\n\n")
    code, out, _ = call(capsys, "dataset", "register", "mixed", str(tmp_path / "mixed.csv"), "--budget", "1",
                        "--type", "age=int", "--ledger", str(tmp_path / "l.sqlite"))
    assert code == 0 and "registered" in out


def test_an_empty_column_typed_by_its_owner_is_refused_unless_filled(
        capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    (tmp_path / "e.csv").write_text("a,b\n1,\n2,\n")
    ledger = str(tmp_path / "l.sqlite")
    code, _, err = call(capsys, "dataset", "register", "e", str(tmp_path / "e.csv"), "--budget", "1",
                        "--type", "b=int", "--ledger", ledger)
    assert code != 0 and "FZ542" in err and "no cell holds a value" in err
    assert call(capsys, "dataset", "register", "e", str(tmp_path / "e.csv"), "--budget", "1",
                "--type", "b=int", "--missing", "b=value:0", "--ledger", ledger)[0] == 0


def test_the_run_hint_never_suggests_a_retype_blind(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    (tmp_path / "ages.csv").write_text(WHOLE_DECIMALS)
    (tmp_path / "p.fz").write_text("type R = { age : int };\n"
                                   "def n (db : bag R) : fuzzy num = laplace[0.5] (size (filter (fun r -> r.age > 40) db));\n")
    code, _, err = call(capsys, "run", str(tmp_path / "p.fz"), "n", "--data", f"db={tmp_path / 'ages.csv'}",
                        "--budget", "1", "--ledger", str(tmp_path / "l.sqlite"))
    assert code != 0 and "FZ542" in err
    assert "dataset update ages --type age=int" not in err
    assert "dataset check ages --type age=int" in err


# ---------------------------------------------------------------- 2: a library mechanism reads what it uses

STATS = """import std.stats;
type Visit = { weight : num, clinic : string, notes : string };
def med (d : bag Visit) : fuzzy num = median [40 .. 120] (map (fun v -> v.weight) d) 1;
def q1 (d : bag Visit) : fuzzy num = lower_quartile [40 .. 120] (map (fun v -> v.weight) d) 1;
"""


@pytest.mark.slow  # about 2 s (the default suite stays under 10 minutes)
@pytest.mark.parametrize("definition", ["med", "q1"])
def test_a_library_quantile_reads_only_the_column_it_uses(
        capsys: pytest.CaptureFixture[str], tmp_path: Path, definition: str) -> None:
    rows = "".join(f"{50 + i},{'c' if i % 2 else ''},{'' if i % 3 else 'n'}\n" for i in range(30))
    (tmp_path / "visits.csv").write_text("weight,clinic,notes\n" + rows)  # clinic and notes have holes
    (tmp_path / "s.fz").write_text(STATS)
    code, out, _ = call(capsys, "check", str(tmp_path / "s.fz"))
    assert code == 0 and f"{definition}: d: weight\n" in out
    ledger = str(tmp_path / "l.sqlite")
    code, _, err = call(capsys, "run", str(tmp_path / "s.fz"), definition, "--data",
                        f"d={tmp_path / 'visits.csv'}", "--budget", "2", "--ledger", ledger)
    assert code == 0, err
    code, out, _ = call(capsys, "dataset", "show", "visits", "--ledger", ledger, "--json")
    assert json.loads(out)["releases"][0]["row_rules"]["rows_dropped"] == 0


# ---------------------------------------------------------------- 3: no budget option silently ignored

COUNT = """type R = { x : int };
def c (rows : bag R) : fuzzy num = laplace[0.25] (size rows);
"""


def test_budget_rounds_composes_a_definitions_releases(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    (tmp_path / "c.fz").write_text(COUNT)
    code, out, _ = call(capsys, "budget", str(tmp_path / "c.fz"), "c", "--rounds", "8", "--json")
    assert code == 0
    document = json.loads(out)
    assert document["rounds"] == 8
    assert document["definitions"][0]["privacy"]["rows"]["pure_epsilon"] == pytest.approx(2.0)
    code, out, _ = call(capsys, "budget", str(tmp_path / "c.fz"), "--rounds", "4")
    assert code == 0 and "1-DP in rows for 4 releases" in out


@pytest.mark.parametrize("option", [("--subsample", "0.5"), ("--sensitivity", "10"), ("--choose", "3")])
def test_budget_release_options_on_a_program_are_refused(
        capsys: pytest.CaptureFixture[str], tmp_path: Path, option: tuple[str, str]) -> None:
    (tmp_path / "c.fz").write_text(COUNT)
    code, _, err = call(capsys, "budget", str(tmp_path / "c.fz"), "c", *option)
    assert code == 2 and option[0] in err and "FZ703" in err


# ---------------------------------------------------------------- 4: the API raises its own errors

def test_api_data_of_the_wrong_form_raises_the_apis_error(tmp_path: Path) -> None:
    import pandas as pd

    import fuzzpy

    (tmp_path / "c.fz").write_text(COUNT)
    (tmp_path / "xs.csv").write_text("x\n1\n2\n")
    program = fuzzpy.load(str(tmp_path / "c.fz"))
    ledger = str(tmp_path / "l.sqlite")
    for wrong, expected in ((pd.DataFrame({"x": [1, 2]}), 'data={"rows": frame}'),
                            (str(tmp_path / "xs.csv"), f'data={{"rows": "{tmp_path / "xs.csv"}"}}'),
                            ([("rows", "xs.csv")], 'data={"rows": ...}')):
        for method in (program.run, program.quote):
            with pytest.raises(fuzzpy.FuzzError) as raised:
                method("c", data=wrong, budget=1, ledger=ledger)
            assert isinstance(raised.value, fuzzpy.InvalidInput) and raised.value.exit_code == 2
            assert expected in str(raised.value)
    with pytest.raises(fuzzpy.InvalidInput):
        program.run("c", data={"rows": str(tmp_path / "xs.csv")}, args=[1], budget=1, ledger=ledger)
    assert not (tmp_path / "l.sqlite").exists() or fuzzpy.Ledger(ledger).datasets() == []


# ---------------------------------------------------------------- 5: a cost of no meaningful privacy is said

UNSCALED = """type Sale = { amount : num };
def total (sales : bag Sale) : fuzzy num = laplace[0.5] (sum[0, 100000] (map (fun s -> s.amount) sales));
def fine (sales : bag Sale) : fuzzy num = laplace[0.5] (size sales);
"""


def test_check_warns_of_an_epsilon_above_ten_and_says_how_to_scale(tmp_path: Path) -> None:
    import fuzzpy

    report = fuzzpy.loads(UNSCALED, name="u.fz").check()
    assert report.ok  # a warning, not an error
    warned = [d for d in report.warnings if d.code == "FZ315"]
    assert len(warned) == 1 and "`total`" in warned[0].message and "100000" in warned[0].message
    assert warned[0].hint is not None and "laplace[0.5 / 100000]" in warned[0].hint


def test_the_budget_hint_for_such_a_cost_says_it_is_no_privacy(
        capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    (tmp_path / "u.fz").write_text(UNSCALED)
    (tmp_path / "sales.csv").write_text("amount\n10\n20\n")
    ledger = str(tmp_path / "l.sqlite")
    code, _, err = call(capsys, "run", str(tmp_path / "u.fz"), "total", "--data", f"sales={tmp_path / 'sales.csv'}",
                        "--budget", "1", "--ledger", ledger)
    assert code == 3 and "no meaningful privacy" in err and "scale its noise" in err
    code, _, err = call(capsys, "run", str(tmp_path / "u.fz"), "total", "--data", f"sales={tmp_path / 'sales.csv'}",
                        "--budget", "100000", "--ledger", str(tmp_path / "l2.sqlite"))
    assert code == 0  # the owner's budget allows it: `check` warned (FZ315), the charge is printed


# ---------------------------------------------------------------- 6: labels and counts of static lengths agree

LABELLED = """import std.noisy_max (noisy_max_label);
import std.sparse_vector (first_above_label);
type Bird = { kind : string };
let kinds = ["wren", "robin", "jay", "owl"];
let three = ["wren", "robin", "jay"];
def tally (b : bag Bird) : vec[inf] num = tabulate kinds (fun k -> size (filter (fun x -> x.kind == k) b));
"""


@pytest.mark.slow  # ~5 s a case: std.noisy_max and std.sparse_vector are checked with each program
@pytest.mark.parametrize("call_text, ok", [
    ("noisy_max_label kinds (tally b) 1.0", True),
    ("noisy_max_label three (tally b) 1.0", False),
    ('noisy_max_label ["wren", "robin", "jay", "owl", "emu"] (tally b) 1.0', False),
    ("first_above_label three (tally b) 2 1.0", False),
    ("first_above_label kinds (tally b) 2 1.0", True),
])
def test_a_label_list_of_another_static_length_is_refused_at_check(call_text: str, ok: bool) -> None:
    import fuzzpy

    text = LABELLED + f"def pick (b : bag Bird) : fuzzy string = {call_text};\n"
    if ok:
        assert fuzzpy.loads(text, name="b.fz").check().ok
        return
    with pytest.raises(fuzzpy.Rejected) as refused:
        fuzzpy.loads(text, name="b.fz").check()
    assert [d.code for d in refused.value.diagnostics] == ["FZ201"] and "label" in str(refused.value)


# ---------------------------------------------------------------- 7: hints that say what is true and name the parameter

def test_an_exhausted_budget_says_nothing_runs_again(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    (tmp_path / "c.fz").write_text(COUNT.replace("0.25", "1"))
    (tmp_path / "xs.csv").write_text("x\n1\n2\n")
    argv = ("run", str(tmp_path / "c.fz"), "c", "--data", f"rows={tmp_path / 'xs.csv'}",
            "--ledger", str(tmp_path / "l.sqlite"))
    assert call(capsys, *argv, "--budget", "1")[0] == 0
    code, _, err = call(capsys, *argv)
    assert code == 3 and "FZ601" in err and "no release on it can run again" in err


def test_a_bare_data_file_is_named_for_the_one_bag_parameter(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    (tmp_path / "c.fz").write_text(COUNT)
    code, _, err = call(capsys, "run", str(tmp_path / "c.fz"), "c", "--data", "xs.csv", "--budget", "1",
                        "--ledger", str(tmp_path / "l.sqlite"))
    assert code == 2 and "FZ508" in err and "--data rows=xs.csv" in err


def test_the_same_rows_refusal_names_the_runs_parameter(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    import pyarrow.csv as pacsv
    import pyarrow.parquet as pq

    (tmp_path / "c.fz").write_text(COUNT)
    (tmp_path / "xs.csv").write_text("x\n1\n2\n3\n")
    pq.write_table(pacsv.read_csv(tmp_path / "xs.csv"), tmp_path / "copy.parquet")
    ledger = str(tmp_path / "l.sqlite")
    assert call(capsys, "run", str(tmp_path / "c.fz"), "c", "--data", f"rows={tmp_path / 'xs.csv'}",
                "--budget", "1", "--ledger", ledger)[0] == 0
    code, _, err = call(capsys, "run", str(tmp_path / "c.fz"), "c", "--data", f"rows={tmp_path / 'copy.parquet'}",
                        "--dataset", "rows=other", "--budget", "1", "--ledger", ledger)
    assert code == 2 and "FZ545" in err and "--data rows=xs" in err and "PARAM" not in err
