"""zCDP and RDP curves and conversions equal the published formulas."""

from __future__ import annotations

import math
from collections import Counter
from fractions import Fraction

import numpy as np
import pytest

from fuzzpy.accounting import rdp, zcdp
from fuzzpy.accounting.atoms import GaussianAtom, LaplaceAtom, PureAtom, SubsampledAtom


@pytest.mark.parametrize(("rho", "delta"), [(0.1, 1e-5), (0.5, 1e-6), (2.0, 1e-3), (10.0, 1e-9)])
def test_bun_steinke_conversion(rho, delta):
    # Bun & Steinke 2016, Prop. 1.3
    assert zcdp.epsilon_simple(rho, delta) == pytest.approx(
        rho + 2 * math.sqrt(rho * math.log(1 / delta)), rel=1e-15
    )


@pytest.mark.parametrize(("rho", "delta"), [(0.01, 1e-5), (0.5, 1e-6), (2.0, 1e-3), (10.0, 1e-9)])
def test_cks_conversion_is_the_infimum_of_the_published_formula(rho, delta):
    # Canonne, Kamath & Steinke 2020, Cor. 13, minimised by brute force on a fine grid
    alphas = 1 + np.geomspace(1e-4, 1e4, 200_000)
    published = alphas * rho + (
        np.log(1 / delta) + (alphas - 1) * np.log(1 - 1 / alphas) - np.log(alphas)
    ) / (alphas - 1)
    found = zcdp.epsilon_cks(rho, delta)
    assert found <= published.min() + 1e-9
    assert found >= published.min() - 1e-6
    # and it is never worse than the simple conversion
    assert found <= zcdp.epsilon_simple(rho, delta)


def test_cks_delta_at_the_returned_epsilon_is_within_target():
    # the same theorem in its delta form: delta = e^{(a-1)(a rho - eps)} / (a - 1) (1 - 1/a)^a
    rho, delta = 0.3, 1e-6
    eps = zcdp.epsilon_cks(rho, delta)
    alphas = 1 + np.geomspace(1e-3, 1e3, 100_000)
    with np.errstate(over="ignore"):
        deltas = (
            np.exp((alphas - 1) * (alphas * rho - eps)) / (alphas - 1) * (1 - 1 / alphas) ** alphas
        )
    assert deltas.min() <= delta * (1 + 1e-6)


def test_rdp_conversion_is_balle_et_al_theorem_21_over_the_grid():
    rho, delta = 0.25, 1e-5
    a = rdp.ORDERS
    published = a * rho + np.log((a - 1) / a) - (math.log(delta) + np.log(a)) / (a - 1)
    found = rdp.epsilon(Counter({GaussianAtom(Fraction(1, 4)): 1}), delta)
    assert found == pytest.approx(published.min(), rel=1e-12)
    # Mironov's original conversion is never better
    assert found <= (a * rho + math.log(1 / delta) / (a - 1)).min()


@pytest.mark.parametrize("alpha", [1.5, 2.0, 7.0, 32.0])
def test_laplace_curve_is_mironovs_formula(alpha):
    eps = 0.7
    index = int(np.argmin(np.abs(rdp.ORDERS - alpha)))
    a = rdp.ORDERS[index]
    # Mironov 2017, Prop. 6, in plain arithmetic
    expected = math.log(
        a / (2 * a - 1) * math.exp((a - 1) * eps) + (a - 1) / (2 * a - 1) * math.exp(-a * eps)
    ) / (a - 1)
    assert rdp.laplace_curve(eps)[index] == pytest.approx(min(expected, eps), rel=1e-10)


def test_randomized_response_curve_is_the_renyi_divergence_of_randomized_response():
    eps = 1.2
    p = math.exp(eps) / (1 + math.exp(eps))
    for index in (0, 60, 100, 180):
        a = rdp.ORDERS[index]
        expected = math.log(p**a * (1 - p) ** (1 - a) + (1 - p) ** a * p ** (1 - a)) / (a - 1)
        assert rdp.atom_curve(PureAtom(Fraction(6, 5)))[0][index] == pytest.approx(
            min(expected, eps), rel=1e-10
        )


@pytest.mark.parametrize("alpha", [2, 3, 10])
def test_subsampled_gaussian_curve_is_mironov_talwar_zhang_at_integer_orders(alpha):
    # MTZ 2019, Sec. 3.3: A_alpha = sum_k C(alpha,k) (1-q)^{alpha-k} q^k e^{(k^2-k)/(2 sigma^2)}
    q, sigma = 0.05, 1.3
    a_alpha = sum(
        math.comb(alpha, k) * (1 - q) ** (alpha - k) * q**k * math.exp((k * k - k) / (2 * sigma**2))
        for k in range(alpha + 1)
    )
    index = int(np.flatnonzero(alpha == rdp.ORDERS)[0])
    atom = SubsampledAtom(Fraction(1, 20), GaussianAtom(Fraction(1) / (2 * Fraction(13, 10) ** 2)))
    curve, delta = rdp.atom_curve(atom)
    assert delta == 0
    assert curve[index] == pytest.approx(math.log(a_alpha) / (alpha - 1), rel=1e-9)


def test_zcdp_costs_of_atoms():
    assert zcdp.atom_rho(GaussianAtom(Fraction(1, 8))) == (Fraction(1, 8), 0)
    laplace, delta = zcdp.atom_rho(LaplaceAtom(Fraction(1, 2)))
    assert delta == 0 and Fraction(1, 8) * 0.85 < laplace < Fraction(1, 8) * 0.86
    assert zcdp.atom_rho(PureAtom(Fraction(1, 2), bounded_range=True)) == (Fraction(1, 32), 0)
    # bounded range above eps = 8: the pure bound eps tanh(eps/2) is smaller than eps^2/8
    big, _ = zcdp.atom_rho(PureAtom(Fraction(12), bounded_range=True))
    assert big == zcdp.pure_rho(Fraction(12)) < Fraction(144, 8)
