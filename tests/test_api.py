"""The Python API (`fuzzpy.api`): each function, its data types, errors
carrying the CLI's diagnostics and exit codes, quotes equal to charges, the
ledger really charged, and the same JSON as the CLI."""

from __future__ import annotations

import json
import subprocess
import sys
from fractions import Fraction
from pathlib import Path

import pytest

import fuzzpy
from fuzzpy.cli import main

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = ROOT / "examples"
PEOPLE = str(EXAMPLES / "data" / "people.csv")

COUNT = """\
type Person = { age : num, income : num, hours : num, zip : int, married : bool };

def rec total (xs :[1] list num) : num =
  case xs of
  | [] -> 0
  | h :: t -> h + total t;

def older (t : num) (db : bag Person) : fuzzy num =
  laplace[0.5] (size (filter (fun p -> p.age > t) db));

def report (k : int) (flag : bool) (ts : list num) (db : bag Person) : fuzzy (num, num) = {
  sample a = laplace[0.25] (size db);
  sample b = laplace[0.25] (size (filter (fun p -> p.married) db));
  return (a + k, if flag then b else total ts)
};

def census (db : bag Person) : fuzzy { people : num, married : num } = {
  sample people = laplace[0.25] (size db);
  sample married = laplace[0.25] (size (filter (fun p -> p.married) db));
  return { people = people, married = married }
};

def gauss_count (db : bag Person) : fuzzy num = gauss[1.0] (size db);

def zero (db : bag Person) : fuzzy num = {
  sample n = laplace[0.5] (size db);
  return 0
};
"""


def _cli(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


# ---------------------------------------------------------------- import


def test_import_fuzzpy_does_not_load_the_api() -> None:
    """`import fuzzpy` stays light: the API (and the checker) load on first use."""
    code = ("import sys, fuzzpy; assert 'fuzzpy.api.program' not in sys.modules; "
            "assert 'fuzzpy.checker' not in sys.modules; fuzzpy.load; assert 'fuzzpy.api.program' in sys.modules")
    subprocess.run([sys.executable, "-c", code], check=True)


def test_every_exported_name_resolves() -> None:
    for name in fuzzpy.__all__:
        assert getattr(fuzzpy, name) is not None
    with pytest.raises(AttributeError):
        fuzzpy.no_such_name  # noqa: B018


# ---------------------------------------------------------------- check


def test_check_reports_types_sensitivities_and_costs() -> None:
    report = fuzzpy.load(EXAMPLES / "noisy_count.fz").check()
    assert [d.name for d in report.definitions] == ["older_than", "count_older", "noisy_count"]
    count = report["count_older"]
    assert count.type == "(t :[inf] num) -> (db :[1] bag Person) -> num"
    t, db = count.parameters
    assert t.sensitivity.is_inf and t.sensitivity_text == "inf"
    assert db.sensitivity.value == 1 and db.cost is None
    noisy = report["noisy_count"]
    cost = noisy.costs["db"]
    assert cost.epsilon == Fraction(1, 10) and cost.delta == 0
    assert cost.method == "pure (basic composition)"
    assert len(cost.events) == 1 and "laplace" in cost.events_text.lower()
    assert "Derivation of `noisy_count`" in noisy.derivation
    assert report.ok and report.warnings == ()
    assert "noisy_count" in report and len(report) == 3
    with pytest.raises(KeyError):
        report["nothing"]


def test_check_approximate_cost_at_a_delta() -> None:
    program = fuzzpy.loads(COUNT)
    default = program.check()["gauss_count"].costs["db"]
    wider = program.check(delta=1e-3)["gauss_count"].costs["db"]
    assert default.delta == pytest.approx(1e-6) and wider.delta == pytest.approx(1e-3)
    assert 0 < wider.epsilon < default.epsilon
    assert default.method and default.method != "pure (basic composition)"


def test_check_json_equals_the_cli(capsys: pytest.CaptureFixture[str]) -> None:
    for example in ("noisy_count", "census_report", "clamped_mean", "mechanisms/above_threshold"):
        path = str(EXAMPLES / f"{example}.fz")
        code, out, _ = _cli(capsys, "check", path, "--json")
        assert code == 0
        assert fuzzpy.load(path).check().to_json() == json.loads(out)
        assert fuzzpy.load(path).check().text + "\n" == _cli(capsys, "check", path)[1]


def test_rejection_raises_with_the_cli_diagnostics(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    text = "def h (db : bag num) : num = size (map (fun x -> x + size db) db);\n"
    path = tmp_path / "m.fz"
    path.write_text(text)
    with pytest.raises(fuzzpy.FuzzError) as caught:
        fuzzpy.loads(text, name=str(path)).check()
    error = caught.value
    assert isinstance(error, fuzzpy.Rejected) and error.exit_code == 1
    code, out, _ = _cli(capsys, "check", str(path), "--json")
    assert code == 1
    assert [d.to_json() for d in error.diagnostics] == json.loads(out)["diagnostics"]
    assert [d.code for d in error.diagnostics] == ["FZ303"]
    _, _, err = _cli(capsys, "check", str(path))
    assert str(error) + "\n" == err  # code, span, the source line underlined, hint
    assert "FZ303" in str(error) and "^" in str(error)


def test_syntax_error_and_missing_file() -> None:
    with pytest.raises(fuzzpy.Rejected) as caught:
        fuzzpy.loads("def f (x : num) : num = ;\n")
    assert caught.value.diagnostics[0].code.startswith("FZ1")
    with pytest.raises(fuzzpy.InvalidInput) as missing:
        fuzzpy.load("/no/such/file.fz")
    assert [d.code for d in missing.value.diagnostics] == ["FZ701"] and missing.value.exit_code == 2


def test_infinite_epsilon_at_delta_rejects_with_the_report() -> None:
    # an (eps, 0.1) event at delta 0.05: no epsilon holds (gauss[0.001] at 1e-300, once used here,
    # is (537046.2, 1e-300)-DP: the analytic Gaussian's search stopped at eps 1e6, review s29a)
    program = fuzzpy.loads("def g (db : bag num) : fuzzy (num + unit) = ptr_median[0.5, 0.1, 1] db;\n")
    with pytest.raises(fuzzpy.Rejected) as caught:
        program.check(delta=0.05)
    assert [d.code for d in caught.value.diagnostics] == ["FZ314"]
    assert isinstance(caught.value.report, fuzzpy.CheckReport)
    assert not caught.value.report.ok


def test_check_refuses_a_bad_delta() -> None:
    for delta in (0, 1, -0.5, "x"):
        with pytest.raises(fuzzpy.InvalidInput):
            fuzzpy.loads(COUNT).check(delta=delta)


# ---------------------------------------------------------------- verify


def test_verify_gives_verdicts_like_the_cli(capsys: pytest.CaptureFixture[str]) -> None:
    path = str(EXAMPLES / "mechanisms" / "above_threshold.fz")
    results = fuzzpy.load(path).verify()
    assert [r.status for r in results] == ["proved"] and results[0].proved
    assert results[0].claim and results[0].counterexample is None
    assert any("cost" in line for line in results[0].steps)
    code, out, _ = _cli(capsys, "verify", path, "--json")
    assert code == 0
    cli = json.loads(out)["mechanisms"]
    assert [{k: v for k, v in r.to_json().items() if k != "cached"} for r in results] == [
        {k: v for k, v in m.items() if k != "cached"} for m in cli]


def test_verify_refutes_with_a_counterexample() -> None:
    buggy = sorted((EXAMPLES / "mechanisms" / "buggy").glob("*.fz"))[0]
    results = fuzzpy.load(buggy).verify()
    refuted = [r for r in results if r.status == "refuted"]
    assert refuted, [r.status for r in results]
    assert set(refuted[0].counterexample) >= {"inputs", "neighbour", "output", "p_inputs", "p_neighbour"}


def test_a_program_without_mechanisms_verifies_to_nothing() -> None:
    assert fuzzpy.load(EXAMPLES / "noisy_count.fz").verify() == []


# ---------------------------------------------------------------- quote and run


def test_quote_equals_the_run_charge_and_the_ledger_is_charged(tmp_path: Path) -> None:
    ledger = tmp_path / "ledger.sqlite"
    program = fuzzpy.load(EXAMPLES / "noisy_count.fz")
    quote = program.quote("noisy_count", data={"db": PEOPLE}, ledger=ledger, budget=1.0)
    assert list(quote) == ["people"]
    assert quote["people"].epsilon == pytest.approx(0.1) and quote["people"].entry is None
    assert quote["people"].remaining.epsilon == pytest.approx(0.9)
    assert not ledger.exists() or fuzzpy.Ledger(ledger).entries() == []  # a quote charges nothing

    release = program.run("noisy_count", data={"db": PEOPLE}, ledger=ledger, budget=1.0)
    assert isinstance(release.value, float) and isinstance(release.exact, Fraction)
    assert release.private and release.warnings == []
    charge = release.charges["people"]
    assert (charge.epsilon, charge.delta, charge.remaining) == (
        quote["people"].epsilon, quote["people"].delta, quote["people"].remaining)
    assert charge.entry is not None

    second = program.run("noisy_count", data={"db": PEOPLE}, ledger=str(ledger))
    assert second.charges["people"].remaining.epsilon == pytest.approx(0.8)
    book = fuzzpy.Ledger(ledger)
    assert book.remaining("people") == pytest.approx((0.8, 0.0))
    assert [e.id for e in book.entries("people")] == [charge.entry, second.charges["people"].entry]
    assert [s.dataset for s in book.datasets()] == ["people"]


def test_two_parameters_on_one_dataset_are_one_charge(tmp_path: Path) -> None:
    """a14 F2: both parameters' events are one entry of the dataset, as quoted
    (the charges were keyed by dataset and the second overwrote the first)."""
    ledger = tmp_path / "ledger.sqlite"
    program = fuzzpy.loads(COUNT + "def both (a : bag Person) (b : bag Person) : fuzzy num =\n"
                           "  laplace[0.5] (size a + size b);\n")
    data = {"a": PEOPLE, "b": PEOPLE}
    quote = program.quote("both", data=data, ledger=ledger, budget=10.0)
    release = program.run("both", data=data, ledger=ledger, budget=10.0)
    assert list(release.charges) == ["people"]
    assert release.charges["people"].epsilon == pytest.approx(quote["people"].epsilon) == pytest.approx(1.0)
    assert release.charges["people"].remaining.epsilon == pytest.approx(9.0)
    assert [e.id for e in fuzzpy.Ledger(ledger).entries("people")] == [release.charges["people"].entry]


def test_over_budget_raises_with_exit_code_3(tmp_path: Path) -> None:
    ledger = tmp_path / "l.sqlite"
    program = fuzzpy.load(EXAMPLES / "noisy_count.fz")
    with pytest.raises(fuzzpy.BudgetExceeded) as caught:
        program.quote("noisy_count", data={"db": PEOPLE}, ledger=ledger, budget=0.05)
    assert caught.value.exit_code == 3 and caught.value.diagnostics[0].code.startswith("FZ6")
    with pytest.raises(fuzzpy.BudgetExceeded):
        program.run("noisy_count", data={"db": PEOPLE}, ledger=ledger, budget=0.05)
    assert fuzzpy.Ledger(ledger).entries() == []


def test_values_come_back_as_python_data(tmp_path: Path) -> None:
    program = fuzzpy.loads(COUNT)
    options = {"data": {"db": PEOPLE}, "ledger": tmp_path / "l.sqlite", "budget": 10, "seed": 3}
    pair = program.run("report", args={"k": 2, "flag": False, "ts": [1, 2.5, Fraction(1, 3)]}, **options)
    assert isinstance(pair.value, tuple) and len(pair.value) == 2
    assert pair.exact[1] == Fraction(23, 6)  # total ts, exactly
    assert pair.private is False
    record = program.run("census", **options)
    assert set(record.value) == {"people", "married"} and all(isinstance(v, float) for v in record.value.values())
    assert isinstance(record.exact.fields["people"], Fraction)
    zero = program.run("zero", **options)
    assert zero.value == 0 and isinstance(zero.value, float)  # a `num` is a float, whatever its runtime form
    svt = fuzzpy.load(EXAMPLES / "age_brackets_svt.fz").run("first_large_bracket", **options)
    assert isinstance(svt.value, int) and not isinstance(svt.value, bool)  # an `int` an int


def test_python_and_text_arguments_release_the_same(tmp_path: Path) -> None:
    program = fuzzpy.loads(COUNT)
    common = {"data": {"db": PEOPLE}, "budget": 100, "seed": 11}
    as_python = program.run("older", args={"t": 40.5}, ledger=tmp_path / "a.sqlite", **common)
    as_text = program.run("older", args={"t": "40.5"}, ledger=tmp_path / "b.sqlite", **common)
    assert as_python.exact == as_text.exact


@pytest.mark.parametrize(("args", "code"), [
    ({"k": 1.5, "flag": True, "ts": []}, "FZ509"),  # not an int
    ({"k": 1, "flag": 1, "ts": []}, "FZ509"),  # not a bool
    ({"k": True, "flag": True, "ts": []}, "FZ509"),  # a bool is not an int
    ({"k": 1, "flag": True, "ts": ["a"]}, "FZ509"),  # not a list of numbers
    ({"k": 1, "flag": True}, "FZ508"),  # missing
    ({"k": 1, "flag": True, "ts": [], "nope": 1}, "FZ508"),  # unknown
])
def test_bad_arguments_are_refused_before_the_ledger(tmp_path: Path, args: dict, code: str) -> None:
    with pytest.raises(fuzzpy.InvalidInput) as caught:
        fuzzpy.loads(COUNT).run("report", data={"db": PEOPLE}, args=args, ledger=tmp_path / "l.sqlite", budget=1)
    assert [d.code for d in caught.value.diagnostics] == [code] and caught.value.exit_code == 2
    assert not (tmp_path / "l.sqlite").exists() or fuzzpy.Ledger(tmp_path / "l.sqlite").entries() == []


def test_run_refusals_carry_the_cli_exit_codes(tmp_path: Path) -> None:
    ledger = tmp_path / "l.sqlite"
    program = fuzzpy.loads(COUNT + "def leak (db : bag Person) : num = size db;\n")
    cases = [
        ({"definition": "nothing"}, fuzzpy.InvalidInput, "FZ521", 2),
        ({"definition": "leak"}, fuzzpy.Rejected, "FZ522", 1),  # a data code, but a rejection
        ({"definition": "census", "seed": -1}, fuzzpy.InvalidInput, "FZ523", 2),
        ({"definition": "census", "delta": 2}, fuzzpy.InvalidInput, "FZ523", 2),
        ({"definition": "census", "engine": "bogus"}, fuzzpy.InvalidInput, "FZ523", 2),
        ({"definition": "census", "rule": "bogus"}, fuzzpy.InvalidInput, "FZ714", 2),
        ({"definition": "census", "data": {"db": 42}}, fuzzpy.InvalidInput, "FZ551", 2),
        ({"definition": "census", "data": {"db": str(tmp_path / "missing.csv")}}, fuzzpy.InvalidInput, "FZ5", 2),
    ]
    for options, kind, code, exit_code in cases:
        options = {"data": {"db": PEOPLE}, **options}
        with pytest.raises(kind) as caught:
            program.run(options.pop("definition"), ledger=ledger, budget=1, **options)
        assert caught.value.diagnostics[0].code.startswith(code), caught.value.diagnostics
        assert caught.value.exit_code == exit_code


@pytest.mark.parametrize(("example", "definition", "data"), [
    ("census_report", "report", "people"),  # a record
    ("histogram_by_region", "region_histogram", "residents"),  # a labelled vector
    ("ward_histogram", "ward_histogram", "visits"),  # a vector
])
def test_api_and_cli_release_the_same_json(capsys: pytest.CaptureFixture[str], tmp_path: Path, example: str,
                                           definition: str, data: str) -> None:
    path, file = str(EXAMPLES / f"{example}.fz"), str(EXAMPLES / "data" / f"{data}.csv")
    code, out, err = _cli(capsys, "run", path, definition, "--data", f"db={file}", "--budget", "2",
                          "--ledger", str(tmp_path / "cli.sqlite"), "--seed", "5", "--json")
    assert code == 0, err
    release = fuzzpy.load(path).run(definition, data={"db": file}, budget=2, ledger=tmp_path / "api.sqlite", seed=5)
    cli, api = json.loads(out), release.to_json()
    for document in (cli, api):  # the ledger entries' ids and times differ
        for entry in document["datasets"]:
            entry.pop("time")
            entry.pop("id")
    assert api == cli
    assert release.value == cli["released"]  # the plain Python value is the JSON one


def test_a_program_from_text_is_recorded_under_its_name(tmp_path: Path) -> None:
    ledger = tmp_path / "l.sqlite"
    fuzzpy.loads(COUNT, name="analysis.fz").run("census", data={"db": PEOPLE}, ledger=ledger, budget=1)
    (entry,) = fuzzpy.Ledger(ledger).entries()
    assert entry.program == "analysis.fz" and entry.definition == "census"


def test_datasets_and_budget_forms(tmp_path: Path) -> None:
    ledger = fuzzpy.Ledger(tmp_path / "l.sqlite")
    program = fuzzpy.loads(COUNT)
    release = program.run("gauss_count", data={"db": PEOPLE}, datasets="census", ledger=ledger,
                          budget=(5, 1e-5), delta=1e-6)
    charge = release.charges["census"]
    assert charge.delta == pytest.approx(1e-6) and charge.remaining.delta == pytest.approx(1e-5 - 1e-6)
    assert ledger.remaining("census")[1] == pytest.approx(1e-5 - 1e-6)
    with pytest.raises(fuzzpy.InvalidInput):
        ledger.remaining("nobody")
    with pytest.raises(fuzzpy.FuzzError):
        program.run("census", data={"db": PEOPLE}, ledger=ledger, budget=object())
    assert fuzzpy.Ledger(tmp_path / "none.sqlite").datasets() == []


def test_a_dataframe_is_quoted_and_run_like_a_file(tmp_path: Path) -> None:
    pandas = pytest.importorskip("pandas")
    frame = pandas.read_csv(PEOPLE)
    ledger = tmp_path / "l.sqlite"
    program = fuzzpy.load(EXAMPLES / "noisy_count.fz")
    quote = program.quote("noisy_count", data={"db": frame}, datasets="survey", ledger=ledger, budget=1)
    release = program.run("noisy_count", data={"db": frame}, datasets="survey", ledger=ledger, budget=1, seed=2)
    from_file = program.run("noisy_count", data={"db": PEOPLE}, ledger=tmp_path / "f.sqlite", budget=1, seed=2)
    assert release.exact == from_file.exact  # the same rows, the same seeded release
    assert release.charges["survey"].remaining == quote["survey"].remaining
    with pytest.raises(fuzzpy.InvalidInput) as unnamed:  # data in memory has no file to name its dataset
        program.quote("noisy_count", data={"db": frame}, ledger=ledger)
    assert [d.code for d in unnamed.value.diagnostics] == ["FZ550"]


def test_the_readme_example_runs(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    import re

    readme = (ROOT / "README.md").read_text()
    block = re.search(r"## Python API\n.*?```python\n(.*?)```", readme, re.S)
    assert block is not None
    monkeypatch.chdir(ROOT)
    exec(compile(block.group(1), "README.md", "exec"), {})
    lines = capsys.readouterr().out.splitlines()
    assert lines[:2] == ["(t :[inf] num) -> (db :[1] bag Person) -> num", "1/10 pure (basic composition)"]
    # what remains is the greatest double <= 9/10 (the double 0.9 is above it)
    assert lines[2].endswith(" 0.8999999999999999") and lines[3] == "(0.8999999999999999, 0.0)"
    assert lines[4] == "9/10" and lines[5] == "1 ['FZ303']"
    assert lines[6].startswith("error[FZ303]")


def test_the_ledger_s_entries_hold_no_count_of_the_private_rows(tmp_path: Path) -> None:
    """`fuzzpy.Ledger.entries` shows what `fuzzpy ledger` shows: the row
    rules' counts (rows dropped, keys outside a histogram's buckets) are
    exact counts of the private rows, the owner's (review a25 F3)."""
    data = tmp_path / "rows.csv"
    data.write_text("age\n30\nx\n\n70\n")
    # the holder types `age` (a first run would type it from every cell: `x` makes it text)
    from fuzzpy.cli import main
    assert main(["dataset", "register", "rows", str(data), "--budget", "10", "--type", "age=num",
                 "--ledger", str(tmp_path / "l.sqlite")]) == 0
    program = fuzzpy.loads("type Row = { age : num };\n"
                           "def h (db : bag Row) : fuzzy (vec[1] num) =\n"
                           "  laplace[1] (counts (group[1] (fun r -> if r.age > 60 then 0 else 1) db));\n")
    ledger = str(tmp_path / "l.sqlite")
    for engine in ("memory", "duckdb"):
        program.run("h", data={"db": str(data)}, datasets={"db": "rows"}, ledger=ledger, engine=engine)
    from fuzzpy.ledger.book import Ledger as Book

    with Book(ledger) as book:  # the owner's counts are recorded
        assert all(e.row_rules for e in book.history())
    entries = fuzzpy.Ledger(ledger).entries()
    assert len(entries) == 2 and all(e.row_rules is None for e in entries)
    assert "rows_dropped" not in repr(entries) and "group_keys_outside" not in repr(entries)
