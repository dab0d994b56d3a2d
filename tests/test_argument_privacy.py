"""Approximate DP in an argument that is not a bag (issue 27, item 2).

Duet (Near et al., OOPSLA 2019) types `x : R@<eps, delta>` for Gaussian noise
on a number; DiffMu's tutorial does the same for an `Integer @ (eps, delta)`.
fuzzpy tracked the Gaussian event in the argument (a caller passing data was
charged) but reported the argument as `[inf]`, which reads as "not private".
Now such an argument is reported as a bag is: the accountant's tightest
(eps, delta) at the report's delta, checked here against the analytic
Gaussian mechanism (Balle & Wang, ICML 2018, Thm 8) computed independently.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import mpmath
import pytest

import fuzzpy
from fuzzpy.checker import check_program
from fuzzpy.checker.report import DEFAULT_DELTA, figures_for, json_definitions, text_report
from fuzzpy.frontend.parser import parse_program

ROOT = Path(__file__).resolve().parent.parent


def checked(text: str):
    return check_program(parse_program(text, "<arguments>"))


def gaussian_delta(eps: float, sens: float, sigma: float) -> mpmath.mpf:
    """The exact delta of N(0, sigma^2) on a query of L2 sensitivity s at eps
    (Balle & Wang 2018, Thm 8), in 50-digit arithmetic."""
    mpmath.mp.dps = 50
    a = mpmath.mpf(sens) / (2 * sigma)
    b = mpmath.mpf(eps) * sigma / sens
    return mpmath.ncdf(a - b) - mpmath.e ** eps * mpmath.ncdf(-a - b)


def assert_valid_and_tight(eps: float, sens: float, sigma: float) -> None:
    assert gaussian_delta(eps, sens, sigma) <= DEFAULT_DELTA  # valid
    assert gaussian_delta(eps * 0.98, sens, sigma) > DEFAULT_DELTA  # not loose by 2%


def test_duet_gaussian_on_a_real() -> None:
    # Duet: `gauss[1.0, eps, delta] <x>` on x : R; here a sigma over x
    prog = checked("def g (x : num) : fuzzy num = gauss[3] x;")
    d = prog.definitions["g"]
    fig = figures_for(d, None)["x"]
    assert fig.delta == DEFAULT_DELTA and fig.pure_epsilon is None
    assert_valid_and_tight(float(fig.epsilon), 1, 3)
    text = text_report(prog, None)
    assert "[inf]" not in text and "-DP in x" in text


def test_same_figure_as_a_bag_with_the_same_sensitivity() -> None:
    prog = checked(
        "def onx (x : num) (y : num) : fuzzy num = gauss[2] (x + x + y);\n"
        "def onbag (db : bag num) : fuzzy num = gauss[2] (sum[0, 2] db);\n"
    )
    figs = figures_for(prog.definitions["onx"], None)
    bag = figures_for(prog.definitions["onbag"], None)["db"]
    assert figs["x"].epsilon == bag.epsilon and figs["x"].method == bag.method
    assert_valid_and_tight(float(figs["x"].epsilon), 2, 2)
    assert_valid_and_tight(float(figs["y"].epsilon), 1, 2)
    assert list(figs) == ["x", "y"]  # the signature's order


def test_vector_argument_in_its_l2_norm() -> None:
    # DiffMu-style: a gradient vector with an L2 bound, noised once
    prog = checked("def release (g : vec[2] num) : fuzzy (vec[2] num) = gauss[5] (g + g + g);")
    fig = figures_for(prog.definitions["release"], None)["g"]
    assert_valid_and_tight(float(fig.epsilon), 3, 5)


def test_json_says_approximate_and_gives_the_figure() -> None:
    prog = checked("def g (n : int) (t : num) : fuzzy num = { sample a = gauss[4] n; sample b = laplace[0.5] t; return a + b };")
    (doc,) = json_definitions(prog, None)
    sens = {p["name"]: p["sensitivity"] for p in doc["params"]}
    assert sens == {"n": "approximate", "t": 0.5}
    assert set(doc["privacy"]) == {"n"} and doc["privacy"]["n"]["delta"] == DEFAULT_DELTA
    assert "inf" not in doc["type"]


def test_laplace_and_gauss_on_one_argument_compose() -> None:
    prog = checked("def both (x : num) : fuzzy (num, num) = { sample a = laplace[0.2] x; sample b = gauss[6] x; return (a, b) };")
    fig = figures_for(prog.definitions["both"], None)["x"]
    alone = figures_for(checked("def g (x : num) : fuzzy num = gauss[6] x;").definitions["g"], None)["x"]
    assert float(alone.epsilon) + 0.2 >= float(fig.epsilon) > float(alone.epsilon)  # composition, no cheaper than its parts


def test_an_unbounded_argument_stays_unbounded() -> None:
    # x * x is not Lipschitz: the cost in x is infinite, and says so
    prog = checked("def sq (x : num) : fuzzy num = gauss[2] (x * x);")
    d = prog.definitions["sq"]
    assert d.params[0].sensitivity.is_inf and not d.argument_privacy
    assert "(x :[inf] num)" in text_report(prog, None)


def test_a_caller_passing_data_is_charged_the_same_events() -> None:
    prog = checked(
        "def g (x : num) : fuzzy num = gauss[3] x;\n"
        "def main (db : bag num) : fuzzy num = g (sum[0, 1] db);\n"
    )
    assert figures_for(prog.definitions["main"], None)["db"].epsilon == figures_for(prog.definitions["g"], None)["x"].epsilon


def test_api_parameter_carries_the_cost() -> None:
    report = fuzzpy.loads("def g (x : num) : fuzzy num = gauss[3] x;").check()
    (param,) = report["g"].parameters
    assert param.cost is not None and param.cost.delta == DEFAULT_DELTA
    assert_valid_and_tight(float(param.cost.epsilon), 1, 3)
    assert param.sensitivity_text.startswith("approximate: (") and "inf" not in param.sensitivity_text


def test_cli_exit_0_and_no_bare_inf(tmp_path: Path) -> None:
    src = tmp_path / "arg.fz"
    src.write_text("def g (x : num) : fuzzy num = gauss[3] x;\n")
    out = subprocess.run([sys.executable, "-m", "fuzzpy", "check", "--json", str(src)], capture_output=True, text=True, cwd=ROOT)
    assert out.returncode == 0, out.stderr
    (doc,) = json.loads(out.stdout)["definitions"]
    assert doc["params"][0]["sensitivity"] == "approximate" and "x" in doc["privacy"]


@pytest.mark.parametrize("sigma", [1, 10, 100])
def test_tight_at_several_scales(sigma: int) -> None:
    prog = checked(f"def g (x : num) : fuzzy num = gauss[{sigma}] x;")
    assert_valid_and_tight(float(figures_for(prog.definitions["g"], None)["x"].epsilon), 1, sigma)
