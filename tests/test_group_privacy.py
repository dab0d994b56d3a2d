"""Group privacy (issue 28, item 5): `check --group K`, verified mechanisms
called with a k-sensitive argument, and the ledger's "at most K rows per
person" policy, against independent computations.

* Laplace on a k-fold neighbour is Laplace on a query k times as sensitive:
  exactly k eps (the density ratio e^{k eps} is attained).
* Gaussian: mu = k s / sigma; (eps, delta) from the analytic Gaussian curve
  delta(eps) = Phi(-eps/mu + mu/2) - e^eps Phi(-eps/mu - mu/2) (Balle & Wang
  2018), evaluated here in mpmath: the figure must be valid and within 1%.
* A verified (eps, delta) claim: (k eps, k e^{(k-1) eps} delta) (Dwork & Roth
  2014, Thm 2.2).
"""

from __future__ import annotations

import json
import subprocess
import sys
from fractions import Fraction
from pathlib import Path

import mpmath
import pytest

from fuzzpy.accounting.accountant import tightest
from fuzzpy.accounting.events import Group, Verified
from fuzzpy.api.program import loads
from fuzzpy.checker.mechanism_calls import group_steps
from fuzzpy.checker.static_eval import Bound
from fuzzpy.language import syntax as S
from fuzzpy.language.figures import double_up
from fuzzpy.language.sensitivity import INF, Sens

ROOT = Path(__file__).resolve().parent.parent
ROW = "type R = { a : num, k : int };\n"


def _fuzzpy(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "fuzzpy", *args], capture_output=True, text=True, cwd=ROOT, timeout=600)


def _privacy(text: str, group: int, delta: float | None = None) -> dict[str, object]:
    report = loads(ROW + text, "t.fz").check(delta, group=group)
    (doc,) = [d for d in report.to_json()["definitions"] if d["name"] == "f"]  # type: ignore[index]
    return doc["privacy"]["db"]  # type: ignore[index, no-any-return]


@pytest.mark.parametrize("k", [1, 2, 3, 7])
def test_laplace_groups_cost_exactly_k_eps(k: int) -> None:
    figure = _privacy("def f (db : bag R) : fuzzy num = laplace[0.3] (size db);", k)
    # exactly k * 3/10, shown as the least double >= it (the JSON floats of a cost round up)
    assert figure["epsilon"] == double_up(Fraction(3, 10) * k)


def _gaussian_delta(mu: mpmath.mpf, eps: mpmath.mpf) -> mpmath.mpf:
    phi = lambda x: mpmath.ncdf(x)  # noqa: E731
    return phi(-eps / mu + mu / 2) - mpmath.e**eps * phi(-eps / mu - mu / 2)


@pytest.mark.parametrize("k", [2, 4])
def test_gaussian_groups_follow_the_analytic_curve_at_k_mu(k: int) -> None:
    mpmath.mp.dps = 40
    figure = _privacy("def f (db : bag R) : fuzzy num = gauss[4] (size db);", k, 1e-6)
    eps = mpmath.mpf(figure["epsilon"])  # type: ignore[arg-type]
    mu = mpmath.mpf(k) / 4  # sensitivity 1, sigma 4: rho = 1/32, times k^2
    assert _gaussian_delta(mu, eps) <= mpmath.mpf("1e-6")  # valid
    assert _gaussian_delta(mu, eps / mpmath.mpf("1.01")) > mpmath.mpf("1e-6")  # within 1% of the tight value


def test_an_approximate_verified_claim_grows_by_dwork_roth() -> None:
    eps, delta, k = Fraction(1, 2), Fraction(1, 10**8), 3
    grown = float(k * mpmath.e ** ((k - 1) * mpmath.mpf(0.5)) * mpmath.mpf(delta))
    g = tightest([Group(Fraction(k), (Verified("m", eps, delta),))], 1e-6)
    assert grown < 1e-6 and g.epsilon <= 1.5 + 1e-12  # (k eps, k e^{(k-1) eps} delta) fits delta = 1e-6


SVT = """
mechanism above (q : vec[inf] num, t : num, eps : num) : int
  requires eps > 0
  privacy eps
{
  var tt = t + lap(2 / eps);
  var i = 0;
  var out = -1;
  while (i < len(q) && out == -1) {
    var eta = lap(4 / eps);
    if (q[i] + eta >= tt) { out = i; }
    i = i + 1;
  }
  return out;
}
"""


@pytest.mark.parametrize(("scale", "steps"), [("1", 1), ("2", 2), ("2.5", 3), ("0.5", 1)])
def test_a_verified_mechanism_on_a_k_sensitive_argument_costs_its_group_bound(scale: str, steps: int) -> None:
    query = f"({scale} * tabulate [1, 2, 3] (fun t -> size (filter (fun r -> r.a > t) db)))"
    figure = _privacy(SVT + f"def f (db : bag R) : fuzzy int = above {query} 100 0.5;", 1)
    assert Fraction(str(figure["epsilon"])) == Fraction(1, 2) * steps
    grouped = _privacy(SVT + f"def f (db : bag R) : fuzzy int = above {query} 100 0.5;", 2)
    assert Fraction(str(grouped["epsilon"])) == Fraction(1, 2) * steps * 2


def _param(ty: S.TypeExpr) -> S.Param:
    return S.Param("x", ty)  # type: ignore[call-arg]


@pytest.mark.parametrize(
    ("ty", "bounds", "sens", "steps"),
    [
        (S.TyName("num"), [Bound(Fraction(1))], Fraction(3), 3),
        (S.TyName("num"), [Bound(Fraction(1), strict=True)], Fraction(1), 2),
        (S.TyName("num"), [Bound(Fraction(2))], Fraction(1, 2), 1),
        (S.TyName("int"), [Bound(Fraction(3, 2))], Fraction(5, 2), 2),  # integer moves of 1: 2 in 2 steps
        (S.TyName("int"), [Bound(Fraction(1), strict=True)], Fraction(1), None),  # no integer step below 1
        (S.TyName("bool"), [Bound(Fraction(1))], Fraction(2), None),
        (S.TyVec("2", S.TyName("int")), [Bound(Fraction(1))], Fraction(2), None),
        (S.TyVec("1", S.TyName("num")), [Bound(Fraction(1))], Fraction(5, 2), 3),
    ],
)
def test_group_steps_are_the_shortest_chain_within_the_proof(ty: S.TypeExpr, bounds: list[Bound], sens: Fraction, steps: int | None) -> None:
    assert group_steps(_param(ty), bounds, Sens.of(sens)) == steps


def test_an_infinitely_sensitive_argument_has_no_chain() -> None:
    assert group_steps(_param(S.TyName("num")), [Bound(Fraction(1))], INF) is None


def test_check_group_cli_matches_its_golden_file() -> None:
    done = _fuzzpy("check", "examples/per_user_visits.fz", "--group", "3")
    assert done.returncode == 0, done.stderr
    assert done.stdout == (ROOT / "examples" / "per_user_visits.group3.expected").read_text(encoding="utf-8")
    doc = json.loads(_fuzzpy("check", "examples/per_user_visits.fz", "--group", "3", "--json").stdout)
    assert doc["group"] == 3
    for bad in ("0", "-2", "x"):
        assert _fuzzpy("check", "examples/noisy_count.fz", "--group", bad).returncode == 2


def test_the_rows_per_person_policy_charges_the_group_cost(tmp_path: Path) -> None:
    ledger = str(tmp_path / "l.sqlite")
    program = tmp_path / "p.fz"
    program.write_text(
        "type Visit = { patient : int, age : num, ward : int, cost : num, stay : num };\n"
        "def n (db : bag Visit) : fuzzy num = laplace[0.5] (size db);\n",
        encoding="utf-8",
    )
    reg = _fuzzpy("dataset", "register", "visits", "examples/data/visits.csv", "--budget", "4",
                  "--rows-per-person", "3", "--ledger", ledger)
    assert reg.returncode == 0, reg.stderr
    done = _fuzzpy("run", str(program), "n", "--data", "db=visits", "--ledger", ledger, "--json")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["charged"]["epsilon"] == 1.5  # 3 x 0.5
    # the policy cannot change once a release was charged under it
    from fuzzpy.language.diagnostics import FuzzError
    from fuzzpy.ledger.book import Ledger

    with Ledger(Path(ledger)) as book:
        assert book.rows_per_person("visits") == 3
        with pytest.raises(FuzzError) as info:
            book.set_rows_per_person("visits", 5)
        assert info.value.diagnostics[0].code == "FZ714"
        book.set_rows_per_person("visits", 3)  # the same value: nothing changes
    again = _fuzzpy("run", str(program), "n", "--data", "db=visits", "--ledger", ledger)
    refused = _fuzzpy("run", str(program), "n", "--data", "db=visits", "--ledger", ledger)
    assert again.returncode == 0 and refused.returncode == 3  # 1.5 + 1.5 + 1.5 > 4


def test_a_huge_group_is_an_infinite_cost_in_words_not_an_accountant_failure(tmp_path: Path) -> None:
    # regression (adversarial review B): `check --group 1000000` printed "cost
    # unavailable (the accountant failed: cannot convert Infinity to integer ratio)"
    from fuzzpy.accounting.events import Gaussian, Subsample

    events = (Group(Fraction(1_000_000), (Subsample(Fraction(1, 10), (Gaussian(Fraction(1), Fraction(1)),)),)),)
    assert tightest(events, 1e-6).epsilon == float("inf")
    program = tmp_path / "g.fz"
    program.write_text(
        "type R = { x : num };\n"
        "def sg (db : bag R) : fuzzy num = subsample[0.1] (fun s -> gauss[1] (sum[0, 1] (map (fun r -> r.x) s))) db;\n",
        encoding="utf-8",
    )
    done = _fuzzpy("check", "--group", "1000000", str(program))
    assert "infinite cost" in done.stdout and "failed" not in done.stdout + done.stderr
    assert "Traceback" not in done.stderr
