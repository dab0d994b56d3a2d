"""Accuracy with every release (issue 29, item 5; docs/semantics.md "Accuracy").

Checked from the outside: the discrete tails against sums written out term by
term, the intervals against thousands of seeded draws of the runtime's own
samplers, the JSON and text a user reads, and that the statement is the same
for two neighbouring datasets (it is post-processing of public parameters)."""

from __future__ import annotations

import json
import math
from fractions import Fraction
from pathlib import Path
from typing import Any

import pytest

import fuzzpy
from fuzzpy.cli import main
from fuzzpy.runtime.accuracy import (
    NoiseNote,
    dgauss_tail_bound,
    dgauss_units,
    dlap_tail,
    dlap_units,
    half_width,
)
from fuzzpy.runtime.expmech import exponential_mechanism
from fuzzpy.runtime.noise import (
    gauss_grid,
    gauss_release,
    laplace_grid,
    laplace_release,
    laplace_release_one,
)
from fuzzpy.runtime.randomness import SeededSource

np = pytest.importorskip("numpy")

DRAWS = 2000


def _margin(level: float, n: int = DRAWS) -> float:
    """Four binomial standard deviations: a correct interval misses this
    rarely enough for fixed seeds never to flake."""
    return 4 * math.sqrt(level * (1 - level) / n)


# ---------------------------------------------------------------- exact tails, term by term


def _dlap_pmf(t: int, z: int) -> float:
    q = math.exp(-1 / t)
    return (1 - q) / (1 + q) * q ** abs(z)


@pytest.mark.parametrize("t", [1, 2, 7, 40])
def test_discrete_laplace_tail_is_the_sum_of_its_terms(t: int) -> None:
    for k in (0, 1, 3, t, 5 * t):
        brute = 2 * math.fsum(_dlap_pmf(t, z) for z in range(k + 1, k + 200 * t + 50))
        assert dlap_tail(t, k) == pytest.approx(brute, rel=1e-9, abs=1e-15)


@pytest.mark.parametrize("t", [1, 3, 10, 64])
@pytest.mark.parametrize("alpha", [0.5, 0.05, 0.001])
def test_discrete_laplace_units_cover_and_are_nearly_least(t: int, alpha: float) -> None:
    k = dlap_units(t, alpha)
    tail = lambda j: 1 - math.fsum(_dlap_pmf(t, z) for z in range(-j, j + 1))  # noqa: E731
    assert tail(k) <= alpha
    assert k - 2 < 0 or tail(k - 2) > alpha  # the least k plus one unit of margin, no more


def _dgauss_mass(s: int) -> dict[int, float]:
    span = 40 * s + 40
    weights = {z: math.exp(-z * z / (2 * s * s)) for z in range(-span, span + 1)}
    total = math.fsum(weights.values())
    return {z: w / total for z, w in weights.items()}


@pytest.mark.parametrize("s", [1, 2, 5, 30])
def test_discrete_gaussian_tail_bound_is_above_the_exact_sum(s: int) -> None:
    mass = _dgauss_mass(s)
    for m in range(1, 5 * s + 2):
        exact = math.fsum(p for z, p in mass.items() if abs(z) >= m)
        assert dgauss_tail_bound(s, m) >= exact
    # and not far above it once s is large (the extra term is below 1/s)
    exact = math.fsum(p for z, p in mass.items() if abs(z) >= 2 * s)
    assert dgauss_tail_bound(s, 2 * s) - exact <= 1.0 / s


@pytest.mark.parametrize("s", [1, 4, 25])
@pytest.mark.parametrize("alpha", [0.2, 0.05, 0.01])
def test_discrete_gaussian_units_cover(s: int, alpha: float) -> None:
    mass = _dgauss_mass(s)
    k = dgauss_units(s, alpha)
    assert math.fsum(p for z, p in mass.items() if abs(z) > k) <= alpha


# ---------------------------------------------------------------- empirical coverage of the runtime's noise


@pytest.mark.parametrize(("scale", "level"), [(Fraction(1, 3), Fraction(95, 100)), (Fraction(250), Fraction(9, 10))])
def test_laplace_interval_covers_scalar_releases(scale: Fraction, level: Fraction) -> None:
    e, t = laplace_grid(scale, 1)
    h = half_width(NoiseNote("laplace", scale, 1, e, t), level)
    source = SeededSource(2901)
    x = Fraction(1203, 7)  # not on the grid: the rounding is part of the error
    hits = sum(abs(laplace_release_one(x, scale, source) - x) <= h for _ in range(DRAWS))
    assert hits / DRAWS >= float(level) - _margin(float(level))
    assert hits / DRAWS <= float(level) + _margin(float(level))  # an interval, not a wall


def test_laplace_interval_covers_each_entry_of_a_vector() -> None:
    scale, level = Fraction(2), Fraction(99, 100)
    values = np.arange(DRAWS, dtype=np.float64) * 0.37
    e, t = laplace_grid(scale, values.size)
    h = float(half_width(NoiseNote("laplace", scale, values.size, e, t), level))
    noisy = np.asarray(laplace_release(values, scale, SeededSource(7)), dtype=np.float64)
    rate = float(np.mean(np.abs(noisy - values) <= h))
    assert rate >= 0.99 - _margin(0.99)


@pytest.mark.parametrize(("sigma", "entries"), [(Fraction(3, 2), DRAWS), (Fraction(40), DRAWS)])
def test_gaussian_interval_covers_each_entry(sigma: Fraction, entries: int) -> None:
    level = Fraction(95, 100)
    values = np.linspace(-50, 50, entries)
    e, units = gauss_grid(sigma, entries)
    h = float(half_width(NoiseNote("gauss", sigma, entries, e, units), level))
    assert h >= float(sigma) * 1.959963  # never narrower than the continuous Gaussian's
    noisy = np.asarray(gauss_release(values, sigma, SeededSource(11)), dtype=np.float64)
    rate = float(np.mean(np.abs(noisy - values) <= h))
    assert 0.95 - _margin(0.95) <= rate <= 0.95 + _margin(0.95)


def test_gaussian_interval_covers_a_scalar_over_many_seeds() -> None:
    sigma, level = Fraction(5), Fraction(8, 10)
    e, units = gauss_grid(sigma, 1)
    h = half_width(NoiseNote("gauss", sigma, 1, e, units), level)
    source = SeededSource(3)
    one = np.array([17.25])
    hits = sum(abs(Fraction(float(gauss_release(one, sigma, source)[0])) - Fraction(17.25)) <= h
               for _ in range(DRAWS))
    assert hits / DRAWS >= 0.8 - _margin(0.8)


def test_exponential_mechanism_utility_gap_holds() -> None:
    eps, level = Fraction(1, 2), Fraction(9, 10)
    scores = [0, 3, 5, 9, 10, 10, 2, 8, 1, 4, 6, 7]
    gap = half_width(NoiseNote("expmech", eps, len(scores)), level)
    assert gap == pytest.approx(2 / 0.5 * math.log(12 / 0.1), rel=1e-12)
    source = SeededSource(5)
    best = max(scores)
    hits = sum(scores[exponential_mechanism(scores, eps, source)] > best - gap for _ in range(DRAWS))
    assert hits / DRAWS >= 0.9 - _margin(0.9)


# ---------------------------------------------------------------- what `run` shows


PROGRAM = """\
type Person = { age : num, income : num, hours : num, zip : int, married : bool };

def noisy_count (db : bag Person) : fuzzy num = laplace[0.5] (size db);

def pair (db : bag Person) : fuzzy (num, num) = {
  sample n = laplace[0.25] (size db);
  sample m = noisy_count db;
  return (n, m)
};

def ratio (db : bag Person) : fuzzy { n : num, share : num, bumped : num } = {
  sample n = laplace[0.25] (size db);
  sample m = laplace[0.25] (size (filter (fun p -> p.married) db));
  let share : num = if n > 0 then m / n else 0;
  return { n = n, share = share, bumped = clip[0, 100] m }
};

def larger (db : bag Person) : fuzzy num = {
  sample a = laplace[0.5] (size db);
  sample b = laplace[0.5] (size (filter (fun p -> p.married) db));
  return (if a > b then a else b)
};

def picked (db : bag Person) : fuzzy num = {
  sample r = larger db;
  return r
};

def shadowed (db : bag Person) : fuzzy num = {
  sample n = laplace[0.5] (size db);
  let n = n + 1;
  return n
};

def g (db : bag Person) : fuzzy num = gauss[2] (size db);
"""

ROWS = [(44, 111012, 53.7, 10115, "false"), (31, 52000, 40.0, 10117, "true"), (67, 20000, 10.5, 10115, "true")]


@pytest.fixture()
def program(tmp_path: Path) -> Path:
    path = tmp_path / "acc.fz"
    path.write_text(PROGRAM, encoding="utf-8")
    return path


def _csv(tmp_path: Path, name: str, rows: list[tuple[object, ...]]) -> str:
    lines = ["age,income,hours,zip,married"] + [",".join(str(c) for c in r) for r in rows]
    path = tmp_path / name
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return str(path)


def _run_json(capsys: pytest.CaptureFixture[str], tmp_path: Path, program: Path, definition: str,
              data: str, *extra: str, ledger: str = "l.sqlite") -> dict[str, Any]:
    code = main(["run", str(program), definition, "--data", f"db={data}", "--budget", "20,1e-3",
                 "--ledger", str(tmp_path / ledger), "--dataset", "d", "--json", *extra])
    out = capsys.readouterr().out
    assert code == 0, out
    return json.loads(out)


def test_json_fields_of_a_scalar_laplace_release(capsys: pytest.CaptureFixture[str], tmp_path: Path,
                                                 program: Path) -> None:
    doc = _run_json(capsys, tmp_path, program, "noisy_count", _csv(tmp_path, "a.csv", ROWS))
    (acc,) = doc["accuracy"]
    assert acc["derived"] is True and acc["noise"] == "laplace" and acc["part"] is None
    assert acc["confidence"] == 0.95 and acc["epsilon"] == 0.5 and acc["entries"] == 1
    assert acc["continuous_half_width"] == pytest.approx(2 * math.log(20))
    assert acc["continuous_half_width"] < acc["half_width"] < acc["continuous_half_width"] * 1.005


def test_confidence_option_and_parts(capsys: pytest.CaptureFixture[str], tmp_path: Path, program: Path) -> None:
    doc = _run_json(capsys, tmp_path, program, "pair", _csv(tmp_path, "a.csv", ROWS), "--confidence", "0.5")
    first, second = doc["accuracy"]
    assert (first["part"], second["part"]) == ("1", "2")
    assert first["half_width"] == pytest.approx(4 * math.log(2), rel=0.005)  # scale 4, alpha 1/2
    assert second["half_width"] == pytest.approx(2 * math.log(2), rel=0.005)  # through `noisy_count`


@pytest.mark.parametrize("definition", ["larger", "picked", "shadowed"])
def test_no_interval_where_noise_was_transformed(capsys: pytest.CaptureFixture[str], tmp_path: Path,
                                                 program: Path, definition: str) -> None:
    doc = _run_json(capsys, tmp_path, program, definition, _csv(tmp_path, "a.csv", ROWS))
    assert [a["derived"] for a in doc["accuracy"]] == [False]
    assert doc["accuracy"][0]["note"] == "accuracy not derived for this expression"


def test_ratio_and_clamp_are_not_derived(capsys: pytest.CaptureFixture[str], tmp_path: Path,
                                         program: Path) -> None:
    doc = _run_json(capsys, tmp_path, program, "ratio", _csv(tmp_path, "a.csv", ROWS))
    derived = {a["part"]: a["derived"] for a in doc["accuracy"]}
    assert derived == {"n": True, "share": False, "bumped": False}


def test_text_output(capsys: pytest.CaptureFixture[str], tmp_path: Path, program: Path) -> None:
    code = main(["run", str(program), "g", "--data", f"db={_csv(tmp_path, 'a.csv', ROWS)}", "--budget", "20,1e-3",
                 "--ledger", str(tmp_path / "l.sqlite"), "--dataset", "d", "--rule", "zcdp"])
    out = capsys.readouterr().out
    assert code == 0
    line = next(line for line in out.splitlines() if line.startswith("accuracy:"))
    assert line.startswith("accuracy:  +/- 3.9") and "at 95% (discrete Gaussian, sigma 2)" in line


def test_bad_confidence_is_a_usage_error(capsys: pytest.CaptureFixture[str], tmp_path: Path,
                                         program: Path) -> None:
    for bad in ("1", "0", "95", "high"):
        code = main(["run", str(program), "g", "--data", f"db={_csv(tmp_path, 'a.csv', ROWS)}",
                     "--budget", "20,1e-3", "--ledger", str(tmp_path / "l.sqlite"), "--confidence", bad])
        capsys.readouterr()
        assert code == 2


@pytest.mark.parametrize("definition", ["noisy_count", "pair", "ratio", "g"])
def test_neighbouring_datasets_give_the_same_accuracy(capsys: pytest.CaptureFixture[str], tmp_path: Path,
                                                       program: Path, definition: str) -> None:
    one = _csv(tmp_path, "one.csv", ROWS)
    other = _csv(tmp_path, "other.csv", ROWS[:2])  # one row removed
    rule = ["--rule", "zcdp"] if definition == "g" else []
    a = _run_json(capsys, tmp_path, program, definition, one, *rule, ledger="one.sqlite")
    b = _run_json(capsys, tmp_path, program, definition, other, *rule, ledger="other.sqlite")
    assert a["released"] != b["released"]
    assert a["accuracy"] == b["accuracy"]


def test_python_api_release_carries_accuracy(tmp_path: Path) -> None:
    prog = fuzzpy.loads(PROGRAM)
    release = prog.run("pair", {"db": _csv(tmp_path, "a.csv", ROWS)}, ledger=tmp_path / "l.sqlite",
                       budget=20, datasets="d", confidence=0.8)
    first, second = release.accuracy
    assert first.noise == "laplace" and first.confidence == Fraction(4, 5)
    assert first.bound is not None and first.bound > 4 * math.log(5)
    assert release.to_json()["accuracy"][1]["part"] == "2"
    with pytest.raises(fuzzpy.FuzzError):
        prog.run("pair", {"db": _csv(tmp_path, "a.csv", ROWS)}, ledger=tmp_path / "l.sqlite",
                 budget=20, datasets="d", confidence=1.5)


@pytest.mark.parametrize("scale", [Fraction(1, 10), Fraction(10), Fraction(12345, 7), Fraction(2) ** 40])
@pytest.mark.parametrize("alpha", ["0.05", "0.001"])
def test_discrete_laplace_units_hold_in_50_digits_at_the_runtime_grid(scale: Fraction, alpha: str) -> None:
    """The closed form is solved in doubles at t ~ 2^32: checked again in
    50-digit decimals that the chosen k still covers, and that k - 2 does not."""
    from decimal import Decimal, localcontext

    _, t = laplace_grid(scale, 1)
    k = dlap_units(t, float(alpha))
    with localcontext() as ctx:
        ctx.prec = 50
        q = (Decimal(-1) / Decimal(t)).exp()

        def tail(j: int) -> Decimal:
            return 2 * (Decimal(-(j + 1)) / Decimal(t)).exp() / (1 + q)

        assert tail(k) <= Decimal(alpha) < tail(k - 2)


@pytest.mark.parametrize(("kind", "scale"), [
    ("smooth", Fraction(2 * 10**308)),     # smooth_median[1, .., 0, 1e308]: 2 (hi - lo) / eps
    ("laplace", Fraction(34 * 10**307)),   # ptr_quantile[0.5, .., 1.7e308, p]: b / eps
    ("gauss", Fraction(17 * 10**307)),     # gauss[1.7e308]
])
def test_a_scale_near_or_beyond_the_largest_double_states_an_infinite_interval(kind: str, scale: Fraction) -> None:
    # review s30d: such releases were charged, then failed (OverflowError) writing their accuracy
    from fuzzpy.release.accuracy import Accuracy
    from fuzzpy.runtime.accuracy import textbook_half_width

    if kind == "smooth":
        note = NoiseNote(kind, scale, 1, 1000)
    elif kind == "laplace":
        exponent, units = laplace_grid(scale, 1)
        note = NoiseNote(kind, scale, 1, exponent, units)
    else:
        exponent, units = gauss_grid(scale, 1)
        note = NoiseNote(kind, scale, 1, exponent, units)
    confidence = Fraction(19, 20)
    bound = half_width(note, confidence)
    assert bound >= scale  # ln 20 > 1 and Phi^-1(0.975) > 1 scales: never below the noise's own scale
    assert textbook_half_width(note, confidence) == math.inf
    shown = Accuracy("", kind, confidence, bound, scale, 1, textbook_half_width(note, confidence)).to_json()
    assert shown["half_width"] == "inf" and shown["continuous_half_width"] == "inf"
    json.dumps(shown, allow_nan=False)
