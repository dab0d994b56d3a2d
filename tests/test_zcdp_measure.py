"""`privacy zcdp[delta]`: a definition's cost stated and charged in rho-zCDP
(Bun & Steinke, TCC 2016; Duet's `ZCDP[delta]{...}`, Near et al. OOPSLA
2019). Gaussian noise of scale sigma on an s-sensitive query is
s^2 / (2 sigma^2)-zCDP (BS16 Prop. 1.6), the discrete Gaussian on an integer
ceil(s)^2 / (2 sigma^2) (CKS 2020), pure eps-DP at most eps^2 / 2 (BS16
Prop. 1.4; fuzzpy charges the tight eps tanh(eps/2), Laplace eps + e^-eps - 1),
and rho adds under composition (BS16 Lemma 2.3). The (eps, delta) figure is
checked here against the conversion computed independently with mpmath."""

from __future__ import annotations

import json
import math
from fractions import Fraction
from pathlib import Path

import mpmath
import pytest

from fuzzpy.checker import check_program
from fuzzpy.checker.report import figures_for, json_definitions, text_report, zcdp_figure
from fuzzpy.cli import main
from fuzzpy.frontend.parser import parse_program
from fuzzpy.language.diagnostics import FuzzError
from fuzzpy.language.figures import double_up


def checked(text: str):
    return check_program(parse_program(text, "<zcdp>"))


def figure(text: str, name: str, db: str = "db"):
    return figures_for(checked(text).definitions[name], None)[db]


def diagnostics(text: str):
    with pytest.raises(FuzzError) as info:
        checked(text)
    return info.value.diagnostics


def cks_delta(rho: float, eps: float) -> mpmath.mpf:
    """CKS 2020 Cor. 13 at its best order (any order is a valid delta), found
    by a coarse scan refined by mpmath's root finder on the derivative of its
    log, 2 a rho - rho - eps + log(1 - 1/a) (not fuzzpy's search)."""
    with mpmath.workdps(40):
        def at(a: mpmath.mpf) -> mpmath.mpf:
            return mpmath.exp((a - 1) * (a * rho - eps)) / (a - 1) * (1 - 1 / a) ** a

        start = min((1 + mpmath.mpf(k) / 8 for k in range(1, 400)), key=at)
        best = mpmath.findroot(lambda a: 2 * a * rho - rho - eps + mpmath.log(1 - 1 / a), start)
        return min(at(start), at(best))


def test_gaussian_on_a_sum_of_sensitivity_three() -> None:
    found = figure("def s (db : bag num) : fuzzy num privacy zcdp[1e-5] = gauss[2] (sum[0, 3] db);", "s")
    assert found.rho == Fraction(9, 8) and found.delta == Fraction(1, 10**5)
    assert cks_delta(9 / 8, float(found.epsilon)) <= 1e-5  # the printed epsilon really holds
    assert float(found.epsilon) <= 9 / 8 + 2 * (9 / 8 * mpmath.log(1e5)) ** 0.5  # never above BS16 Prop. 1.3


def test_rho_adds_over_rounds_and_integer_noise() -> None:
    text = ("def r (db : bag num) : fuzzy int privacy zcdp[1e-6] =\n"
            "  loop[7] 0 (fun k -> dgauss[5] (size (filter (fun x -> x > 1) db)));")
    assert figure(text, "r").rho == Fraction(7, 50)


def test_a_pure_release_is_at_most_half_its_epsilon_squared() -> None:
    rho = figure("def p (db : bag num) : fuzzy num privacy zcdp[1e-6] = laplace[0.4] (size db);", "p").rho
    assert rho <= Fraction(2, 25)  # eps^2 / 2
    assert abs(float(rho) - float(0.4 + mpmath.exp(-0.4) - 1)) < 1e-12  # the Laplace mechanism's exact value


def test_report_text_and_json() -> None:
    prog = checked("def two (db : bag num) : fuzzy (num, num) privacy zcdp[1e-6] = "
                   "{ sample a = gauss[1] (size db); sample b = gauss[1] (size db); return (a, b) };")
    assert "1-zCDP, so (7.76622, 1e-06)-DP" in text_report(prog, None)
    # both figures: the accountant proves two gauss[1] tighter at 1e-6 than the conversion (review s29e L1)
    assert "its events are (7.28609, 1e-06)-DP, what a basic budget is charged in db" in text_report(prog, None)
    privacy = json_definitions(prog, None)[0]["privacy"]["db"]
    # delta 1/10^6 exactly, as the least double >= it (the double 1e-6 is below 1/10^6)
    assert privacy["measure"] == "zcdp" and privacy["rho"] == 1 and privacy["delta"] == double_up(Fraction(1, 10**6))


def test_the_declared_delta_is_used_whatever_check_is_asked() -> None:
    d = checked("def g (db : bag num) : fuzzy num privacy zcdp[0.001] = gauss[3] (size db);").definitions["g"]
    assert figures_for(d, 1e-9)["db"].delta == Fraction(1, 1000)


def test_a_release_without_a_zcdp_bound_is_refused_where_it_is_written() -> None:
    found = diagnostics("def m (db : bag num) : fuzzy (num + unit) privacy zcdp[1e-6] =\n"
                        "  { sample g = gauss[9] (size db); ptr_median[0.5, 0.000001, 4] db };")
    assert [d.code for d in found] == ["FZ319"]
    assert (found[0].span.line, found[0].span.col) == (2, 36)  # at `ptr_median`, not at the definition
    approximate = ("mechanism top (q : vec[inf] num, eps : num) : int requires eps > 0 privacy (eps, 1e-8) "
                   "{ return 0; }\n"
                   "def t (db : bag num) : fuzzy int privacy zcdp[1e-6] = top (tabulate [1] (fun c -> size db)) 1;")
    (refused,) = diagnostics(approximate)
    assert refused.code == "FZ319" and refused.span.line == 2
    through = diagnostics("def med (db : bag num) : fuzzy (num + unit) = ptr_median[0.5, 0.000001, 4] db;\n"
                          "def m (db : bag num) : fuzzy (num + unit) privacy zcdp[1e-6] =\n"
                          "  { sample g = gauss[9] (size db); med db };")
    assert [(d.code, d.span.line, d.span.col) for d in through] == [("FZ319", 3, 36)]  # at the call of `med`


def test_where_the_measure_does_not_apply() -> None:
    assert [d.code for d in diagnostics("def c (db : bag num) : num privacy zcdp[1e-6] = size db;")] == ["FZ317"]
    assert [d.code for d in diagnostics(
        "def c (db : bag num) : fuzzy num privacy zcdp[1] = gauss[1] (size db);")] == ["FZ317"]
    assert [d.code for d in diagnostics(
        "def c (s : num) (db : bag num) : fuzzy num privacy zcdp[1e-6] = gauss[s] (size db);")] == ["FZ317"]


def test_zcdp_is_a_name_elsewhere() -> None:
    prog = checked("def zcdp (x : num) : num = x;\ndef f (db : bag num) : fuzzy num = laplace[1] (zcdp (size db));")
    assert figures_for(prog.definitions["f"], None)["db"].rho is None


PROGRAM = "def g (db : bag num) : fuzzy num privacy zcdp[1e-6] = gauss[3] (sum[0, 2] db);\n"


@pytest.fixture
def files(tmp_path: Path) -> tuple[Path, Path]:
    program = tmp_path / "g.fz"
    program.write_text(PROGRAM)
    data = tmp_path / "d.csv"
    data.write_text("v\n1\n2\n")
    return program, data


def _run(files: tuple[Path, Path], ledger: Path, *extra: str) -> int:
    program, data = files
    return main(["run", str(program), "g", "--data", f"db={data}", "--ledger", str(ledger), "--json", *extra])


def test_run_charges_what_check_reports(files: tuple[Path, Path], tmp_path: Path,
                                        capsys: pytest.CaptureFixture[str]) -> None:
    reported = figures_for(checked(PROGRAM).definitions["g"], None)["db"]
    assert _run(files, tmp_path / "basic.sqlite", "--budget", "5,1e-5") == 0
    charged = json.loads(capsys.readouterr().out)["charged"]
    # the basic rule charges the better of the conversion and what the accountant proves (check shows both)
    expected = reported.epsilon if reported.proved is None else reported.proved[0]
    assert charged["delta"] == double_up(Fraction(1, 10**6)) and Fraction(charged["epsilon"]) >= Fraction(expected)
    assert charged["epsilon"] == pytest.approx(float(expected), rel=1e-12)
    # under the zcdp rule the filter is charged the rho itself: 4 / 18
    assert _run(files, tmp_path / "z.sqlite", "--budget", "5,1e-5", "--rule", "zcdp") == 0
    capsys.readouterr()
    from fuzzpy.ledger.book import Ledger

    with Ledger(tmp_path / "z.sqlite") as ledger:
        (entry,) = ledger.history("d")
    assert entry.cost.spend.rho == Fraction(2, 9)


def test_run_refuses_another_delta_and_a_pure_budget(files: tuple[Path, Path], tmp_path: Path,
                                                     capsys: pytest.CaptureFixture[str]) -> None:
    assert _run(files, tmp_path / "a.sqlite", "--budget", "5,1e-5", "--delta", "1e-7") == 2
    refusal = "".join(capsys.readouterr())  # --json: the diagnostic is in the document
    assert "zcdp[1e-06]" in refusal and "`check --delta 1e-7` shows its guarantee there" in refusal
    assert _run(files, tmp_path / "b.sqlite", "--budget", "5") == 3
    capsys.readouterr()


def test_audit_recomputes_a_charge_in_its_declared_measure(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # 200 pure releases: 10-DP by basic composition, but 0.245885-zCDP, so (3.50985, 1e-6)-DP; the audit
    # once recomputed the pure 10 and called the zCDP charge UNDERCHARGED
    program = tmp_path / "many.fz"
    program.write_text("def many (db : bag num) : fuzzy num privacy zcdp[1e-6] =\n"
                       "  loop[200] 0 (fun c -> laplace[0.05] (size db));\n")
    data = tmp_path / "v.csv"
    data.write_text("v\n1\n")
    ledger = tmp_path / "l.sqlite"
    assert main(["run", str(program), "many", "--data", f"db={data}", "--budget", "20,1e-5",
                 "--ledger", str(ledger)]) == 0
    capsys.readouterr()
    assert main(["ledger", "--audit", "--ledger", str(ledger), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["ok"] is True


def test_the_python_api_gives_rho() -> None:
    import fuzzpy

    report = fuzzpy.loads("def g (db : bag num) : fuzzy num privacy zcdp[1e-6] = gauss[5] (size db);").check()
    cost = report["g"].costs["db"]
    assert cost.rho == Fraction(1, 50) and cost.to_json()["measure"] == "zcdp" and "0.02-zCDP" in cost.text


# ---------------------------------------------------------------- --delta D beside a declared delta
# The policy (docs/language-notes.md, "zCDP as a definition's measure"): the declared delta wins -- the
# signature's figure and `run`'s charge -- and a --delta D that differs is never ignored silently: check,
# its JSON and the API show the guarantee at D beside it (the figure `budget --delta D` prints on the
# definition's line), `run --delta D` refuses (FZ703).

TWO_GAUSS = ("def two (people : bag num) : fuzzy (num, num) privacy zcdp[1e-6] = {\n"
             "  sample a = gauss[4] (size people);\n  sample b = gauss[8] (sum[0, 1] people);\n  return (a, b)\n};\n")


def test_another_delta_is_shown_beside_the_declared_figure_never_in_its_place() -> None:
    d = checked(TWO_GAUSS).definitions["two"]
    declared = figures_for(d, None)["people"]
    asked = figures_for(d, 1e-9)["people"]
    assert (asked.epsilon, asked.delta, asked.rho) == (declared.epsilon, declared.delta, declared.rho)
    assert declared.at_delta is None and figures_for(d, 1e-6)["people"].at_delta is None  # the same delta: nothing more
    eps, delta = asked.at_delta
    assert float(delta) == 1e-9 and Fraction(eps) > Fraction(declared.epsilon)  # a smaller delta costs more
    # the smaller of two valid figures at 1e-9: rho's conversion there, and the analytic Gaussian
    # (Balle & Wang 2018) of the two releases, which is the smaller here
    at_nine = zcdp_figure(d.privacy["people"], Fraction(1, 10**9), "people")
    assert cks_delta(float(declared.rho), float(at_nine.epsilon)) <= 1e-9
    assert eps == at_nine.proved[0] < at_nine.epsilon
    assert "at the --delta asked for: (" in asked.text() and "1e-09)-DP (not charged" in asked.text()


def test_check_json_budget_and_the_api_agree_on_the_figure_at_another_delta(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    import fuzzpy

    program = tmp_path / "two.fz"
    program.write_text(TWO_GAUSS)
    assert main(["check", "--json", "--delta", "1e-9", str(program)]) == 0
    (entry,) = json.loads(capsys.readouterr().out)["definitions"]
    privacy = entry["privacy"]["people"]
    # JSON floats of a cost are the least double at or above the exact figure
    assert privacy["delta"] == math.nextafter(1e-06, 1) and privacy["at_delta"]["delta"] >= 1e-09
    assert main(["budget", str(program), "two", "--delta", "1e-9"]) == 0
    budget_line = capsys.readouterr().out.splitlines()[0]
    assert f"{privacy['at_delta']['epsilon']:.6g}"[:5] in budget_line and "1e-09" in budget_line
    cost = fuzzpy.loads(TWO_GAUSS, "two.fz").check(delta=1e-9)["two"].costs["people"]
    assert cost.delta == Fraction(1, 10**6) and cost.at_delta is not None
    assert float(cost.at_delta[0]) == pytest.approx(privacy["at_delta"]["epsilon"])
    assert cost.to_json()["at_delta"]["delta"] == pytest.approx(1e-09, rel=1e-15)
