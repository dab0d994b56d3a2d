"""`budget --profile`: the privacy profile, trade-off curve, rho and Renyi
curve (issue 29, item 6), each figure checked against a formula written here
from the papers, and the figures' layout kept readable."""

from __future__ import annotations

import json
import math
from fractions import Fraction

import mpmath as mp
import pytest
from scipy.stats import norm

from fuzzpy.accounting.calibrate import gaussian_events, laplace_events
from fuzzpy.accounting.profile import gaussian_mu, tradeoff_from_profile, views
from fuzzpy.cli import main


def _gaussian_delta(mu: float, eps: float) -> float:
    """Balle & Wang 2018, Thm 8: the exact delta of mu-GDP at eps."""
    return float(norm.cdf(-eps / mu + mu / 2) - math.exp(eps) * norm.cdf(-eps / mu - mu / 2))


def _laplace_tradeoff(eps: float, alpha: float) -> float:
    """The Laplace mechanism's trade-off (Dong, Roth & Su 2022, sec. 2.3,
    Lap(0, 1/eps) against Lap(1, 1/eps))."""
    if alpha < math.exp(-eps) / 2:
        return 1 - math.exp(eps) * alpha
    if alpha <= 0.5:
        return math.exp(-eps) / (4 * alpha)
    return math.exp(-eps) * (1 - alpha)


def test_gaussian_composition_is_mu_gdp_and_every_profile_point_holds() -> None:
    events = gaussian_events(Fraction(3), 7, Fraction(1), None)
    seen = views(events)
    mu = math.sqrt(7) / 3
    assert seen.gdp_mu == pytest.approx(mu, rel=1e-12) and seen.gdp_mu >= mu
    for point in seen.profile:
        assert _gaussian_delta(mu, point.epsilon) <= point.delta * (1 + 1e-9)
    for t in seen.tradeoff:
        exact = 1.0 if t.alpha == 0 else 0.0 if t.alpha == 1 else float(norm.cdf(norm.ppf(1 - t.alpha) - mu))
        assert t.beta <= exact and t.beta == pytest.approx(exact, abs=1e-9)
    assert seen.rho == Fraction(7, 18)
    for order, value in seen.renyi:
        assert value >= order * 7 / 18 and value == pytest.approx(order * 7 / 18, rel=1e-15)


def test_one_laplace_tradeoff_never_claims_more_than_the_mechanism_gives() -> None:
    eps = 0.7
    seen = views(laplace_events(Fraction(10, 7), 1, Fraction(1), None))
    assert seen.gdp_mu is None
    for t in seen.tradeoff:
        assert t.beta <= _laplace_tradeoff(eps, t.alpha) + 1e-12
    # and its Renyi curve is Mironov's Laplace divergence (2017, Table II)
    for order, value in seen.renyi:
        a, e = mp.mpf(order), mp.mpf(7) / 10
        exact = mp.log(a / (2 * a - 1) * mp.exp((a - 1) * e) + (a - 1) / (2 * a - 1) * mp.exp(-a * e)) / (a - 1)
        assert value >= float(exact) and value == pytest.approx(float(exact), rel=1e-9)


def test_the_envelope_of_several_guarantees_is_their_pointwise_maximum() -> None:
    from fuzzpy.accounting.profile import ProfilePoint

    points = (ProfilePoint(1.0, 0.0, "pure"), ProfilePoint(0.2, 0.05, "x"))
    for t in tradeoff_from_profile(points, (0.01, 0.3, 0.6)):
        f1 = max(0.0, 1 - math.e * t.alpha, (1 - t.alpha) / math.e)
        f2 = max(0.0, 0.95 - math.exp(0.2) * t.alpha, (0.95 - t.alpha) / math.exp(0.2))
        assert t.beta <= max(f1, f2) and t.beta == pytest.approx(max(f1, f2), abs=1e-9)


def test_approximate_events_have_no_renyi_curve_and_no_mu() -> None:
    from fuzzpy.accounting.events import Verified

    approximate = (Verified("m", Fraction(1, 2), Fraction(1, 10**6)),)
    seen = views(approximate)
    assert seen.renyi == () and gaussian_mu(approximate) is None
    assert all(p.delta >= 1e-6 for p in seen.profile)


def test_cli_text_rounds_each_figure_the_safe_way(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["budget", "--gaussian", "1.3", "--rounds", "4", "--profile"]) == 0
    text = capsys.readouterr().out
    assert main(["budget", "--gaussian", "1.3", "--rounds", "4", "--profile", "--json"]) == 0
    document = json.loads(capsys.readouterr().out)["views"]
    rows = text.split("privacy profile")[1].split("trade-off")[0].splitlines()[2:]
    printed = [(float(r.split()[0]), float(r.split()[1])) for r in rows if r.strip()]
    for (delta, eps), point in zip(printed, document["profile"], strict=True):
        assert delta == point["delta"] and eps >= point["epsilon"]
    pairs = text.split("trade-off curve")[1].splitlines()[1].split()
    for pair, point in zip(pairs, document["tradeoff"], strict=True):
        assert float(pair.split("->")[1]) <= point["beta"]
    assert "mu-GDP with mu = " in text and "zCDP: rho = " in text


def test_profile_of_a_program_needs_one_definition(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["budget", "examples/dpsgd.fz", "--profile"]) == 2
    assert "needs one DEF" in capsys.readouterr().err


def _inside(inner, outer, slack: float = 1.0) -> bool:  # noqa: ANN001
    return (inner.x0 >= outer.x0 - slack and inner.y0 >= outer.y0 - slack
            and inner.x1 <= outer.x1 + slack and inner.y1 <= outer.y1 + slack)


@pytest.mark.slow  # matplotlib: seconds
def test_figures_keep_a_readable_layout() -> None:
    from fuzzpy.accounting.plot import curves, profile_figure, round_grid, rounds_figure

    rounds = round_grid(50, 6)
    table = curves(lambda k: gaussian_events(Fraction(2), k, Fraction(1), None), rounds, 1e-6)
    figure = rounds_figure(table, rounds, 1e-6, "50 x Gaussian sigma=2")
    figure.canvas.draw()
    renderer = figure.canvas.get_renderer()
    page = figure.bbox
    (axes,) = figure.axes
    legend = figure.legends[0].get_window_extent(renderer)
    assert _inside(legend, page) and _inside(axes.bbox, page)
    assert axes.bbox.width >= 0.5 * page.width and axes.bbox.height >= 0.6 * page.height
    assert legend.x0 >= axes.bbox.x1  # beside the curves, not over them
    figure = profile_figure(views(gaussian_events(Fraction(2), 3, Fraction(1), None)), "t")
    figure.canvas.draw()
    for panel in figure.axes:
        assert _inside(panel.get_tightbbox(figure.canvas.get_renderer()), figure.bbox, slack=2.0)
        assert panel.bbox.width >= 0.2 * figure.bbox.width
