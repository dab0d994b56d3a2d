"""`fuzzpy run` end to end: examples on their data, refusals and exit codes."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from fuzzpy.cli import main
from fuzzpy.ledger.book import Ledger
from tests.notes import without_registration

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = ROOT / "examples"
DATA = EXAMPLES / "data"

#: Every accepted example's released definitions, with the data file of its bag.
RUNS = [
    ("age_brackets_svt", "first_large_bracket", "people"),
    pytest.param("busiest_age_bracket", "busiest_bracket", "people", marks=pytest.mark.slow),  # its proof: seconds
    ("census_report", "report", "people"),
    ("clamped_mean", "total_income", "people"),
    ("clamped_mean", "mean_income", "people"),
    ("gaussian_centroid", "centroid", "points"),
    ("noisy_count", "noisy_count", "people"),
    ("parallel_split", "young_and_old", "people"),
    ("pension_sums", "total_score", "people"),
    ("private_median", "median_income", "people"),
    ("subsampled_count", "sampled_count", "people"),
    ("threshold_search", "search", "visits"),
    ("visit_summary", "mean_cost", "visits"),
    ("ward_histogram", "ward_histogram", "visits"),
    ("gradient_descent", "train", "logistic"),
    ("dpsgd", "train", "logistic"),
]


def _run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(["run", *argv])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


@pytest.mark.parametrize(("example", "definition", "data"), RUNS)
def test_every_accepted_example_runs_on_its_data(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, example: str, definition: str, data: str
) -> None:
    code, out, err = _run(
        capsys, str(EXAMPLES / f"{example}.fz"), definition, "--data", f"db={DATA / data}.csv",
        "--budget", "10,1e-3", "--ledger", str(tmp_path / "l.sqlite"), "--seed", "1", "--json",
    )
    assert code == 0, err
    document = json.loads(out)
    assert document["released"] is not None
    assert document["charged"]["epsilon"] > 0
    assert document["private"] is False
    assert document["remaining"]["epsilon"] == pytest.approx(10 - document["charged"]["epsilon"])


def test_a_proved_gaussian_mechanism_runs_and_charges_its_eps_delta(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """The shipped Gaussian noisy max (claim (1, 0.0004)) called on a bag's counts: run at a
    delta above the claim's, it releases an index and the ledger holds an (eps, delta) charge;
    at the default delta (1e-6, below the claim's) no finite eps exists and nothing is charged."""
    mechanism = (EXAMPLES / "mechanisms" / "gaussian" / "gauss_report_noisy_max.fz").read_text()
    program = tmp_path / "ages.fz"
    program.write_text(
        "type P = { age : num };\n" + mechanism
        + "\ndef counts (db : bag P) : vec[inf] num =\n"
          "  tabulate [20, 40, 60] (fun t -> size (filter (fun p -> p.age >= t && p.age < t + 20) db));\n"
          "def oldest (db : bag P) : fuzzy int = gauss_report_noisy_max (counts db) 8;\n")
    data = tmp_path / "ages.csv"
    data.write_text("age\n" + "".join(f"{a}\n" for a in [25] * 3 + [45] * 40 + [65] * 2))
    ledger = str(tmp_path / "l.sqlite")
    base = [str(program), "oldest", "--data", f"db={data}", "--ledger", ledger, "--budget", "3,0.01", "--json"]
    code, out, err = _run(capsys, *base)
    assert code != 0 and "FZ603" in out  # no finite eps at delta 1e-6 < 0.0004: refused before any charge
    released = []
    for seed in ("1", "2", "3"):
        code, out, err = _run(capsys, *base, "--delta", "0.001", "--seed", seed)
        assert code == 0, err
        document = json.loads(out)
        assert document["charged"]["delta"] == pytest.approx(0.001)
        assert 0 < document["charged"]["epsilon"] <= 1
        released.append(document["released"])
    assert released == [1, 1, 1]  # 40 against 3 and 2 with sigma = 8: the noise never hides it here
    with Ledger(tmp_path / "l.sqlite") as book:
        assert len(book.history(data.stem)) == 3


def test_public_only_definition_runs_without_data(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    code, out, _ = _run(
        capsys, str(EXAMPLES / "list_recursion.fz"), "noisy_total", "--arg", "scores=[1, 2, 300]",
        "--ledger", str(tmp_path / "l.sqlite"), "--json", "--seed", "2",
    )
    assert code == 0 and isinstance(json.loads(out)["released"], float)


def _noisy_count(tmp_path: Path, *extra: str, data: str | None = None) -> list[str]:
    return [
        str(EXAMPLES / "noisy_count.fz"), "noisy_count", "--data", f"db={data or DATA / 'people.csv'}",
        "--ledger", str(tmp_path / "l.sqlite"), "--dataset", "census", *extra,
    ]


def test_text_output_and_charges_add_up(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    for _ in range(3):
        code, out, _ = _run(capsys, *_noisy_count(tmp_path, "--budget", "1"))
        assert code == 0 and out.startswith("released:")
    with Ledger(tmp_path / "l.sqlite") as ledger:
        assert len(ledger.history("census")) == 3
    code, out, _ = _run(capsys, *_noisy_count(tmp_path, "--json"))
    assert json.loads(out)["remaining"]["epsilon"] == pytest.approx(0.6)
    assert json.loads(out)["private"] is True


def test_over_budget_is_refused_before_the_data_is_read(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    broken = tmp_path / "broken.csv"
    broken.write_text("age\nnot a number\n")
    code, out, err = _run(capsys, *_noisy_count(tmp_path, "--budget", "0.05", data=str(broken)))
    assert code == 3 and out == "" and "FZ601" in err  # a data error would have been exit 2


def test_a_bad_row_is_dropped_and_a_missing_column_refused(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """Was: exit 2 for both. The row `forty` is private: under the types its
    holder registered it is dropped and nothing is said (a first run would
    type `age` from every cell, `string`, as `dataset register` does); a
    missing column is public: exit 2, nothing charged."""
    bad = tmp_path / "bad.csv"
    bad.write_text("age,income,hours,zip,married\n30,1,2,10115,true\nforty,1,2,10115,false\n")
    assert main(["dataset", "register", "census", str(bad), "--budget", "1", "--type", "age=num",
                 "--ledger", str(tmp_path / "l.sqlite")]) == 0
    capsys.readouterr()
    code, out, err = _run(capsys, *_noisy_count(tmp_path, data=str(bad)))
    assert code == 0 and out.startswith("released:") and without_registration(err) == ""
    missing = tmp_path / "missing.csv"
    missing.write_text("age,income\n30,1\n")
    arguments = _noisy_count(tmp_path, "--budget", "1", data=str(missing))
    arguments[arguments.index("census")] = "other"  # `census` is bad.csv's dataset now
    before = (tmp_path / "l.sqlite").read_bytes()
    code, _, err = _run(capsys, *arguments)
    assert code == 2 and "FZ503" in err and "`hours`" in err
    assert (tmp_path / "l.sqlite").read_bytes() == before


def test_rejected_program_exits_1(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    rejected = sorted((EXAMPLES / "rejected").glob("*.fz"))
    assert rejected
    code, out, _ = _run(capsys, str(rejected[0]), "anything", "--data", f"db={DATA / 'people.csv'}",
                        "--ledger", str(tmp_path / "l.sqlite"))
    assert code == 1 and out == ""


def test_a_result_without_noise_is_not_released(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    code, out, err = _run(
        capsys, str(EXAMPLES / "noisy_count.fz"), "count_older", "--arg", "t=40",
        "--data", f"db={DATA / 'people.csv'}", "--budget", "1", "--ledger", str(tmp_path / "l.sqlite"),
    )
    assert code == 1 and out == "" and "FZ522" in err


#: a24 F1: `k` ignores its bag, so `return (k db)` is 0-sensitive in db and
#: costs nothing; the closure released would show the bag it captured.
RELEASED_FUNCTIONS = """
type Row = { age : num, income : num };
def k (d : bag Row) (x : num) : num = x;
def closure (db : bag Row) : fuzzy (num -> num) = return (k db);
def filtered (db : bag Row) : fuzzy (num -> num) = return (k (filter (fun r -> r.income > 100000) db));
def pair (db : bag Row) : fuzzy ((num -> num), num) = {
  sample n = laplace[1] (size db);
  return (k db, n)
};
def plain (db : bag Row) : num -> num = k db;
"""


@pytest.mark.parametrize("engine", ["memory", "duckdb"])
@pytest.mark.parametrize("definition", ["closure", "filtered", "pair", "plain"])
def test_a_result_holding_a_function_is_not_released(capsys: pytest.CaptureFixture[str], tmp_path: Path,
                                                     engine: str, definition: str) -> None:
    program = tmp_path / "functions.fz"
    program.write_text(RELEASED_FUNCTIONS)
    ledger = tmp_path / "l.sqlite"
    code, out, err = _run(capsys, str(program), definition, "--data", f"db={DATA / 'people.csv'}",
                          "--budget", "1", "--ledger", str(ledger), "--engine", engine)
    assert (code, out) == (1, "") and "FZ526" in err, err
    assert "rows" not in err and "Bag" not in err
    with Ledger(str(ledger)) as book:
        assert not book.history()


def test_usage_errors_exit_2(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    ledger = str(tmp_path / "l.sqlite")
    noisy = str(EXAMPLES / "noisy_count.fz")
    assert _run(capsys, noisy, "no_such_def", "--ledger", ledger)[0] == 2
    assert _run(capsys, noisy, "noisy_count", "--budget", "1", "--ledger", ledger)[0] == 2  # no --data
    code, _, err = _run(capsys, str(EXAMPLES / "list_recursion.fz"), "noisy_total",
                        "--arg", "scores=[1, x]", "--ledger", ledger)
    assert code == 2 and "FZ509" in err


def test_a_run_killed_after_the_charge_keeps_the_charge(tmp_path: Path) -> None:
    """The process dies (SIGKILL) right after charging, before computing or
    printing: the release is recorded, nothing was shown."""
    import subprocess
    import sys

    script = (
        "import os, signal, sys\n"
        "import fuzzpy.release.run as run\n"
        "run.compute = lambda *a, **k: os.kill(os.getpid(), signal.SIGKILL)\n"
        "from fuzzpy.cli import main\n"
        "sys.exit(main(sys.argv[1:]))\n"
    )
    argv = ["run", *_noisy_count(tmp_path, "--budget", "1")]
    done = subprocess.run([sys.executable, "-c", script, *argv], capture_output=True, text=True, timeout=120)
    assert done.returncode == -9 and done.stdout == ""
    with Ledger(tmp_path / "l.sqlite") as ledger:
        (entry,) = ledger.history("census")
    assert entry.definition == "noisy_count"


def test_nan_rows_count_as_zero_in_a_clamped_sum(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    program = tmp_path / "ratio.fz"
    program.write_text(
        "type R = { a : num, b : num };\n"
        "def f (db : bag R) : fuzzy num = laplace[1000] (sum[0, 10] (map (fun r -> r.a / r.b) db));\n"
    )
    data = tmp_path / "r.csv"
    data.write_text("a,b\n0,0\n4,2\n")
    code, out, err = _run(capsys, str(program), "f", "--data", f"db={data}", "--budget", "20000",
                          "--ledger", str(tmp_path / "l.sqlite"), "--json", "--seed", "3")
    assert code == 0, err
    assert json.loads(out)["released"] == pytest.approx(2.0, abs=0.05)


def test_two_databases_are_charged_separately(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    program = tmp_path / "two.fz"
    program.write_text(
        "type R = { a : num };\n"
        "def f (x : bag R) (y : bag R) : fuzzy (num, num) = {\n"
        "  sample m = laplace[0.5] (size x);\n  sample n = laplace[0.25] (size y);\n  return (m, n)\n};\n"
    )
    data, other = tmp_path / "r.csv", tmp_path / "s.csv"  # one file is one dataset: two need two files
    data.write_text("a\n1\n2\n")
    other.write_text("a\n3\n")
    code, out, err = _run(capsys, str(program), "f", "--data", f"x={data}", "--data", f"y={other}",
                          "--dataset", "x=first", "--dataset", "y=second", "--budget", "1",
                          "--ledger", str(tmp_path / "l.sqlite"), "--json")
    assert code == 0, err
    charged = {d["dataset"]: d["charged"]["epsilon"] for d in json.loads(out)["datasets"]}
    assert charged == {"first": 0.5, "second": 0.25}


def test_releases_too_small_for_the_grid_are_refused(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    program = tmp_path / "tiny.fz"
    program.write_text("type R = { a : num };\ndef f (x : bag R) : fuzzy num = laplace[1e-9] (size x);\n")
    data = tmp_path / "r.csv"
    data.write_text("a\n1\n")
    code, out, err = _run(capsys, str(program), "f", "--data", f"x={data}", "--budget", "1",
                          "--ledger", str(tmp_path / "l.sqlite"))
    assert code == 1 and out == "" and "FZ520" in err
