"""Exact probabilities of a counterexample, computed independently of the verifier.

A *witness* (in expected.json) shows that a mechanism is not private: two
neighbouring inputs, one output, and a model of the mechanism's output law on
that output, from one of three families. The probability (or density) of the
output is a one-dimensional integral of Laplace / exponential densities and
CDFs, evaluated with mpmath to 30 digits; the ratio of the two runs must
exceed e^eps. The families are the textbook forms of the algorithms (Lyu, Su &
Li 2017, Sec. 3; Dwork & Roth 2014, Sec. 3.3 and 3.6), written once here:

* ``svt``: a noisy threshold t + z, z ~ Lap(threshold_scale) (or z = 0 when
  the scale is 0, or z fixed when the threshold is published), shared by the
  queries of one round (a round ends where the threshold is redrawn); each
  query contributes a product of *tokens*, functions of z:
    ["below", b, off]    P(q + nu <  t + z + off), nu ~ Lap(b) (b = 0: no noise)
    ["above", b, off]    P(q + nu >= t + z + off)
    ["same", b, y, off]  density of q + nu at y, times [y >= t + z + off]
    ["gap", b, g]        density of q + nu - (t + z) at g
    ["fresh", b, y]      density of q + Lap(b) at y (fresh noise)
* ``rnm``: noisy max/min over independent Lap(b) or Exponential(b) noise:
  the index, the maximum's or minimum's value, index and gap to the runner-up,
  or index with the top two values.
* ``linear``: releases y_j = a_j . q + c_j . (y_0 .. y_{j-1}) + Lap(b_j),
  exact when b_j = 0 (the density is the product over j; an exact release
  that differs has probability 0).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import mpmath

DIGITS = 30  # set locally (mpmath.workdps): the verifier keeps its own global precision
Number = mpmath.mpf
Factor = Callable[[Number], Number]


def _mp(x: object) -> Number:
    """A number from JSON: an int, a float, or an exact fraction "a/b"."""
    if isinstance(x, str) and "/" in x:
        numerator, denominator = x.split("/")
        return mpmath.mpf(int(numerator)) / int(denominator)
    return mpmath.mpf(x)


def lap_pdf(x: Number, b: Number) -> Number:
    return mpmath.exp(-abs(x) / b) / (2 * b)


def lap_cdf(x: Number, b: Number) -> Number:
    """P(Lap(b) <= x); with b = 0 the step function (no noise)."""
    if b == 0:
        return mpmath.mpf(1) if x >= 0 else mpmath.mpf(0)
    return mpmath.exp(x / b) / 2 if x < 0 else 1 - mpmath.exp(-x / b) / 2


def exp_pdf(x: Number, b: Number) -> Number:
    return mpmath.exp(-x / b) / b if x >= 0 else mpmath.mpf(0)


def exp_cdf(x: Number, b: Number) -> Number:
    return 1 - mpmath.exp(-x / b) if x >= 0 else mpmath.mpf(0)


def _quad(f: Factor, points: Sequence[Number], upper: Number = mpmath.inf) -> Number:
    cuts = sorted({p for p in points if p < upper})
    return mpmath.quad(f, [-mpmath.inf, *cuts, upper])


# ---------------------------------------------------------------- svt


def _token(token: list, q: Number, t: Number) -> tuple[Factor, list[Number], Number]:
    """The token's factor as a function of z, its kinks, and an upper bound on z."""
    kind = token[0]
    if kind in ("below", "above"):
        b, off = _mp(token[1]), _mp(token[2])

        def below(z: Number) -> Number:
            if b == 0:
                return mpmath.mpf(1) if q < t + z + off else mpmath.mpf(0)
            return lap_cdf(t + z + off - q, b)

        factor = below if kind == "below" else (lambda z: 1 - below(z))
        return factor, [q - t - off], mpmath.inf
    if kind == "same":
        b, y, off = _mp(token[1]), _mp(token[2]), _mp(token[3])
        return (lambda z: lap_pdf(y - q, b)), [], y - t - off
    if kind == "gap":
        b, g = _mp(token[1]), _mp(token[2])
        return (lambda z: lap_pdf(g + t + z - q, b)), [q - g - t], mpmath.inf
    if kind == "fresh":
        b, y = _mp(token[1]), _mp(token[2])
        return (lambda z: lap_pdf(y - q, b)), [], mpmath.inf
    raise ValueError(f"unknown token {kind!r}")


def _svt_round(spec: dict, queries: list[Number], outcomes: list[list[list]]) -> Number:
    t = _mp(spec["t"])
    scale = _mp(spec["threshold_scale"])
    factors: list[Factor] = []
    points: list[Number] = [mpmath.mpf(0)]
    upper = mpmath.inf
    for q, tokens in zip(queries, outcomes, strict=True):
        for token in tokens:
            factor, kinks, bound = _token(token, q, t)
            factors.append(factor)
            points += kinks
            upper = min(upper, bound)

    def integrand(z: Number) -> Number:
        value = lap_pdf(z, scale) if scale > 0 else mpmath.mpf(1)
        for factor in factors:
            value *= factor(z)
        return value

    if spec.get("published_threshold") is not None:
        z = _mp(spec["published_threshold"]) - t
        return integrand(z) if z <= upper else mpmath.mpf(0)
    if scale == 0:
        return integrand(mpmath.mpf(0)) if upper >= 0 else mpmath.mpf(0)
    return _quad(integrand, points, upper)


def svt_probability(spec: dict, queries: Sequence[object]) -> Number:
    values = [_mp(x) for x in queries]
    total, start = mpmath.mpf(1), 0
    for outcomes in spec["rounds"]:
        total *= _svt_round(spec, values[start:start + len(outcomes)], outcomes)
        start += len(outcomes)
    return total


# ---------------------------------------------------------------- rnm


def rnm_probability(spec: dict, queries: Sequence[object]) -> Number:
    q = [_mp(x) for x in queries]
    b = _mp(spec["scale"])
    pdf, cdf = (lap_pdf, lap_cdf) if spec["noise"] == "lap" else (exp_pdf, exp_cdf)
    out = spec["output"]
    kinks = list(q)
    if "index" in out or "min_index" in out:
        k = out.get("index", out.get("min_index"))
        below = "index" in out

        def integrand(x: Number) -> Number:
            value = pdf(x - q[k], b)
            for j, qj in enumerate(q):
                if j != k:
                    value *= cdf(x - qj, b) if below else 1 - cdf(x - qj, b)
            return value

        return _quad(integrand, kinks)
    if "max_value" in out or "min_value" in out:
        y = _mp(out.get("max_value", out.get("min_value")))
        below = "max_value" in out
        return mpmath.fsum(
            pdf(y - q[k], b) * mpmath.fprod(
                (cdf(y - qj, b) if below else 1 - cdf(y - qj, b)) for j, qj in enumerate(q) if j != k)
            for k in range(len(q)))
    if "index_gap" in out:
        k, g = out["index_gap"][0], _mp(out["index_gap"][1])

        def gap_integrand(x: Number) -> Number:
            return pdf(x - q[k], b) * _runner_up_density(q, k, x - g, b, pdf, cdf)

        return _quad(gap_integrand, kinks + [qj + g for qj in q])
    if "top2_values" in out:
        k, y1, y2 = out["top2_values"][0], _mp(out["top2_values"][1]), _mp(out["top2_values"][2])
        return pdf(y1 - q[k], b) * _runner_up_density(q, k, y2, b, pdf, cdf) if y1 > y2 else mpmath.mpf(0)
    raise ValueError(f"unknown rnm output {out!r}")


def _runner_up_density(q: list[Number], k: int, y: Number, b: Number, pdf, cdf) -> Number:
    """Density that the best noisy value other than index k's is at y."""
    return mpmath.fsum(
        pdf(y - q[j], b) * mpmath.fprod(cdf(y - q[m], b) for m in range(len(q)) if m not in (j, k))
        for j in range(len(q)) if j != k)


# ---------------------------------------------------------------- linear releases


def linear_probability(spec: dict, queries: Sequence[object]) -> Number:
    q = [_mp(x) for x in queries]
    ys = [_mp(y) for y in spec["y"]]
    density = mpmath.mpf(1)
    for j, release in enumerate(spec["releases"]):
        mean = mpmath.fsum(_mp(a) * x for a, x in zip(release["q"], q, strict=False))
        mean += mpmath.fsum(_mp(c) * y for c, y in zip(release.get("prev", []), ys[:j], strict=False))
        b = _mp(release["scale"])
        if b == 0:
            if ys[j] != mean:
                return mpmath.mpf(0)
        else:
            density *= lap_pdf(ys[j] - mean, b)
    return density


FAMILIES = {"svt": svt_probability, "rnm": rnm_probability, "linear": linear_probability}


def ratio(spec: dict) -> tuple[Number, Number]:
    """P[output | q] and P[output | q'] (densities where the output is continuous)."""
    family = FAMILIES[spec["family"]]
    with mpmath.workdps(DIGITS):
        return family(spec, spec["q"]), family(spec, spec["q_neighbour"])
