"""`gauss_dp[s, eps, delta] e`: Gaussian noise calibrated by (eps, delta)
(issue 27; Duet's `gauss[s, eps, delta]`, DiffMu's `gaussian_mechanism!`).

One function, `calibrate.gauss_dp_sigma`, gives the sigma: these tests
compare what the ledger charged, what the run drew and what the accuracy line
states with it (no monkeypatch), check the privacy of that sigma against the
exact profile in mpmath (Balle & Wang 2018, Thm 8), and check the typing:
the declared sensitivity bound, the refusals at their positions and the
symbolic cost over parameters.
"""

from __future__ import annotations

import json
from fractions import Fraction
from pathlib import Path

import mpmath
import pytest

from fuzzpy.accounting.calibrate import gauss_dp_sigma
from fuzzpy.accounting.events import Gaussian
from fuzzpy.checker import check_program
from fuzzpy.checker.report import figures_for, symbolic_text
from fuzzpy.cli import main
from fuzzpy.frontend.parser import parse_program
from fuzzpy.language.diagnostics import FuzzError
from fuzzpy.ledger.book import Ledger


def _checked(text: str):
    return check_program(parse_program(text, "<gauss_dp>"))


def _refusal(text: str) -> tuple[str, int, int, str]:
    with pytest.raises(FuzzError) as info:
        _checked(text)
    first = info.value.diagnostics[0]
    return first.code, first.span.line, first.span.col, first.message


def exact_delta(epsilon: Fraction, sensitivity: Fraction, sigma: Fraction) -> mpmath.mpf:
    """delta(eps) of N(0, sigma^2) on a query of L2 sensitivity s (Balle & Wang
    2018, Thm 8): Phi(mu/2 - eps/mu) - e^eps Phi(-mu/2 - eps/mu), mu = s/sigma,
    at 50 digits from the exact rationals."""
    with mpmath.workdps(50):
        mu = mpmath.mpf(sensitivity.numerator) / sensitivity.denominator * sigma.denominator / sigma.numerator
        e = mpmath.mpf(epsilon.numerator) / epsilon.denominator
        return mpmath.ncdf(mu / 2 - e / mu) - mpmath.exp(e) * mpmath.ncdf(-mu / 2 - e / mu)


# -------------------------------------------------------------- the calibration itself

TARGETS = [  # (s, eps, delta), exact rationals as a program writes them
    (Fraction(1), Fraction(1), Fraction(1, 10**5)),
    (Fraction(1), Fraction(1, 10), Fraction(1, 5)),
    (Fraction(100), Fraction(1, 2), Fraction(1, 10**6)),
    (Fraction(3, 7), Fraction(7, 3), Fraction(1, 3)),
    (Fraction(1), Fraction(1, 1000), Fraction(1, 10**9)),
    (Fraction(1), Fraction(1, 10), Fraction(1, 10)),  # the double nearest 0.1 is above 0.1: searched below it
]


@pytest.mark.parametrize(("s", "eps", "delta"), TARGETS)
def test_the_calibrated_sigma_meets_the_declared_eps_delta_exactly_and_is_near_the_least(
        s: Fraction, eps: Fraction, delta: Fraction) -> None:
    sigma = gauss_dp_sigma(s, eps, delta)
    assert exact_delta(eps, s, sigma) <= mpmath.mpf(delta.numerator) / delta.denominator
    # rounded up to 6 digits from the least sigma: 1e-5 less noise no longer proves it
    less = sigma * (1 - Fraction(1, 10**5))
    assert exact_delta(eps, s, less) > mpmath.mpf(delta.numerator) / delta.denominator


def test_the_sigma_is_a_short_decimal_the_exact_sampler_takes() -> None:
    sigma = gauss_dp_sigma(Fraction(1), Fraction(1), Fraction(1, 10**5))
    assert sigma == Fraction("3.73064")  # sqrt(2 ln 1.25e5) = 4.8448 is Dwork & Roth's looser sigma


@pytest.mark.parametrize(("s", "eps", "delta"), [(1, 0, Fraction(1, 2)), (1, 1, 1), (1, 1, 0), (0, 1, Fraction(1, 2)),
                                                 (1, -1, Fraction(1, 2)), (1, 1, Fraction(3, 2))])
def test_the_calibration_refuses_what_is_no_target(s: int, eps: int, delta: Fraction) -> None:
    with pytest.raises(ValueError):
        gauss_dp_sigma(Fraction(s), Fraction(eps), Fraction(delta))


# -------------------------------------------------------------- the checker's charge

DUET_BABY = """
type Row = { a : int, b : num };
def baby (eps : num) (delta : num) (df : bag Row) : fuzzy num = gauss_dp[1, eps, delta] (size df);
def at_a (df : bag Row) : fuzzy num = baby 0.1 0.000001 df;
def at_b (df : bag Row) : fuzzy num = baby 1 0.00001 df;
def at_c (df : bag Row) : fuzzy num = baby 2.5 0.01 df;
"""
AT = {"at_a": (Fraction(1, 10), Fraction(1, 10**6)), "at_b": (Fraction(1), Fraction(1, 10**5)),
      "at_c": (Fraction(5, 2), Fraction(1, 100))}


def test_duet_baby_over_eps_and_delta_is_checked_once_and_charged_the_calibrated_gaussian_at_each_call() -> None:
    checked = _checked(DUET_BABY)
    baby = checked.definitions["baby"]
    assert baby.static_params == ("eps", "delta") and not baby.deferred
    assert symbolic_text(baby).startswith("(eps, delta)-DP in df  for all eps > 0, delta > 0")
    for name, (eps, delta) in AT.items():
        d = checked.definitions[name]
        (event,) = d.privacy["df"]
        assert isinstance(event, Gaussian)
        assert (event.sensitivity, event.sigma) == (1, gauss_dp_sigma(Fraction(1), eps, delta))
        figure = figures_for(d, float(delta))["df"]
        assert Fraction(figure.epsilon) <= eps and figure.delta <= float(delta)  # the declared pair, or better


DUET_TWO_ARGS = """
def two_args (eps : num) (delta : num) (x : num) (y : num) : fuzzy num = {
  sample g1 = gauss_dp[1, eps, delta] x;
  sample g2 = gauss_dp[1, eps, delta] y;
  return g1 + g2
};
def same_twice (eps : num) (delta : num) (x : num) : fuzzy (num, num) = {
  sample g1 = gauss_dp[1, eps, delta] x;
  sample g2 = gauss_dp[1, eps / 2, delta] x;
  return (g1, g2)
};
def looped (eps : num) (delta : num) (x : num) : fuzzy num = loop[4] 0 (fun s -> gauss_dp[1, eps, delta] x);
"""


def test_duet_two_args_and_compositions_over_parameters_add_eps_and_delta() -> None:
    checked = _checked(DUET_TWO_ARGS)
    assert symbolic_text(checked.definitions["two_args"]).startswith("(eps, delta)-DP in x, (eps, delta)-DP in y")
    assert symbolic_text(checked.definitions["same_twice"]).startswith("(1.5 * eps, 2 * delta)-DP in x")
    assert symbolic_text(checked.definitions["looped"]).startswith("(4 * eps, 4 * delta)-DP in x")


def test_diffmu_first_tutorial_at_its_numbers_is_within_its_pair() -> None:
    text = "def foo (x : int) : fuzzy num = { sample gx = gauss_dp[1, 0.1, 0.2] x; return 23 * gx + 42 };"
    d = _checked(text).definitions["foo"]
    sigma = gauss_dp_sigma(Fraction(1), Fraction(1, 10), Fraction(1, 5))
    assert d.argument_privacy["x"] == (Gaussian(Fraction(1), sigma),)
    figure = figures_for(d, 0.2)["x"]
    assert Fraction(figure.epsilon) <= Fraction(1, 10) and exact_delta(Fraction(1, 10), Fraction(1), sigma) <= 0.2


def test_an_index_sensitivity_is_an_obligation_and_a_refuted_one_is_checked_at_each_call() -> None:
    text = """
def scaled (n : nat) (eps : num) (delta : num) (x : num) : fuzzy num = gauss_dp[3, eps, delta] (n * x);
def fine (x : num) : fuzzy num = scaled 3 1 0.001 x;
def over (x : num) : fuzzy num = scaled 4 1 0.001 x;
"""
    code, line, col, message = _refusal(text)
    assert (code, line) == ("FZ305", 4) and "4-sensitive in `x`" in message and "s = 3" in message
    checked = _checked(text.replace("def over (x : num) : fuzzy num = scaled 4 1 0.001 x;\n", ""))
    scaled = checked.definitions["scaled"]
    assert scaled.deferred and "above 3 at n = 4" in symbolic_text(scaled)  # z3's witness, no acceptance
    assert checked.definitions["fine"].argument_privacy["x"] == (
        Gaussian(Fraction(3), gauss_dp_sigma(Fraction(3), Fraction(1), Fraction(1, 1000))),)
    bounded = "def capped (n : nat) (eps : num) (x : num) : fuzzy num = gauss_dp[1, eps, 0.001] (clip[0, 1] x);"
    assert _checked(bounded).definitions["capped"].static_params == ("n", "eps")


@pytest.mark.parametrize(("body", "code", "col", "words"), [
    ("gauss_dp[1, 0, 0.5] x", "FZ202", 43, "epsilon of `gauss_dp` must be positive"),
    ("gauss_dp[1, 1, 1] x", "FZ202", 46, "delta of `gauss_dp` must be below 1"),
    ("gauss_dp[1, 1, 0] x", "FZ202", 46, "delta of `gauss_dp` must be positive"),
    ("gauss_dp[0, 1, 0.5] x", "FZ202", 40, "sensitivity bound s"),
    ("gauss_dp[1, 1, 0.5] (x + x)", "FZ305", 51, "2-sensitive in `x`, above the declared bound s = 1"),
    ("gauss_dp[1, 1, 0.5] (x * x)", "FZ305", 51, "inf-sensitive"),
])
def test_refusals_are_located_at_the_static_argument_or_the_query(body: str, code: str, col: int, words: str) -> None:
    found = _refusal(f"def f (x : num) : fuzzy num = {body};")
    assert found[:3] == (code, 1, col) and words in found[3]


def test_a_call_with_delta_at_one_is_refused_at_the_call() -> None:
    text = """def baby (eps : num) (delta : num) (x : num) : fuzzy num = gauss_dp[1, eps, delta] x;
def main (x : num) : fuzzy num = baby 1 1 x;"""
    code, line, _, message = _refusal(text)
    assert (code, line) == ("FZ202", 2) and "below 1" in message


# -------------------------------------------------------------- the run: the same sigma everywhere

PROGRAM = """
def count_at (eps : num) (delta : num) (db : bag num) : fuzzy num = gauss_dp[1, eps, delta] (size db);
def count_fixed (db : bag num) : fuzzy num = gauss[SIGMA] (size db);
"""


def _run(tmp: Path, definition: str, *extra: str, program: str = PROGRAM) -> tuple[int, dict]:
    path = tmp / "p.fz"
    path.write_text(program)
    data = tmp / "d.csv"
    data.write_text("v\n1\n2\n3\n")
    code = main(["run", str(path), definition, "--data", f"db={data}", "--ledger", str(tmp / "l.db"),
                 "--budget", "100,0.9", "--seed", "7", "--json", *extra])
    return code, {}


@pytest.mark.parametrize(("eps", "delta"), [("1", "0.00001"), pytest.param("0.5", "0.000001", marks=pytest.mark.slow),
                                           pytest.param("0.1", "0.2", marks=pytest.mark.slow)])
def test_run_charges_the_gaussian_of_the_sigma_it_draws_with(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], eps: str, delta: str) -> None:
    sigma = gauss_dp_sigma(Fraction(1), Fraction(eps), Fraction(delta))
    program = PROGRAM.replace("SIGMA", str(float(sigma)))
    assert Fraction(str(float(sigma))) == sigma  # a short decimal: written back exactly
    code, _ = _run(tmp_path, "count_at", "--arg", f"eps={eps}", "--arg", f"delta={delta}", "--delta", delta,
                   program=program)
    assert code == 0
    out = json.loads(capsys.readouterr().out)
    with Ledger(tmp_path / "l.db") as ledger:
        (entry,) = ledger.history()
    (event,) = entry.events  # the ledger's event: the calibration's sigma
    assert isinstance(event, Gaussian) and (event.sensitivity, event.sigma) == (1, sigma)
    assert Fraction(out["charged"]["exact"]["epsilon"]) <= Fraction(eps)
    assert Fraction(out["charged"]["exact"]["delta"]) <= Fraction(delta)
    (accuracy,) = out["accuracy"] if isinstance(out["accuracy"], list) else [out["accuracy"]]
    assert accuracy["sigma"] == float(sigma)  # the accuracy line's sigma
    # the draw: the same seed through `gauss[sigma]` written out releases the same value
    code, _ = _run(tmp_path, "count_fixed", program=program)
    assert code == 0
    assert json.loads(capsys.readouterr().out)["released"] == out["released"]


def test_run_refuses_delta_one_before_any_charge(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, _ = _run(tmp_path, "count_at", "--arg", "eps=1", "--arg", "delta=1", program=PROGRAM.replace("SIGMA", "1"))
    assert code != 0
    assert json.loads(capsys.readouterr().out)["diagnostics"][0]["code"] == "FZ202"
    assert not (tmp_path / "l.db").exists() or not Ledger(tmp_path / "l.db").history()


def test_group_privacy_and_replace_one_drop_the_expression_for_each_calls_figure() -> None:
    from fuzzpy.accounting.neighbours import REPLACE_ONE, Neighbours
    from fuzzpy.checker.group import grouped
    from fuzzpy.checker.report import under

    checked = _checked(DUET_BABY)
    # (k eps, k e^((k-1) eps) delta) is no polynomial: never `(2 * eps, 2 * delta)` for k = 2
    assert symbolic_text(grouped(checked, 2).definitions["baby"]) == "approximate in df: see each call"
    with under(Neighbours(REPLACE_ONE)):
        assert symbolic_text(checked.definitions["baby"]) == "approximate in df: see each call"


EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "calibrated_gaussian.fz"


@pytest.mark.slow  # three runs
@pytest.mark.parametrize(("eps", "delta"), [("1", "0.00001"), ("0.25", "1 / 3"), ("3", "0.000000001")])
def test_duet_two_args_runs_at_three_pairs_with_the_calibrated_sigma(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], eps: str, delta: str) -> None:
    sigma = gauss_dp_sigma(Fraction(1), Fraction(eps.replace(" ", "")), Fraction(delta.replace(" ", "")))
    args = ["--arg", f"eps={eps.replace(' ', '')}", "--arg", f"delta={delta.replace(' ', '')}", "--arg", "x=3",
            "--arg", "y=4", "--seed", "11", "--ledger", str(tmp_path / "l.db"), "--json"]
    assert main(["run", str(EXAMPLE), "two_args", *args]) == 0
    released = json.loads(capsys.readouterr().out)["released"]
    written = tmp_path / "w.fz"
    written.write_text(f"def two_args (x : num) (y : num) : fuzzy num = {{ sample g1 = gauss[{sigma.numerator} / "
                       f"{sigma.denominator}] x; sample g2 = gauss[{sigma.numerator} / {sigma.denominator}] y; "
                       "return g1 + g2 };")
    assert main(["run", str(written), "two_args", *args[4:]]) == 0
    assert json.loads(capsys.readouterr().out)["released"] == released


def test_one_draw_reached_by_an_alias_and_the_variable_states_no_added_pair() -> None:
    # regression: two routes into ONE draw were added as two releases, (2 eps, 2 delta); the true
    # query moves by 2 > s, and at eps = 1, delta = 1e-5 that Gaussian is not (2, 2e-5)-DP
    text = """def one (eps : num) (delta : num) (db : bag num) : fuzzy num = {
  let a = db;
  gauss_dp[1, eps, delta] (size a + size db)
};"""
    assert symbolic_text(_checked(text).definitions["one"]) == "approximate in db: see each call"
    sigma = gauss_dp_sigma(Fraction(1), Fraction(1), Fraction(1, 10**5))
    assert exact_delta(Fraction(2), Fraction(2), sigma) > 2e-5  # the added pair would have been false
    at_numbers = _checked(text + "\ndef main (db : bag num) : fuzzy num = one 1 0.00001 db;").definitions["main"]
    (event,) = at_numbers.privacy["db"]  # at numbers: the one draw at the summed sensitivity
    assert isinstance(event, Gaussian) and (event.sensitivity, event.sigma) == (2, sigma)


def test_gauss_dp_over_parameters_under_subsample_is_checked_at_each_call() -> None:
    # regression: the deferral named only pure symbolic epsilons, so this was refused (FZ202)
    text = """def sub (eps : num) (delta : num) (db : bag num) : fuzzy num =
  subsample[0.5] (fun b -> gauss_dp[1, eps, delta] (size b)) db;
def main (db : bag num) : fuzzy num = sub 1 0.00001 db;"""
    checked = _checked(text)
    assert checked.definitions["sub"].deferred
    assert checked.definitions["main"].privacy["db"]
