"""The local model (issue 28, item 1): randomized response, k-RR, `local`,
`shuffle`, checked against independent exact computations.

Every reported epsilon must be valid and, where the tight value is known,
within 1% of it: the exact privacy loss of a local release is computed here
by enumerating its outputs (the bag of reports is, up to order, the count of
each report value) on replace-one neighbours, with exact probabilities.
"""

from __future__ import annotations

import itertools
import json
import math
import subprocess
import sys
from collections import Counter
from fractions import Fraction
from pathlib import Path

import mpmath
import pytest

from fuzzpy.accounting.accountant import tightest
from fuzzpy.accounting.events import Laplace, LocalReports, RandomizedResponse, ShuffledReports
from fuzzpy.accounting.local import (
    debias_count,
    debias_histogram,
    replace_one_view,
    rr_exact_epsilon,
)
from fuzzpy.api.errors import Rejected
from fuzzpy.api.program import loads
from fuzzpy.runtime.local import krr, rr, shuffled
from fuzzpy.runtime.randomness import SeededSource

ROOT = Path(__file__).resolve().parent.parent
mpmath.mp.dps = 50

@pytest.fixture(autouse=True)
def _fifty_digits():  # noqa: ANN202 -- other modules set mpmath's precision at import
    with mpmath.workdps(50):
        yield


DEVICE = "type D = { on : bool, cat : int, x : num };\n"


def check(text: str, delta: float | None = None) -> dict[str, object]:
    report = loads(DEVICE + text, "t.fz").check(delta)
    return {d.name: d for d in report.definitions}  # type: ignore[attr-defined]


def privacy(text: str, name: str, delta: float | None = None) -> dict[str, object]:
    report = loads(DEVICE + text, "t.fz").check(delta)
    doc = next(d for d in report.to_json()["definitions"] if d["name"] == name)  # type: ignore[index]
    return doc["privacy"]["db"]  # type: ignore[index, no-any-return]


# ---------------------------------------------------------------- exact enumeration


def krr_matrix(eps: mpmath.mpf, k: int) -> list[list[mpmath.mpf]]:
    """P[report = j | value = i], written from the definition of k-RR (Wang et al. 2017)."""
    e = mpmath.e**eps
    return [[e / (e + k - 1) if i == j else 1 / (e + k - 1) for j in range(k)] for i in range(k)]


def bag_distribution(values: list[int], matrix: list[list[mpmath.mpf]]) -> dict[tuple[int, ...], mpmath.mpf]:
    """The distribution of the bag of reports (as the count of each value)."""
    k = len(matrix)
    out: dict[tuple[int, ...], mpmath.mpf] = {}
    for reports in itertools.product(range(k), repeat=len(values)):
        p = mpmath.mpf(1)
        for v, r in zip(values, reports, strict=True):
            p *= matrix[v][r]
        key = tuple(Counter(reports).get(j, 0) for j in range(k))
        out[key] = out.get(key, 0) + p
    return out


def exact_replace_one_epsilon(k: int, n: int, eps: mpmath.mpf) -> mpmath.mpf:
    """The largest log ratio of the bag's probabilities over every dataset of n
    values in 0..k-1 and every replacement of its first value."""
    matrix = krr_matrix(eps, k)
    worst = mpmath.mpf(0)
    for values in itertools.product(range(k), repeat=n):
        base = bag_distribution(list(values), matrix)
        for other in range(k):
            if other == values[0]:
                continue
            moved = bag_distribution([other, *values[1:]], matrix)
            worst = max(worst, max(mpmath.log(base[o] / moved[o]) for o in base))
    return worst


@pytest.mark.parametrize(("k", "n", "eps"), [(2, 1, "1"), (2, 3, "0.5"), (3, 2, "1"), (4, 2, "2")])
def test_local_release_epsilon_is_the_exact_replace_one_loss(k: int, n: int, eps: str) -> None:
    exact = exact_replace_one_epsilon(k, n, mpmath.mpf(eps))
    prim = f"rr[{eps}] r.on" if k == 2 else f"krr[{eps}, {k}] r.cat"
    figure = privacy(f"def f (db : bag D) : fuzzy (bag {'bool' if k == 2 else 'int'}) = local (fun r -> {prim}) db;", "f")
    reported = figure["epsilon"]
    assert figure["neighbours"] == "replace-one" and figure["local_epsilon"] == reported
    assert reported >= exact - mpmath.mpf(10) ** -40  # valid
    assert reported <= exact * 1.01  # tight (here: equal)


@pytest.mark.parametrize(("eps", "k"), [(Fraction(1), 2), (Fraction(1, 3), 2), (Fraction(5, 2), 7), (Fraction(9), 3)])
def test_rr_exact_epsilon_from_the_likelihood_ratios(eps: Fraction, k: int) -> None:
    # the likelihood ratio of k-RR, from the report probabilities: e^eps exactly
    matrix = krr_matrix(mpmath.mpf(eps.numerator) / eps.denominator, k)
    exact = max(mpmath.log(matrix[i][j] / matrix[i2][j]) for i in range(k) for i2 in range(k) for j in range(k))
    got = rr_exact_epsilon(eps, k)
    assert got >= exact - mpmath.mpf(10) ** -40 and got <= exact * 1.01
    assert tightest([RandomizedResponse(eps, k)], 0).epsilon == pytest.approx(float(eps), rel=1e-12)


def test_two_questions_compose_and_the_bound_is_attained() -> None:
    text = "def f (db : bag D) : fuzzy (bag (bool, bool)) = local (fun r -> { sample a = rr[1] r.on; sample b = rr[1] (r.x > 3); return (a, b) }) db;"
    figure = privacy(text, "f")
    assert figure["epsilon"] == 2 and figure["local_epsilon"] == 2
    # both bits flip between the two rows: the report (1, 1) is e^2 times likelier
    m = krr_matrix(mpmath.mpf(1), 2)
    assert mpmath.log((m[1][1] * m[1][1]) / (m[0][1] * m[0][1])) == pytest.approx(2, rel=1e-12)


def test_randomized_response_is_private_for_any_two_inputs_in_a_central_query() -> None:
    # `size db > 10` is infinitely sensitive; randomized response tolerates it
    figure = privacy("def f (db : bag D) : fuzzy bool = rr[0.5] (size db > 10);", "f")
    assert figure["epsilon"] == 0.5 and "neighbours" not in figure


def test_local_and_central_releases_in_one_definition_are_charged_for_replace_one() -> None:
    # under replace-one a filtered count moves by 0 or 1: the Laplace release costs
    # its eps once (group privacy over the two add/remove steps charged it twice)
    text = """def f (db : bag D) : fuzzy (bag bool, num) = {
      sample r = local (fun d -> rr[1] d.on) db;
      sample c = laplace[0.25] (size (filter (fun d -> d.on) db));
      return (r, c)
    };"""
    figure = privacy(text, "f")
    assert figure["epsilon"] == 1.25 and figure["neighbours"] == "replace-one"
    assert replace_one_view((Laplace(Fraction(1), Fraction(4)),)) == (Laplace(Fraction(1), Fraction(4)),)


@pytest.mark.parametrize(
    ("body", "code"),
    [
        ("laplace[1] d.x", "FZ301"),  # not private for any two rows
        ("gauss[1] d.x", "FZ301"),
        ("return d.on", "FZ301"),  # no randomisation at all
        ("rr[1] (size db > 3)", "FZ303"),  # the randomiser reads the whole database
    ],
)
def test_randomisers_that_are_not_local_are_refused(body: str, code: str) -> None:
    with pytest.raises(Rejected) as info:
        check(f"def f (db : bag D) : fuzzy (bag num) = local (fun d -> {body}) db;".replace("bag num", "bag bool" if "rr" in body or "return" in body else "bag num"))
    assert code in [d.code for d in info.value.diagnostics]


def test_shuffle_needs_at_least_two_reports_and_a_static_count() -> None:
    for n in ("1", "0", "2.5"):
        with pytest.raises(Rejected) as info:
            check(f"def f (db : bag D) : fuzzy (bag bool) = shuffle[{n}] (fun d -> rr[1] d.on) db;")
        assert "FZ202" in [d.code for d in info.value.diagnostics]


# ---------------------------------------------------------------- samplers


def test_rr_frequencies_match_e_eps_over_e_eps_plus_one() -> None:
    source = SeededSource(20261129)
    n = 20_000
    kept = sum(rr(True, Fraction(1), source) for _ in range(n))
    p = math.e / (math.e + 1)
    assert abs(kept - n * p) < 5 * math.sqrt(n * p * (1 - p))
    flipped = sum(rr(False, Fraction(1), source) for _ in range(n))
    assert abs(flipped - n * (1 - p)) < 5 * math.sqrt(n * p * (1 - p))


def test_krr_frequencies_chi_square() -> None:
    source = SeededSource(7)
    k, n, eps = 5, 20_000, Fraction(3, 2)
    counts = Counter(krr(2, k, eps, source) for _ in range(n))
    e = math.exp(1.5)
    expected = [n * (e if j == 2 else 1) / (e + k - 1) for j in range(k)]
    chi2 = sum((counts.get(j, 0) - expected[j]) ** 2 / expected[j] for j in range(k))
    assert chi2 < 23.0  # the 0.9999 quantile of chi-square with 4 degrees of freedom is 23.5


def test_shuffler_permutations_are_uniform() -> None:
    source = SeededSource(3)
    n = 24_000
    seen = Counter(tuple(shuffled([0, 1, 2], source)) for _ in range(n))
    assert len(seen) == 6
    assert all(abs(c - n / 6) < 5 * math.sqrt(n / 6) for c in seen.values())


def test_debiased_estimates_are_unbiased_in_expectation() -> None:
    # E[true reports] = t p + (n - t)(1 - p): the estimate returns t exactly there
    eps, n, t = Fraction(1), 1000, 300
    p = mpmath.e / (mpmath.e + 1)
    assert debias_count(t * p + (n - t) * (1 - p), n, eps) == pytest.approx(t, rel=1e-30)  # type: ignore[arg-type]
    e = mpmath.e**2
    true = [500, 300, 200]
    reported = [c * e / (e + 2) + (n - c) / (e + 2) for c in true]
    assert [float(x) for x in debias_histogram(reported, Fraction(2))] == pytest.approx(true, rel=1e-12)  # type: ignore[arg-type]


# ---------------------------------------------------------------- runs, ledger, examples


def _run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "fuzzpy", *args], capture_output=True, text=True, cwd=ROOT, timeout=300)


def _register(ledger: str, name: str, file: str, *options: str) -> None:
    """The owner registers the file with a row rule that drops no row: local
    reports need one (FZ556)."""
    done = _run("dataset", "register", name, file, "--ledger", ledger, *options)
    assert done.returncode == 0, done.stderr + done.stdout


def _releases(ledger: str) -> int:
    import sqlite3

    with sqlite3.connect(ledger) as connection:
        return int(connection.execute("SELECT count(*) FROM releases").fetchone()[0])


def test_telemetry_example_runs_and_estimates_the_shares(tmp_path: Path) -> None:
    ledger = str(tmp_path / "l.sqlite")
    _register(ledger, "tel", "examples/data/telemetry.csv", "--budget", "5,1e-5", "--missing", "refuse")
    done = _run("run", "examples/telemetry_survey.fz", "browser_counts", "--data", "db=tel",
                "--ledger", ledger, "--json")
    assert done.returncode == 0, done.stderr
    doc = json.loads(done.stdout)
    shares = [x / 12_000 for x in doc["released"]]
    assert shares == pytest.approx([0.45, 0.30, 0.15, 0.10], abs=0.05)
    # 1/10^6 charged, shown as the least double >= it (the double 1e-6 is below it)
    assert doc["charged"]["epsilon"] < 0.2 and doc["charged"]["exact"]["delta"] == "1/1000000"
    assert doc["charged"]["delta"] == math.nextafter(1e-6, 1)
    assert "replace-one" in doc["datasets"][0]["method"] if "method" in doc["datasets"][0] else True


def test_one_relation_per_dataset_local_reports_are_replace_one(tmp_path: Path) -> None:
    # unified with issue 28 item 3: a release of local reports is a replace-one
    # release. It fixes a new dataset's relation to replace-one; a central release
    # then follows that relation (charged its replace-one cost: 0 for the size of
    # the dataset, which replace-one neighbours share; it was 2, group privacy
    # over two steps, before counts were charged their own move); a dataset already for add/remove refuses local reports (FZ605,
    # formerly FZ603 "cannot be added"), with a hint naming --neighbours replace-one
    program = tmp_path / "p.fz"
    program.write_text(
        "type Device = { crashed : bool, browser : int, night : bool };\n"
        "def central (db : bag Device) : fuzzy num = laplace[1] (size db);\n"
        "def reports (db : bag Device) : fuzzy (bag bool) = local (fun d -> rr[1] d.crashed) db;\n",
        encoding="utf-8",
    )
    ledger = str(tmp_path / "l.sqlite")
    telemetry = "examples/data/telemetry.csv"
    _register(ledger, "tel", telemetry, "--budget", "5", "--missing", "refuse", "--neighbours", "replace-one")
    data = "db=tel"
    assert _run("run", str(program), "reports", "--data", data, "--ledger", ledger).returncode == 0
    central = _run("run", str(program), "central", "--data", data, "--ledger", ledger, "--json")
    assert central.returncode == 0, central.stderr
    doc = json.loads(central.stdout)
    assert doc["neighbours"] == "replace-one" and doc["charged"]["epsilon"] == 0.0
    asked_other = _run("run", str(program), "central", "--data", data, "--ledger", ledger,
                       "--neighbours", "add-remove-one")
    assert asked_other.returncode == 3 and "FZ605" in asked_other.stderr

    other = str(tmp_path / "other.sqlite")
    _register(other, "tel", telemetry, "--budget", "5", "--missing", "refuse")
    assert _run("run", str(program), "central", "--data", data, "--ledger", other).returncode == 0
    refused = _run("run", str(program), "reports", "--data", data, "--ledger", other)
    assert refused.returncode == 3 and "FZ605" in refused.stderr and "--neighbours replace-one" in refused.stderr
    third = str(tmp_path / "third.sqlite")
    _register(third, "tel", telemetry, "--budget", "5", "--missing", "refuse")
    forced = _run("run", str(program), "reports", "--data", data, "--ledger", third, "--neighbours", "add-remove-one")
    assert forced.returncode == 3 and "FZ605" in forced.stderr and "--neighbours replace-one" in forced.stderr


def test_shuffle_refuses_fewer_reports_than_it_was_charged_for(tmp_path: Path) -> None:
    data = tmp_path / "few.csv"
    data.write_text("on,cat,x\ntrue,1,0\nfalse,0,1\n", encoding="utf-8")
    program = tmp_path / "p.fz"
    program.write_text(DEVICE + "def f (db : bag D) : fuzzy (bag bool) = shuffle[3] (fun d -> rr[1] d.on) db;\n", encoding="utf-8")
    ledger = str(tmp_path / "l.sqlite")
    _register(ledger, "few", str(data), "--budget", "5,1e-5", "--missing", "refuse")
    done = _run("run", str(program), "f", "--data", "db=few", "--ledger", ledger)
    assert done.returncode != 0 and "FZ519" in done.stderr
    # regression (adversarial review B): refused before the charge (the number
    # of rows is public under replace-one, the relation the charge is for)
    assert _releases(ledger) == 0
    for engine in ("memory", "duckdb"):
        again = _run("run", str(program), "f", "--data", "db=few", "--ledger", ledger, "--engine", engine)
        assert "FZ519" in again.stderr and _releases(ledger) == 0


@pytest.mark.parametrize("release", ["local (fun d -> rr[1] d.on) db", "shuffle[2] (fun d -> rr[1] d.on) db"])
def test_local_reports_refuse_a_row_rule_that_drops_rows_before_any_charge(tmp_path: Path, release: str) -> None:
    # regression (adversarial review B, e0.csv / e1.csv): with the default
    # `drop` rule a neighbour whose row reads `maybe` lost its report, so the
    # released number of reports told the two apart. Refused from the public
    # rule alone: the file with the bad cell and the one without end alike
    program = tmp_path / "p.fz"
    program.write_text(DEVICE + f"def f (db : bag D) : fuzzy (bag bool) = {release};\n", encoding="utf-8")
    endings = []
    for i, bad in enumerate(("false", "maybe")):
        data = tmp_path / f"e{i}.csv"
        data.write_text(f"on,cat,x\ntrue,1,0\nfalse,0,1\n{bad},2,2\n", encoding="utf-8")
        ledger = str(tmp_path / f"l{i}.sqlite")
        _register(ledger, "e", str(data), "--budget", "5,1e-5", "--type", "on=bool")
        done = _run("run", str(program), "f", "--data", "db=e", "--ledger", ledger)
        assert "FZ556" in done.stderr and _releases(ledger) == 0
        endings.append((done.returncode, done.stderr.replace(str(data), "FILE")))
        unregistered = _run("run", str(program), "f", "--data", f"db={data}", "--ledger", str(tmp_path / f"u{i}.sqlite"),
                            "--budget", "5,1e-5")
        # a first run types the file from its cells (docs/semantics.md, "the one typing"): `maybe`
        # makes `on` text, refused as a bool (FZ542); either way nothing is released
        assert unregistered.returncode != 0 and ("FZ556" in unregistered.stderr or "FZ542" in unregistered.stderr)
        assert _releases(str(tmp_path / f"u{i}.sqlite")) == 0
    assert endings[0] == endings[1]


def test_shuffled_events_are_approximate_with_a_delta_and_pure_without() -> None:
    events = (ShuffledReports(Fraction(2), 10_000),)
    assert tightest(events, 0).epsilon == 2.0  # eps0-LDP is eps0-DP for replace-one neighbours
    assert tightest(events, 1e-6).epsilon < 0.2
    assert 1.99 < tightest((LocalReports(Fraction(2)),), 1e-6).epsilon <= 2.0  # randomized response at a delta


@pytest.mark.parametrize(
    "release",
    [
        "local (fun r -> rr[1] r.on) (filter (fun r -> r.x > 1) db)",  # a filter: one row adds a report
        "{ let (a, b) = split (fun r -> r.on) db; local (fun r -> rr[1] r.on) a }",
        "inner (filter (fun r -> r.x > 1) db)",  # through a call
        "subsample[0.5] (fun b -> local (fun r -> rr[1] r.on) b) db",  # a Poisson sample's size moves
        "local (fun r -> rr[1] r.on) (map (fun r -> r) (filter (fun r -> r.on) db))",
    ],
)
def test_local_reports_of_a_bag_whose_size_one_row_moves_are_refused(release: str) -> None:
    # regression (adversarial review of issue 28): these were reported 1-DP for
    # replace-one neighbours, but the number of reports released gives away the
    # filtered count exactly
    inner = "def inner (b : bag D) : fuzzy (bag bool) = local (fun r -> rr[1] r.on) b;\n"
    with pytest.raises(Rejected) as info:
        check(inner + f"def f (db : bag D) : fuzzy (bag bool) = {release};")
    assert "FZ301" in [d.code for d in info.value.diagnostics]


def test_local_reports_of_mapped_rows_are_accepted() -> None:
    figure = privacy("def f (db : bag D) : fuzzy (bag bool) = local (fun r -> rr[1] r.on) (map (fun r -> { on = not r.on, cat = r.cat, x = r.x }) db);", "f")
    assert figure["epsilon"] == 1


@pytest.mark.parametrize(
    "body",
    [
        # the reviewer's forms: the bag reaches `local` / `shuffle` through a lambda's parameter
        "{ sample r = (fun b -> local (fun r -> rr[1] r.on) b) db; return (size r) }",
        "{ sample r = (fun b -> local (fun r -> rr[1] r.on) b) (filter (fun e -> e.x > 0) db); return (size r) }",
        "{ let g = fun (b : bag D) -> local (fun r -> rr[1] r.on) b; sample r = g (filter (fun e -> e.on) db); return (size r) }",
        "{ sample r = app (fun (b : bag D) -> local (fun r -> rr[1] r.on) b) (filter (fun e -> e.on) db); return (size r) }",
        "{ sample r = (fun b -> shuffle[100] (fun r -> rr[1] r.on) b) db; return (size r) }",
        "{ sample r = (fun c -> local (fun r -> rr[1] r.on) (map (fun e -> e) c)) db; return (size r) }",
        "{ let db = filter (fun e -> e.on) db; sample r = local (fun r -> rr[1] r.on) db; return (size r) }",
    ],
)
def test_local_reports_through_a_lambda_or_let_are_refused(body: str) -> None:
    # regression (second adversarial review, issue 28): a lambda's cost in its
    # parameter became a plain sensitivity, so these were accepted as 1-DP for
    # add/remove neighbours while releasing the (filtered) row count exactly
    app = "def app (h : bag D -o fuzzy (bag bool)) (b : bag D) : fuzzy (bag bool) = h b;\n"
    with pytest.raises(Rejected) as info:
        check(app + f"def f (db : bag D) : fuzzy num = {body};")
    assert "FZ301" in [d.code for d in info.value.diagnostics]


def test_local_reports_released_by_a_function_value_are_refused() -> None:
    # a function's type keeps a pure epsilon per variable: the reports were
    # charged as an add/remove release, their number public (third review, F4)
    for body in ("(fun t -> local (fun r -> rr[1] r.on) db) 0",
                 "{ sample r = (fun (t : num) -> shuffle[2] (fun r -> rr[1] r.on) db) 0; return r }",
                 "(fun (x : bag D) -> local (fun r -> rr[1] r.on) db) db"):
        with pytest.raises(Rejected) as info:
            check(f"def f (db : bag D) : fuzzy (bag bool) = {body};")
        assert "FZ301" in [d.code for d in info.value.diagnostics], body


def test_a_definition_passing_its_own_database_keeps_the_reports_replace_one() -> None:
    # third review, F5: `def once (db) = rep db` was refused although the bag is the same
    rep = "def rep (b : bag D) : fuzzy (bag bool) = local (fun r -> rr[1] r.on) b;\n"
    figure = privacy(rep + "def once (db : bag D) : fuzzy (bag bool) = rep db;", "once")
    assert figure["epsilon"] == 1 and figure["neighbours"] == "replace-one" and figure["local_epsilon"] == 1
    for other in ("rep (filter (fun r -> r.on) db)", "{ let b = filter (fun r -> r.on) db; rep b }",
                  "rep (map (fun r -> r) db)"):
        with pytest.raises(Rejected) as info:
            check(rep + f"def f (db : bag D) : fuzzy (bag bool) = {other};")
        assert "FZ301" in [d.code for d in info.value.diagnostics], other


def test_a_definition_over_an_epsilon_parameter_states_the_local_guarantee_as_a_call_does() -> None:
    """Review s30c (loc2.fz): `laplace[eps]` beside `local (fun x -> rr[1] x)`
    printed "(eps + 1)-DP in db for all eps > 0" under the add/remove footer,
    while each call's line (and the same definition without a parameter) says
    "(replace-one; 1-LDP per person)". The expression is the add/remove sum;
    it is not stated: the relation and the local guarantee are."""
    from fuzzpy.checker import check_program
    from fuzzpy.checker.report import json_definitions, text_report
    from fuzzpy.frontend.parser import parse_program

    prog = check_program(parse_program(
        "def lr2 (eps : num) (db : bag bool) : fuzzy (bag bool) =\n"
        "  { sample a = laplace[eps] (size db); local (fun x -> rr[1] x) db };\n"
        "def at1 (db : bag bool) : fuzzy (bag bool) = lr2 1 db;"))
    (line,) = [row for row in text_report(prog, None).splitlines() if row.startswith("lr2 ")]
    assert "(replace-one; 1-LDP per person) in db" in line and "eps + 1" not in line
    (doc,) = [d for d in json_definitions(prog, None) if d["name"] == "lr2"]
    assert doc["symbolic_privacy"] == {"db": None} and doc["local_reports"] == {"db": 1.0}
