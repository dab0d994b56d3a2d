"""What every command shares: help with a description, a start-up that
imports nothing heavy, coded diagnostics for usage errors, JSON failures
under --json, notes on stderr, and one delta policy for check, budget and run.
"""

from __future__ import annotations

import json
import math
import re
import subprocess
import sys
from pathlib import Path

import pytest

from fuzzpy.cli import main
from fuzzpy.commands import SUMMARIES
from fuzzpy.ledger.book import Ledger

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"
PEOPLE = EXAMPLES / "data" / "people.csv"
POINTS = EXAMPLES / "data" / "points.csv"
CENTROID = EXAMPLES / "gaussian_centroid.fz"
HEAVY = ("numpy", "scipy", "z3", "lark", "dp_accounting", "mpmath", "pyarrow", "sqlite3",
         "fuzzpy.checker", "fuzzpy.accounting.accountant", "fuzzpy.verifier.prover")


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def codes(err: str) -> list[str]:
    return [line.split("]")[0].split("[")[1] for line in err.splitlines() if line.startswith(("error[", "warning["))]


# ---------------------------------------------------------------- help and start-up


@pytest.mark.parametrize("command", [*SUMMARIES, "dataset register", "dataset check", "dataset update",
                                     "dataset list", "dataset show"])
def test_every_help_has_a_description(capsys: pytest.CaptureFixture[str], command: str) -> None:
    code, out, _ = run(capsys, *command.split(), "--help")
    assert code == 0
    usage, _, rest = out.partition("\n\n")
    description = rest.split("\n\n")[0]
    assert usage.startswith("usage: fuzzpy") and len(description.split()) >= 5
    assert not description.lstrip().startswith(("positional arguments", "options"))


@pytest.mark.parametrize("command", ["check", "run", "budget"])
def test_the_delta_policy_is_in_the_help(capsys: pytest.CaptureFixture[str], command: str) -> None:
    _, out, _ = run(capsys, command, "--help")
    assert "1e-6" in " ".join(out.split()) and "--delta" in out


def test_building_the_parser_imports_nothing_heavy() -> None:
    script = (
        "import sys\n"
        "from fuzzpy.cli import build_parser\n"
        "for command in ['', 'parse', 'check', 'verify', 'run', 'budget']:\n"
        "    build_parser(command)\n"
        f"print(sorted(m for m in {HEAVY!r} if m in sys.modules))\n"
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert done.stdout.strip() == "[]", done.stderr


def test_help_runs_no_command(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "--help")
    assert code == 0 and all(name in out for name in SUMMARIES)


# ---------------------------------------------------------------- usage errors


def test_a_mistyped_run_option_shows_runs_usage_and_a_suggestion(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(capsys, "run", str(EXAMPLES / "noisy_count.fz"), "noisy_count", "--bugdet", "1")
    assert (code, out, codes(err)) == (2, "", ["FZ703"])
    assert "usage: fuzzpy run" in err and "--budget" in err.split("hint:")[1]


@pytest.mark.parametrize("argv", [
    ["nonsense"],
    ["check"],
    ["check", "--delta", "2", "x.fz"],
    ["run", "x.fz"],
    ["dataset"],
    ["ledger", "--rule", "fast"],
])
def test_usage_errors_are_coded_diagnostics(capsys: pytest.CaptureFixture[str], argv: list[str]) -> None:
    code, out, err = run(capsys, *argv)
    assert (code, out, codes(err)) == (2, "", ["FZ703"])


# ---------------------------------------------------------------- JSON failures


@pytest.mark.parametrize("argv", [
    ["parse", "missing.fz"],
    ["check", "missing.fz"],
    ["verify", "missing.fz"],
    ["run", "missing.fz", "f", "--data", "db=missing.csv"],
    ["run", "x.fz", "f", "--bugdet", "1"],
    ["ledger", "--ledger", "LEDGER", "--dataset", "nobody"],
    ["dataset", "show", "nobody", "--ledger", "LEDGER"],
    ["budget"],
    ["budget", "--gaussian", "-1"],
])
def test_json_failures_are_documents_on_stdout(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, argv: list[str]
) -> None:
    ledger = tmp_path / "l.sqlite"
    Ledger(ledger).close()
    argv = [str(ledger) if a == "LEDGER" else a for a in argv]
    code, out, err = run(capsys, *argv, "--json")
    document = json.loads(out)
    assert code != 0 and document["ok"] is False and err == ""
    assert document["diagnostics"] and all(d["code"].startswith("FZ") for d in document["diagnostics"])


def test_a_refused_run_is_a_json_document(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    argv = ["run", str(EXAMPLES / "noisy_count.fz"), "noisy_count", "--data", f"db={PEOPLE}",
            "--ledger", str(tmp_path / "l.sqlite"), "--json"]
    code, out, err = run(capsys, *argv, "--budget", "0.05")
    assert (code, err) == (3, "")
    assert [d["code"] for d in json.loads(out)["diagnostics"]] == ["FZ601"]


def test_the_seed_note_goes_to_stderr(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    argv = ["run", str(EXAMPLES / "noisy_count.fz"), "noisy_count", "--data", f"db={PEOPLE}",
            "--budget", "1", "--ledger", str(tmp_path / "l.sqlite"), "--seed", "1"]
    code, out, err = run(capsys, *argv)
    assert code == 0 and "NOT" not in out and "--seed" in err and "NOT differentially private" in err


def test_a_closed_pipe_is_not_an_internal_error(tmp_path: Path) -> None:
    reader = subprocess.Popen([sys.executable, "-m", "fuzzpy", "budget", "--gaussian", "2", "--rounds", "3"],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert reader.stdout is not None and reader.stderr is not None
    reader.stdout.close()  # as `| head -0` does
    err = reader.stderr.read().decode()
    reader.wait(timeout=120)
    assert "FZ799" not in err and "Traceback" not in err


# ---------------------------------------------------------------- one delta policy


def test_a_budget_sized_from_check_is_enough_for_run(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    """`check` reports (eps, 1e-6); a budget of what it prints pays for the
    run, which charges at 1e-6 and records it."""
    code, out, _ = run(capsys, "check", "--json", str(CENTROID))
    (centroid,) = [d for d in json.loads(out)["definitions"] if d["name"] == "centroid"]
    figure = centroid["privacy"]["db"]
    assert code == 0 and figure["delta"] == 1e-6
    code, out, _ = run(capsys, "budget", "--json", str(CENTROID), "centroid")
    assert json.loads(out)["definitions"][0]["privacy"]["db"]["epsilon"] == figure["epsilon"]
    _, out, _ = run(capsys, "check", str(CENTROID))
    shown = next(line for line in out.splitlines() if line.startswith("centroid"))
    epsilon, delta = re.search(r"\(([0-9.e+-]+), ([0-9.e+-]+)\)-DP in db", shown).groups()
    assert delta == "1e-06"
    ledger = tmp_path / "l.sqlite"
    code, out, err = run(capsys, "run", str(CENTROID), "centroid", "--data", f"db={POINTS}",
                         "--budget", f"{epsilon},{delta}", "--ledger", str(ledger), "--json")
    assert code == 0, err
    charged = json.loads(out)["charged"]
    # the exact 1/10^6 charged; its float the least double >= it (the double 1e-6 is below 1/10^6)
    assert charged["exact"]["delta"] == "1/1000000" and charged["delta"] == math.nextafter(1e-6, 1)
    with Ledger(ledger) as opened:
        (entry,) = opened.history()
    assert entry.cost.delta == pytest.approx(1e-6) and entry.cost.spend.delta == entry.cost.delta


def test_a_refusal_says_which_delta_or_budget_would_work(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    argv = ["run", str(CENTROID), "centroid", "--data", f"db={POINTS}", "--ledger", str(tmp_path / "l.sqlite")]
    code, _, err = run(capsys, *argv, "--budget", "2.2,1e-5")
    assert (code, codes(err)) == (3, ["FZ601"])
    hint = err.split("hint:")[1]
    assert "--budget" in hint and "--delta" in hint
    suggested = hint.split("--delta ")[1].split()[0]
    code, out, err = run(capsys, *argv, "--budget", "2.2,1e-5", "--delta", suggested, "--json")
    assert code == 0, err  # what the hint said works
    code, _, err = run(capsys, *argv, "--budget", "2,0", "--dataset", "pure")
    assert (code, codes(err)) == (3, ["FZ603"]) and "--budget" in err.split("hint:")[1]


def test_every_code_in_the_source_is_described() -> None:
    from fuzzpy.language.messages import CODES

    source = Path(__file__).resolve().parent.parent / "fuzzpy"
    used = {code for path in source.rglob("*.py") for code in re.findall(r'"(FZ\d{3})"', path.read_text())}
    assert used and used <= set(CODES), sorted(used - set(CODES))
