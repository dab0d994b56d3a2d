"""Issue 25, items 1, 2 and 4, seen from outside: what a person reads.

* every number `budget` and `check` print as a cost is at least what the
  API proves (and at least the exact value, where one is known in closed
  form: the analytic Gaussian, Balle & Wang 2018, Thm 8; pure composition);
* a printed calibration, typed back in, reaches its target when re-accounted
  (and one unit less in its last digit does not: no needless noise);
* the refusal hint's budget suffices; the ledger's text rounds the charge up
  and what remains down;
* every accounting output names its neighbour relation.
"""

from __future__ import annotations

import decimal
import json
import re
from fractions import Fraction
from pathlib import Path

import mpmath
import pytest

from fuzzpy.accounting.accountant import guarantees, tightest
from fuzzpy.accounting.calibrate import gaussian_events, laplace_events
from fuzzpy.cli import main

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"
ROW = re.compile(r"^\s+(?P<method>[a-z-]+)\s+eps =\s+(?P<eps>\S+)\s", re.M)
CALIBRATED = re.compile(r"^(?:gaussian sigma|laplace scale) = (?P<scale>\S+) for", re.M)
PROVES = re.compile(r"proves \((?P<eps>[^,]+), (?P<delta>[^)]+)\)-DP|proves (?P<pure>\S+)-DP")


def cli(capsys: pytest.CaptureFixture[str], *argv: str) -> str:
    assert main(list(argv)) == 0
    return capsys.readouterr().out


def exact_gaussian_epsilon(mu: float, delta: float) -> mpmath.mpf:
    """The least eps with delta(eps) <= delta for a Gaussian of mu = s/sigma
    (Balle & Wang 2018, Thm 8), by bisection in mpmath at 60 digits."""
    with mpmath.workdps(60):
        m = mpmath.mpf(mu)
        phi = mpmath.ncdf

        def delta_at(eps: mpmath.mpf) -> mpmath.mpf:
            return phi(-eps / m + m / 2) - mpmath.exp(eps) * phi(-eps / m - m / 2)

        lo, hi = mpmath.mpf(0), mpmath.mpf(1)
        while delta_at(hi) > delta:
            hi *= 2
        if delta_at(lo) <= delta:
            return lo
        for _ in range(200):
            mid = (lo + hi) / 2
            lo, hi = (lo, mid) if delta_at(mid) <= delta else (mid, hi)
        return hi


# ---------------------------------------------------------------- budget's figures

GAUSSIANS = [(sigma, k, delta) for sigma in ("0.6", "2", "7.3") for k in (1, 13, 400)
             for delta in ("1e-3", "1e-6", "1e-10")]


@pytest.mark.parametrize(("sigma", "rounds", "delta"), GAUSSIANS)
def test_every_printed_gaussian_epsilon_is_above_the_proven_and_the_exact(capsys, sigma, rounds, delta):
    out = cli(capsys, "budget", "--gaussian", sigma, "--rounds", str(rounds), "--delta", delta)
    events = gaussian_events(Fraction(sigma), rounds)
    proven = {g.method: g.epsilon for g in guarantees(events, float(delta))}
    printed = {m["method"]: m["eps"] for m in ROW.finditer(out)}
    assert set(printed) == set(proven)
    exact = exact_gaussian_epsilon(rounds**0.5 / float(Fraction(sigma)), float(delta))
    for method, text in printed.items():
        if text != "inf":
            assert Fraction(text) >= Fraction(proven[method]), (method, text, proven[method])
            assert mpmath.mpf(text) >= exact, (method, text, exact)
    shown = re.search(r"at delta = (\S+):", out)
    assert shown and Fraction(shown[1]) == Fraction(delta)


@pytest.mark.parametrize(("mechanism", "noise", "rate", "rounds", "delta"), [
    ("--gaussian", "0.9", "0.01", 500, "1e-5"), ("--gaussian", "3", "0.2", 40, "1e-9"),
    ("--laplace", "0.5", "0.05", 200, "1e-6"), ("--laplace", "2", "0.3", 10, "1e-3")])
def test_subsampled_releases(capsys, mechanism, noise, rate, rounds, delta):
    out = cli(capsys, "budget", mechanism, noise, "--subsample", rate, "--rounds", str(rounds), "--delta", delta)
    if mechanism == "--gaussian":
        events = gaussian_events(Fraction(noise), rounds, 1, Fraction(rate))
    else:
        events = laplace_events(1 / Fraction(noise), rounds, 1, Fraction(rate))
    proven = {g.method: g.epsilon for g in guarantees(events, float(delta))}
    rows = list(ROW.finditer(out))
    assert rows
    for row in rows:
        if row["eps"] != "inf":
            assert float(row["eps"]) >= proven[row["method"]], (row["method"], row["eps"])


LAPLACES = [(eps0, k, delta) for eps0 in ("0.05", "0.3", "1.7") for k in (1, 7, 60) for delta in ("0", "1e-7")]


@pytest.mark.parametrize(("eps0", "rounds", "delta"), LAPLACES)
def test_every_printed_laplace_epsilon_is_above_the_proven(capsys, eps0, rounds, delta):
    given = ("--delta", delta) if delta != "0" else ()  # without --delta a pure release is accounted at 0
    out = cli(capsys, "budget", "--laplace", eps0, "--rounds", str(rounds), *given)
    events = laplace_events(1 / Fraction(eps0), rounds)
    proven = {g.method: g.epsilon for g in guarantees(events, float(delta))}
    exact = rounds * Fraction(eps0)  # pure composition (Dwork, McSherry, Nissim & Smith 2006)
    for row in ROW.finditer(out):
        if row["method"] == "pure":  # printed from the exact Fraction: compared exactly
            assert Fraction(row["eps"]) >= exact
        elif row["eps"] != "inf":  # a float read back as a float (fuzzpy.language.figures)
            assert float(row["eps"]) >= proven[row["method"]]
            assert Fraction(row["eps"]) >= exact or delta != "0"
    if delta == "0":  # pure composition is exact: k * eps0, printed as such
        assert Fraction(dict((r["method"], r["eps"]) for r in ROW.finditer(out))["pure"]) == rounds * Fraction(eps0)


def test_the_issue_gaussian_prints_what_check_prints(capsys):
    out = cli(capsys, "budget", "--gaussian", "2", "--delta", "1e-6")
    assert "exact-gaussian  eps =      2.25409" in out  # was 2.25408, below the optimum 2.254084650
    checked = cli(capsys, "check", str(EXAMPLES / "gaussian_centroid.fz"))
    assert "(2.25409, 1e-06)-DP in db" in checked


def test_a_program_at_many_deltas(capsys):
    """`budget FILE DEF --delta D` and `check --delta D`: each printed figure
    above the API's, for a composition of Gaussians (sensitivity 10 and 1)."""
    from fuzzpy.api.program import load

    program = load(str(EXAMPLES / "gaussian_centroid.fz"))
    for delta in ("0.3", "1e-4", "1e-9", "1e-15"):
        cost = program.check(float(delta))["centroid"].costs["db"]
        budget = cli(capsys, "budget", str(EXAMPLES / "gaussian_centroid.fz"), "centroid", "--delta", delta)
        first = re.search(r"centroid\s+\((\S+), (\S+)\)-DP", budget)
        assert first and Fraction(first[1]) >= Fraction(cost.epsilon) and Fraction(first[2]) >= Fraction(delta)
        printed = re.search(r"\((\S+), \S+\)-DP", cost.text)
        assert printed and Fraction(printed[1]) >= Fraction(cost.epsilon)


# ---------------------------------------------------------------- calibrations

GAUSSIAN_TARGETS = [(eps, delta, k) for eps in ("0.1", "0.5", "1", "2.5", "8") for delta in ("1e-3", "1e-5", "1e-9")
                    for k in (1, 10, 1000)]
LAPLACE_TARGETS = [(eps, "0", k) for eps in ("0.1", "0.3", "1", "3", "10") for k in (1, 7, 50)] + [
    (eps, "1e-6", k) for eps in ("0.3", "1", "3", "10", "20") for k in (7, 40)]


def _calibrated(out: str) -> tuple[str, Fraction]:
    found = CALIBRATED.search(out)
    assert found, out
    proves = PROVES.search(out)
    assert proves, out
    return found["scale"], Fraction(proves["eps"] or proves["pure"])


def _one_unit_less(text: str) -> Fraction:
    """The largest 6-significant-digit decimal below ``text``."""
    return Fraction(decimal.Context(prec=6).next_minus(decimal.Decimal(text)))


def _least_reading(value: Fraction) -> Fraction:
    return min(value, Fraction(float(value)))


def _readings(text: str) -> list[Fraction]:
    return [Fraction(text), Fraction(float(text))]  # as a decimal in a program, or as a double


@pytest.mark.parametrize(("epsilon", "delta", "rounds"), GAUSSIAN_TARGETS)
def test_a_printed_gaussian_calibration_reaches_its_target(capsys, epsilon, delta, rounds):
    out = cli(capsys, "budget", "--calibrate", "gaussian", "--epsilon", epsilon, "--delta", delta,
              "--rounds", str(rounds))
    sigma, claimed = _calibrated(out)
    target = Fraction(epsilon)
    for value in _readings(sigma):
        found = tightest(gaussian_events(value, rounds), float(delta)).epsilon
        assert found <= float(target) and found <= claimed <= target
        # and by the closed form, independently of the accountant
        assert exact_gaussian_epsilon(rounds**0.5 / float(value), float(delta)) <= float(target)
    less = tightest(gaussian_events(_least_reading(_one_unit_less(sigma)), rounds), float(delta)).epsilon
    assert less > target, f"{sigma} is more noise than needed"


@pytest.mark.parametrize(("epsilon", "delta", "rounds"), LAPLACE_TARGETS)
def test_a_printed_laplace_calibration_reaches_its_target(capsys, epsilon, delta, rounds):
    given = ("--delta", delta) if delta != "0" else ()
    out = cli(capsys, "budget", "--calibrate", "laplace", "--epsilon", epsilon, *given, "--rounds", str(rounds))
    scale, claimed = _calibrated(out)
    target = Fraction(epsilon)
    for value in _readings(scale):
        assert tightest(laplace_events(value, rounds), float(delta)).epsilon <= float(target)  # as --epsilon reads it
        if delta == "0":
            assert rounds / value <= target  # pure composition, exactly
    assert claimed <= target
    assert tightest(laplace_events(_least_reading(_one_unit_less(scale)), rounds), float(delta)).epsilon > target


def test_the_issue_calibrations(capsys):
    """`--calibrate gaussian --epsilon 1 --delta 1e-5` printed 3.73063, which is
    (1.00000048, 1e-5)-DP; `--calibrate laplace --epsilon 0.3 --rounds 7`
    printed 23.3333, which is 0.3000004-DP."""
    out = cli(capsys, "budget", "--calibrate", "gaussian", "--epsilon", "1", "--delta", "1e-5")
    assert _calibrated(out)[0] == "3.73064"
    out = cli(capsys, "budget", "--calibrate", "laplace", "--epsilon", "0.3", "--rounds", "7")
    assert _calibrated(out)[0] == "23.3334"


def test_subsampled_calibrations(capsys):
    for mechanism, rate, rounds in (("gaussian", "0.01", "300"), ("laplace", "0.05", "20")):
        out = cli(capsys, "budget", "--calibrate", mechanism, "--epsilon", "1", "--delta", "1e-5",
                  "--rounds", rounds, "--subsample", rate)
        scale, _ = _calibrated(out)
        build = gaussian_events if mechanism == "gaussian" else laplace_events
        for value in _readings(scale):
            assert tightest(build(value, int(rounds), 1, Fraction(rate)), 1e-5).epsilon <= 1


def test_calibration_json_keeps_the_exact_scale_and_gives_the_printed_one(capsys):
    document = json.loads(cli(capsys, "budget", "--calibrate", "gaussian", "--epsilon", "1", "--delta", "1e-5",
                              "--json"))
    assert document["sigma"] < 3.73064 and document["printed"]["sigma"] == "3.73064"
    assert document["printed"]["guarantee"]["epsilon"] <= 1 and document["neighbours"] == "add-remove-one"


# ---------------------------------------------------------------- the ledger's text


def test_ledger_text_rounds_the_charge_up_and_what_remains_down():
    from fuzzpy.ledger.quotes import describe_amount
    from fuzzpy.ledger.rules import Budget, Spend

    budget = Budget("3", "1e-5")
    cost = Fraction(1985354, 10**6) + Fraction(1, 3 * 10**7)  # 1.98535433..: the nearest 6 digits are below it
    assert describe_amount(Spend(cost, Fraction(1, 10**6)), budget) == "eps=~1.98536, delta=1e-06"
    left = Fraction(3) - cost
    assert describe_amount(Spend(left, Fraction(9, 10**6)), budget, up=False) == "eps=~1.01464, delta=9e-06"


def test_the_refusal_hint_suggests_a_budget_that_suffices(capsys, tmp_path):
    ledger = str(tmp_path / "ledger.sqlite")
    program, data = str(EXAMPLES / "gaussian_centroid.fz"), "db=" + str(EXAMPLES / "data" / "points.csv")
    base = ["run", program, "centroid", "--data", data, "--ledger", ledger, "--seed", "1"]
    assert main([*base, "--budget", "1,1e-5"]) != 0
    err = capsys.readouterr().err
    hint = re.search(r"--budget (\S+?)\)", err)
    assert hint, err
    assert main([*base, "--budget", hint[1]]) == 0, capsys.readouterr().err
    out = capsys.readouterr().out
    assert "charged:" in out


# ---------------------------------------------------------------- the neighbour relation


def test_the_neighbour_relation_is_said(capsys):
    assert main(["budget", "--help"]) == 0
    assert "adding or removing one row" in " ".join(capsys.readouterr().out.split())
    out = cli(capsys, "budget", "--gaussian", "2", "--rounds", "3", "--delta", "1e-6")
    assert "neighbours: datasets differing by adding or removing one row (the bag metric)" in out
    assert json.loads(cli(capsys, "budget", "--laplace", "1", "--json"))["neighbours"] == "add-remove-one"
    program = str(EXAMPLES / "noisy_count.fz")
    assert json.loads(cli(capsys, "budget", program, "--json"))["neighbours"] == "add-remove-one"
    assert json.loads(cli(capsys, "check", program, "--json"))["neighbours"] == "add-remove-one"
    assert cli(capsys, "check", program).rstrip().endswith("adding or removing one row (the bag metric)")


def test_a_release_document_says_the_neighbour_relation(capsys, tmp_path):
    program, data = str(EXAMPLES / "noisy_count.fz"), "db=" + str(EXAMPLES / "data" / "people.csv")
    args = ["run", program, "noisy_count", "--data", data, "--ledger", str(tmp_path / "l.sqlite"),
            "--budget", "1", "--seed", "3", "--json"]
    assert main(args) == 0, capsys.readouterr().err
    assert json.loads(capsys.readouterr().out)["neighbours"] == "add-remove-one"


def test_the_notebook_table_says_the_neighbour_relation_and_rounds_up():
    from fuzzpy.api.program import load

    page = load(str(EXAMPLES / "gaussian_centroid.fz")).check()._repr_html_()
    assert "adding or removing one row" in page and "(2.25409, 1e-06)-DP" in page


def test_a_refutation_prints_an_inequality_that_holds():
    """`verify`'s `ratio = R > e^eps = B  (log-ratio L > E)`: R and L at most
    the 50-digit values, B and E at least (was rounded to nearest: 4.48169 for
    e^1.5 = 4.481689..., 2.71828 for e = 2.718281...)."""
    import fuzzpy

    (result,) = fuzzpy.load(str(EXAMPLES / "mechanisms" / "buggy" / "rnm_release_value.fz")).verify()
    cx = result.verdict.counterexample
    line = next(t for t in result.text().splitlines() if "ratio =" in t)
    found = re.search(r"ratio = (\S+) > e\^eps = (\S+)  \(log-ratio (\S+) > (\S+)\)", line)
    assert found, line
    with mpmath.workdps(50):
        ratio = cx.p_inputs / cx.p_neighbour
        assert mpmath.mpf(found[1]) <= ratio and mpmath.mpf(found[3]) <= mpmath.log(ratio)
        assert mpmath.mpf(found[2]) >= mpmath.exp(mpmath.mpf(cx.eps.numerator) / cx.eps.denominator)
    assert Fraction(found[4]) >= cx.eps
    assert (found[1], found[2]) == ("4.48168", "2.71829")


@pytest.mark.parametrize(("start", "least"), [("3.74", "3.73063"), ("10.5", "9.99871"), ("0.000200001", "0.00012"),
                                             ("7", "7")])
def test_the_least_printed_noise_is_found_in_few_steps(start, least):
    """A scale found far above the least one that proves the target (a loose
    search, or a tighter method at the check) is brought down to the least
    6-digit text, across a decade, in O(log) accountant calls."""
    from fuzzpy.accounting.accountant import Guarantee
    from fuzzpy.accounting.calibrate import _least_proving

    threshold = Fraction(least) - Fraction(1, 10**12)  # proves from just below `least`
    calls = []

    def proves(text: str) -> Guarantee | None:
        calls.append(text)
        return Guarantee(0.5, 1e-6, "test") if Fraction(text) >= threshold else None

    printed, _ = _least_proving(start, Guarantee(0.5, 1e-6, "test"), proves)
    assert printed == least and len(calls) <= 60


def test_run_text_ledger_and_refusal_say_the_neighbour_relation(capsys, tmp_path):
    """Issue 25 item 4: `run`'s text, `ledger` (text, JSON, audit) and an
    over-budget refusal (FZ601) each say for which neighbours the costs hold."""
    said = "adding or removing one row (the bag metric)"
    ledger = str(tmp_path / "book.sqlite")
    program, data = str(EXAMPLES / "noisy_count.fz"), "db=" + str(EXAMPLES / "data" / "people.csv")
    base = ["run", program, "noisy_count", "--data", data, "--ledger", ledger, "--seed", "7"]
    assert main([*base, "--budget", "0.15"]) == 0, capsys.readouterr().err
    out = capsys.readouterr().out
    assert "charged:" in out and said in out
    assert main(["ledger", "--ledger", ledger]) == 0
    text = capsys.readouterr().out
    assert said in text.splitlines()[1]
    assert main(["ledger", "--ledger", ledger, "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["neighbours"] == "add-remove-one"
    assert main(["ledger", "--ledger", ledger, "--audit", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["neighbours"] == "add-remove-one"
    assert main(["ledger", "--ledger", ledger, "--audit"]) == 0
    assert said in capsys.readouterr().out
    # 0.05 of 0.15 is left: a second release of cost 0.1 is refused
    assert main(base) == 3
    err = capsys.readouterr().err
    assert "FZ601" in err and said in " ".join(err.split())
    assert main([*base, "--json"]) == 3
    refusal = capsys.readouterr()
    assert said in " ".join((refusal.out + refusal.err).split())


@pytest.mark.parametrize(("epsilon", "delta", "rounds"), [("1e-9", "1e-300", 1), ("1e-9", "1e-300", 7),
                                                         ("1e-6", "1e-200", 3), ("1e-140", "1e-10", 1)])
def test_calibration_at_tiny_targets_reaches_them(capsys, epsilon, delta, rounds):
    """Review (c): `--calibrate gaussian --epsilon 1e-9 --delta 1e-300` failed
    with the root finder's text (mu was searched from 1e-9 up); the printed
    sigma must reach the target, by the accountant and by the closed form."""
    out = cli(capsys, "budget", "--calibrate", "gaussian", "--epsilon", epsilon, "--delta", delta,
              "--rounds", str(rounds))
    sigma, claimed = _calibrated(out)
    for value in _readings(sigma):
        found = tightest(gaussian_events(value, rounds), float(delta)).epsilon
        assert found <= float(epsilon) and claimed <= Fraction(epsilon)
        assert exact_gaussian_epsilon(rounds**0.5 / float(value), float(delta)) <= float(epsilon)


def test_calibration_beyond_the_doubles_range_says_so(capsys):
    assert main(["budget", "--calibrate", "gaussian", "--epsilon", "1e-200", "--delta", "1e-300"]) != 0
    err = capsys.readouterr().err
    assert "FZ704" in err and "f(a) and f(b)" not in err and ("noise scale" in err or "sigma below" in err)
