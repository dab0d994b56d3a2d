"""Dominating pairs with finitely many outcomes, as loss tails for the PLD.

Three pairs of the accountant live on a countable outcome space and have no
closed-form tails: the replace-one and the add/remove pairs of a
Poisson-subsampled discrete Gaussian, and Feldman, McMillan & Talwar's pair
of a shuffled randomiser.
Each is given here as a list of atoms (loss l_i, P-mass p_i) plus a P-mass
at +infinity, with the interface of `pld_pairs.LossTails`, so the PLD
(`pld_grid`, `pld_plan`) composes it like any other pair.

Why a list of atoms is an upper bound (the three operations of `pld_grid`'s
argument: the hockey-stick divergence of a composition is an expectation
under the P-laws of a function decreasing and convex in each x_i = e^{-L_i},
and non-negative): only the P-law of the loss matters, the Q-mass of an
atom being its P-mass times e^{-l}. So each atom may be

* moved to a larger loss (its loss rounded up, `_declared`),
* given more P-mass (masses rounded up; a truncated tail added to an atom
  at a loss at least as large as any it held, or to +infinity),

and what is declared is then an exact distribution: the tails returned are
its exact tails up to the summation's rounding (``rel``), and the threshold
error is zero (the declared losses are the atoms' losses, exactly).

Pairs (the replace-one and shuffle pairs symmetric: one direction serves
both; the add/remove pair, `dgauss_subsample_pair`, one per direction):

* `dgauss_replace_pair`: P = (1-q) N_Z(0) + q N_Z(s), Q = (1-q) N_Z(0) +
  q N_Z(-s), the replace-one pair of `pld_replace` built on the discrete
  Gaussian's PMF (an integer query moving by at most s; the proof of
  `pld_replace` carries over with randomised half-line tests, the discrete
  Gaussian having an increasing likelihood ratio in shifts, f(y - s) / f(y)
  = e^{(2ys - s^2) / (2 sigma^2)}, and (N_Z(s), N_Z(0)) dominating every
  (N_Z(a), N_Z(0)), |a| <= s: `SHIFT_DOMINATION`). y -> -y swaps P and Q.

SHIFT_DOMINATION (ours, with Neyman-Pearson and Dong, Roth & Su 2022,
Prop. 2.12: a pointwise smaller trade-off function is a larger hockey-stick
divergence at every gamma >= 0). For integers 0 <= a <= s and a level alpha,
the randomised upper half-line test phi of N_Z(0)-level alpha is most
powerful against N_Z(s) (the ratio above increases in y); phi is increasing
in y and N_Z(s) is N_Z(a) moved up by s - a, so E_s[phi] >= E_a[phi]: the
trade-off function of (N_Z(s), N_Z(0)) is at most that of (N_Z(a), N_Z(0))
at every alpha. y -> -y maps (N_Z(-a), N_Z(0)) to (N_Z(a), N_Z(0)), and
y -> a - y maps (N_Z(0), N_Z(a)) to (N_Z(a), N_Z(0)) (f is even): the
reversed pairs and negative shifts are covered too.
* `shuffle_pair`: FMT 2021's pair of n shuffled eps0-LDP reports
  (`accounting.shuffle`), outcome (C, A) with C ~ Bin(n - 1, e^{-eps0}),
  blocks of C charged their left end (a post-processing, as there).
  Swapping the two coordinates swaps P and Q.
"""

from __future__ import annotations

import functools
import math
from fractions import Fraction

import numpy as np

from fuzzpy.accounting.pld_pairs import ULP, Tails
from fuzzpy.support.records import frozen

Array = np.ndarray
REL = 1e-9  # relative error allowed for every computed mass and tail: far above the float errors
MAX_ATOMS = 2_000_000


@frozen
class AtomicBase:
    """What `pld_grid` and `pld_plan` read of a pair's base: no ``mu`` (not a
    smooth Gaussian), ``delta`` the P-mass at +infinity."""

    delta: float


@frozen
class AtomicTails:
    """A pair with finitely many finite losses (module docstring): ``losses``
    ascending (distinct), ``masses`` their P-masses, ``infinity`` the
    P-mass at +infinity; all declared (upper bounds)."""

    losses: tuple[float, ...]
    masses: tuple[float, ...]
    infinity: float
    label: str = ""
    remove: bool = True
    rate: float = 0.0  # not a subsampled base pair: `pld.directions` adds it to both directions itself

    @property
    def base(self) -> AtomicBase:
        return AtomicBase(self.infinity)

    def _arrays(self) -> tuple[Array, Array, Array]:
        losses = np.asarray(self.losses, dtype=float)
        p = np.asarray(self.masses, dtype=float)
        with np.errstate(over="ignore"):
            q = p * np.exp(-losses)
        return losses, p, q

    def tails(self, eps: Array) -> Tails:
        eps = np.asarray(eps, dtype=float)
        losses, p, q = self._arrays()
        # P(L > c): the atoms above c (suffix sums), and +infinity's mass; P(L <= c): prefix sums
        p_suffix = np.concatenate([np.cumsum(p[::-1])[::-1], [0.0]])
        q_suffix = np.concatenate([np.cumsum(q[::-1])[::-1], [0.0]])
        p_prefix = np.concatenate([[0.0], np.cumsum(p)])
        q_prefix = np.concatenate([[0.0], np.cumsum(q)])
        above = np.searchsorted(losses, eps, side="right")  # first atom with loss > c
        rel = np.full(eps.shape, REL + 4 * ULP * (losses.size + 4))
        return Tails(p_suffix[above] + self.infinity, p_prefix[above], q_suffix[above], q_prefix[above], rel)

    def threshold_error(self, eps: Array) -> float:
        return 0.0  # the declared losses are exact (module docstring)

    def loss_range(self) -> tuple[float, float]:
        return float(self.losses[0]), float(self.losses[-1])


def _declared(losses: Array, errors: Array, masses: Array, infinity: float, label: str) -> AtomicTails:
    """Atoms from computed losses and masses: each loss raised by ``errors``
    (a bound of its rounding) and a relative 1e-12 more, each mass by REL;
    equal losses merged; sorted."""
    keep = masses > 0
    losses, errors, masses = losses[keep], errors[keep], masses[keep]
    raised = losses + errors + np.abs(losses) * 1e-12
    order = np.argsort(raised, kind="stable")
    raised, masses = raised[order], masses[order] * (1 + REL)
    unique, start = np.unique(raised, return_index=True)
    merged = np.add.reduceat(masses, start) if masses.size else masses
    return AtomicTails(tuple(unique.tolist()), tuple(merged.tolist()), min(1.0, infinity * (1 + REL)), label)


# ---------------------------------------------------------------- discrete Gaussian, replace-one


def _log_pmf(y: Array, s2: float) -> tuple[Array, float]:
    """log f(y) - log Z_low on a window, and log Z_low (Z_low <= Z: the float
    sum of the window, rounding covered by REL)."""
    log_f = -(y * y) / (2 * s2)
    log_z = float(np.log(np.sum(np.exp(log_f))))
    return log_f - log_z, log_z


def dgauss_replace_pair(sigma: Fraction, rate: float, tail: float, shift: int = 1) -> AtomicTails | None:
    """The replace-one pair of a Poisson-subsampled discrete Gaussian on a
    query moving by at most ``shift`` (module docstring), its support cut at
    |y| <= K + shift with the discrete Gaussian's mass beyond K below
    ``tail``: the upper cut tail (the largest losses) at +infinity, the lower
    one added to the smallest atom. None where the window is too wide."""
    s2 = float(Fraction(sigma) ** 2)
    if not (s2 > 0 and math.isfinite(s2) and 0 < rate < 1 and 0 < tail < 1 and shift >= 1):
        return None
    sigma_f = math.sqrt(s2)
    depth = math.sqrt(2 * math.log(1 / tail))
    k = math.ceil(sigma_f * depth) + 3
    if 2 * (k + shift) + 1 > MAX_ATOMS:
        return None
    # Z_low over [-K, K] (a lower bound of Z: every mass over it is raised), the atoms over [-K - s, K + s]
    _, log_z = _log_pmf(np.arange(-k, k + 1, dtype=float), s2)
    y = np.arange(-k - shift, k + shift + 1, dtype=float)
    log_f = -(y * y) / (2 * s2) - log_z
    # f(y -+ s) / Z on the same window: shifts of the exact PMF (log f(y - s) = -(y - s)^2 / (2 s2));
    # each of f, f(. - s), f(. + s) has at most ``beyond`` (below) outside the window on either side
    log_up = -((y - shift) ** 2) / (2 * s2) - log_z
    log_down = -((y + shift) ** 2) / (2 * s2) - log_z
    log_p = np.logaddexp(math.log1p(-rate) + log_f, math.log(rate) + log_up)
    log_q = np.logaddexp(math.log1p(-rate) + log_f, math.log(rate) + log_down)
    losses = log_p - log_q
    masses = np.exp(log_p)
    # the mass of N_Z(0) and N_Z(+-s) beyond the window, each at most the Gaussian tail bound
    # sum_{y > K - 1} f(y) / Z <= f(K - 1) / (1 - r) / Z, r = e^{-(2K - 1) / (2 s2)}
    ratio = math.exp(-(2 * k - 1) / (2 * s2))
    beyond = math.exp(-((k - 1) ** 2) / (2 * s2) - log_z) / (1 - ratio) if ratio < 1 else 1.0
    masses[0] += beyond  # the lower tail moved up to the smallest loss (the loss increases in y)
    # each log-mass a few roundings of its magnitude (logaddexp, the squares, log Z)
    errors = 64 * ULP * (np.abs(log_p) + np.abs(log_q) + abs(log_z) + 1)
    return _declared(losses, errors, masses, beyond, "dgauss-replace")


# ---------------------------------------------------------------- discrete Gaussian, add/remove


def _subsample_window(sigma: Fraction, shift: int, tail: float) -> int | None:
    """K of `dgauss_subsample_pair`'s window -K .. K + shift, or None when it
    holds more than MAX_ATOMS outcomes (or sigma is no positive double)."""
    s2 = float(Fraction(sigma) ** 2)
    if not (s2 > 0 and math.isfinite(s2) and 0 < tail < 1):
        return None
    k = math.ceil(math.sqrt(s2) * math.sqrt(2 * math.log(1 / tail))) + 3
    return k if 2 * k + shift + 1 <= MAX_ATOMS else None


def dgauss_subsample_fits(sigma: Fraction, shift: int, tail: float) -> bool:
    """Whether `dgauss_subsample_pair` builds its window (cheap: no atoms)."""
    return _subsample_window(sigma, shift, tail) is not None


def dgauss_subsample_pair(sigma: Fraction, shift: int, rate: float, tail: float, remove: bool) -> AtomicTails | None:
    """The add/remove pair of a Poisson-subsampled discrete Gaussian on an
    integer query moving by at most ``shift`` = s (``remove``: the removal
    direction, else the addition one): removal P = (1-q) f +
    q f(. - s) against Q = f, addition P = f against Q = (1-q) f + q f(. - s),
    f the PMF of N_Z(0, sigma^2) (Canonne, Kamath & Steinke 2020, Def. 1).

    Why it dominates (Balle, Barthe & Gaboardi 2018, advanced joint convexity;
    Zhu, Dong & Wang 2022, Thm 11 with its reverse for addition): both need
    (N_Z(a), N_Z(0)) dominated by (N_Z(s), N_Z(0)) for every integer |a| <= s
    in both orders: `SHIFT_DOMINATION` in the module docstring.

    The support is cut to -K <= y <= K + s (K from ``tail``: the mass of f
    beyond K below ``tail``). Removal's loss log(1 - q + q e^{(2ys - s^2) /
    (2 sigma^2)}) increases in y: the upper cut P-mass goes to +infinity, the
    lower one to the smallest atom; addition's loss is its negative on
    P = f: the lower cut to +infinity, the upper one to the smallest atom.
    None where the window is too wide."""
    s2 = float(Fraction(sigma) ** 2)
    if not (0 < rate < 1 and 0 < tail < 1 and shift >= 1):
        return None
    k = _subsample_window(sigma, shift, tail)
    if k is None:
        return None
    # Z_low: the window's symmetric part [-K, K] (a lower bound of Z; masses over it are raised)
    _, log_z = _log_pmf(np.arange(-k, k + 1, dtype=float), s2)
    y = np.arange(-k, k + shift + 1, dtype=float)
    log_f = -(y * y) / (2 * s2) - log_z
    log_shifted = -((y - shift) ** 2) / (2 * s2) - log_z
    log_mix = np.logaddexp(math.log1p(-rate) + log_f, math.log(rate) + log_shifted)
    log_p, log_q = (log_mix, log_f) if remove else (log_f, log_mix)
    losses = log_p - log_q
    masses = np.exp(log_p)
    beyond = _tail_outside_window(losses, masses, k, s2, log_z)
    errors = 64 * ULP * (np.abs(log_p) + np.abs(log_q) + abs(log_z) + 1)
    found = _declared(losses, errors, masses, min(beyond, 1.0), "dgauss-subsample")
    return AtomicTails(found.losses, found.masses, found.infinity, found.label, remove, rate)


# ---------------------------------------------------------------- discrete Gaussian, a person's k rows

MAX_GROUP_WORK = 40_000_000  # outcomes times mixture terms: beyond it, the group bound instead


def _group_log_weights(size: int, rate: float) -> tuple[Array, float]:
    """log C(k, j) q^j (1-q)^{k-j}, j = 0 .. k, and a bound of their rounding
    (a few ulp of each part's magnitude; C(k, j) is an exact integer)."""
    j = np.arange(size + 1, dtype=float)
    log_binomial = np.array([math.log(math.comb(size, i)) for i in range(size + 1)])
    log_q, log_p = math.log(rate), math.log1p(-rate)
    weights = log_binomial + j * log_q + (size - j) * log_p
    error = 8 * ULP * float(np.max(np.abs(log_binomial) + j * abs(log_q) + (size - j) * abs(log_p) + 1))
    return weights, error


def _log_mixture(y: Array, s2: float, shift: int, log_weights: Array, sign: int, log_z: float) -> Array:
    """log sum_j w_j f(y - sign j s) / Z_low on the window y."""
    total = np.full(y.shape, -np.inf)
    for j, log_w in enumerate(log_weights):
        if np.isfinite(log_w):
            total = np.logaddexp(total, log_w - (y - sign * j * shift) ** 2 / (2 * s2))
    return total - log_z


def dgauss_group_pair(sigma: Fraction, shift: int, rate: float, size: int, tail: float,
                      way: str) -> AtomicTails | None:
    """A person's ``size`` = k rows under Poisson subsampling at rate q of a
    discrete Gaussian on an integer query moving by at most ``shift`` = s per
    row, w_j = C(k, j) q^j (1-q)^{k-j} (the chance that j of the k rows are
    drawn), f the PMF of N_Z(0, sigma^2):

    * ``way`` "remove": P = sum_j w_j f(. - j s) against Q = f;
    * "add": P = f against Q = sum_j w_j f(. - j s);
    * "replace" (the k rows replaced): P = sum_j w_j f(. - j s) against
      Q = sum_j w_j f(. + j s); y -> -y swaps P and Q (one direction serves both).

    Why it dominates (GROUP_DOMINATION, ours; the argument of
    `pld_group.GroupTails` with the discrete Gaussian's randomised tests):
    given the sample S of the other rows, the set T of the person's rows
    drawn (|T| = j, chance w_j) moves the query by an integer a_T, |a_T| <= j s,
    and translating by the query on S (an integer) leaves the pair
    (sum_T w_T N_Z(a_T), N_Z(0)). For a test phi of N_Z(0)-level p, the
    upper half-line test U_p of that level is most powerful against every
    positive shift (the likelihood ratio increases in y) and N_Z(|a|) moved
    up to N_Z(j s) only raises E[U_p] (U_p increases in y), with y -> -y for
    negative a: E_{a_T}[phi] <= E_{j s}[U_p], one test for every j; so
    P(phi) - gamma Q(phi) <= P*(U_p) - gamma Q*(U_p) <= H_gamma(P* || Q*) at
    every gamma >= 0. Addition: the lower half-line L_p is least powerful,
    E_{a_T}[phi] >= E_{j s}[L_p]. Replacement: both bounds at once, the new
    rows' side E >= E_{-j s}[U_p] by reflection (f is even), as in
    `pld_group.ReplaceGroupTails`. Mixing over S keeps each bound (joint
    convexity; Balle, Barthe & Gaboardi 2018); Zhu, Dong & Wang 2022 for
    dominating pairs and their composition. A larger q only moves w towards
    larger j, so the rate rounded up keeps it dominating. It is exact when
    the k rows move the query by s each, the same way (a count).

    The window is -K .. K + k s (replace: -K - k s .. K + k s), K from
    ``tail`` as in `dgauss_subsample_pair`; every shifted PMF has at most
    ``beyond`` outside it on either side. The loss increases in y for
    "remove" and "replace" (log sum_j w_j e^{(2 y j s - j^2 s^2) / (2 sigma^2)}
    increases), decreases for "add": the cut tail of the largest losses
    goes to +infinity, the other to the smallest kept atom. None where the
    window, or its work with k + 1 mixture terms, is too large."""
    s2 = float(Fraction(sigma) ** 2)
    if not (0 < rate < 1 and 0 < tail < 1 and shift >= 1 and size >= 1 and way in ("remove", "add", "replace")):
        return None
    reach = shift * size
    k = _subsample_window(sigma, reach, tail)
    if k is None:
        return None
    low = -k - reach if way == "replace" else -k
    outcomes = k + reach - low + 1
    if outcomes > MAX_ATOMS or outcomes * (size + 1) > MAX_GROUP_WORK:
        return None
    _, log_z = _log_pmf(np.arange(-k, k + 1, dtype=float), s2)
    y = np.arange(low, k + reach + 1, dtype=float)
    log_w, weight_error = _group_log_weights(size, rate)
    log_f = -(y * y) / (2 * s2) - log_z
    log_up = _log_mixture(y, s2, shift, log_w, 1, log_z)
    if way == "replace":
        log_p, log_q = log_up, _log_mixture(y, s2, shift, log_w, -1, log_z)
    else:
        log_p, log_q = (log_up, log_f) if way == "remove" else (log_f, log_up)
    losses = log_p - log_q
    masses = np.exp(log_p)
    beyond = _tail_outside_window(losses, masses, k, s2, log_z)
    # each log-mass: k + 1 logaddexp steps over terms of magnitude up to |log w| + y^2 / (2 s2) + |log Z|
    magnitude = np.max(np.abs(log_w[np.isfinite(log_w)])) + (np.abs(y) + reach) ** 2 / (2 * s2) + abs(log_z) + 1
    errors = 16 * ULP * (size + 4) * 2 * magnitude + 2 * weight_error
    found = _declared(losses, errors, masses, min(beyond, 1.0), f"dgauss-group-{way}")
    if way == "replace":
        return found  # symmetric: `pld.directions` puts it in both directions
    return AtomicTails(found.losses, found.masses, found.infinity, found.label, way == "remove", rate)


# ---------------------------------------------------------------- shuffled reports (FMT 2021)


SHUFFLE_BLOCKS = 200
SHUFFLE_WIDTH = 12.0  # standard deviations of Bin(c, 1/2) kept around c / 2


def shuffle_pair(eps0: float, n: int) -> AtomicTails | None:
    """FMT 2021's pair of n shuffled eps0-LDP reports (module docstring).
    Given C = c the outcome is the first coordinate a in 0 .. c + 1, with
    P(a | c) = b B(c, a - 1) + (1 - b) B(c, a) and Q(a | c) = (1 - b) B(c, a - 1)
    + b B(c, a) (b = e^eps0 / (1 + e^eps0), B the Bin(c, 1/2) PMF), so the
    loss is log((b a + (1 - b)(c + 1 - a)) / ((1 - b) a + b (c + 1 - a))),
    increasing in a, within [-eps0, eps0]. C's blocks (`shuffle._blocks`)
    are charged their left end c_b (post-processing), the mass below them the
    pair at c = 0 (randomized response at eps0, which every c is a
    post-processing of); in each block the a's beyond SHUFFLE_WIDTH standard
    deviations are moved: the upper ones to loss eps0 (the largest), the
    lower ones to the smallest kept atom."""
    from fuzzpy.accounting.shuffle import _blocks, _probabilities

    if n < 2 or not 0 < eps0 <= 60:
        return None
    p_clone, b = _probabilities(eps0)
    top = math.log(b / (1 - b))  # the loss at a = c + 1 (and c = 0): eps0 up to rounding
    parts = [_block_atoms(c, mass, b, top) for c, mass in _blocks(n, p_clone)]
    losses = np.concatenate([part[0] for part in parts])
    if losses.size > MAX_ATOMS:
        return None
    errors = np.concatenate([part[1] for part in parts])
    masses = np.concatenate([part[2] for part in parts])
    return _declared(losses, errors, masses, 0.0, "shuffle")


def _log_binomial_half(c: int, j: Array) -> Array:
    """log Pr[Bin(c, 1/2) = j] for 0 <= j <= c."""
    from scipy.special import gammaln

    return gammaln(c + 1) - gammaln(j + 1) - gammaln(c - j + 1) - c * math.log(2)


def _block_atoms(c: int, mass: float, b: float, top: float) -> tuple[Array, Array, Array]:
    """(losses, their rounding bounds, P-masses) of the pair given C = c, times
    the block's mass (`shuffle_pair`)."""
    from scipy.special import bdtr, bdtrc

    top_error = 64 * ULP * (top + 1)
    if c <= 0:  # below the blocks, or c = 0: randomized response at eps0
        return np.array([-top, top]), np.full(2, top_error), np.array([(1 - b) * mass, b * mass])
    half, spread = c / 2, SHUFFLE_WIDTH * math.sqrt(c) / 2 + 2
    lo, hi = max(0, int(half - spread)), min(c + 1, int(half + spread) + 1)
    a = np.arange(lo, hi + 1, dtype=float)
    below = np.where(a >= 1, np.exp(_log_binomial_half(c, np.maximum(a - 1, 0))), 0.0)
    at = np.where(a <= c, np.exp(_log_binomial_half(c, np.minimum(a, c))), 0.0)
    p = (b * below + (1 - b) * at) * mass
    up, down = b * a + (1 - b) * (c + 1 - a), (1 - b) * a + b * (c + 1 - a)
    losses = np.log(up) - np.log(down)
    errors = 64 * ULP * (np.abs(np.log(up)) + np.abs(np.log(down)) + 1)
    # the cut tails' P-mass: at most Pr[Bin(c, 1/2) <= lo - 1] below, Pr[Bin(c, 1/2) >= hi] above
    low_tail = float(bdtr(lo - 1, c, 0.5)) if lo >= 1 else 0.0
    high_tail = float(bdtrc(hi - 1, c, 0.5)) if hi <= c else 0.0
    p[0] += low_tail * mass  # moved up to the smallest kept loss
    return np.append(losses, top), np.append(errors, top_error), np.append(p, high_tail * mass)


# ---------------------------------------------------------------- one release, summed


def single_release_epsilon(atoms: object, delta: float) -> float | None:
    """The accountant's `exact-atomic`: ONE Poisson-subsampled discrete
    Gaussian release (add/remove: both directions of
    `dgauss_subsample_pair`; replace-one: `dgauss_replace_pair`; a person's
    k rows: `dgauss_group_pair`), its
    declared atoms summed at every eps (`discrete.epsilon_for_delta`,
    certified), with no grid: the PLD's discretisation dominated small
    epsilons (sigma 5, q 0.05, shift 3 at delta 1e-2: 0.0232 where the
    atoms give 0.005). The declared atoms are a dominating pair (module
    docstring), so the figure is an upper bound; the cut tails' mass is in
    them (``tail`` only sets the window). None for anything else."""
    from fuzzpy.accounting.atoms import (
        DiscreteGaussianAtom,
        GeometricAtom,
        GroupSubsampledAtom,
        PureAtom,
        ReplaceSubsampledAtom,
        SubsampledAtom,
    )
    from fuzzpy.accounting.discrete import epsilon_for_delta

    items = list(getattr(atoms, "items", lambda: [])())
    if len(items) != 1 or items[0][1] != 1 or not 0 < delta < 1:
        return None
    atom = items[0][0]
    tail = 1e-4 * delta
    pairs: list[AtomicTails | None]
    if isinstance(atom, SubsampledAtom) and isinstance(atom.inner, DiscreteGaussianAtom):
        rate = _up(atom.rate)
        pairs = [dgauss_subsample_pair(atom.inner.sigma, atom.inner.shift, rate, tail, way) for way in (True, False)]
    elif isinstance(atom, ReplaceSubsampledAtom) and isinstance(atom.inner, DiscreteGaussianAtom):
        pairs = [dgauss_replace_pair(atom.inner.sigma, _up(atom.rate), tail, atom.inner.shift)]
    elif isinstance(atom, GroupSubsampledAtom) and isinstance(atom.inner, DiscreteGaussianAtom):
        ways = ("replace",) if atom.replace else ("remove", "add")  # a person's k rows (`dgauss_group_pair`)
        pairs = [dgauss_group_pair(atom.inner.sigma, atom.inner.shift, _up(atom.rate), atom.size, tail, way)
                 for way in ways]
    elif isinstance(atom, GroupSubsampledAtom) and isinstance(atom.inner, GeometricAtom):
        ways = ("replace",) if atom.replace else ("remove", "add")  # its PMF's mixture (`geometric_group_pair`)
        pairs = [geometric_group_pair(atom.inner.scale, atom.inner.shift, atom.rate, atom.size, way) for way in ways]
        if any(pair is None for pair in pairs):  # too many outcomes: its pure epsilon's trade-off pair
            pairs = [pure_group_pair(atom.inner.shift / atom.inner.scale, atom.rate, atom.size, way) for way in ways]
    elif isinstance(atom, GroupSubsampledAtom) and isinstance(atom.inner, PureAtom):
        ways = ("replace",) if atom.replace else ("remove", "add")  # the trade-off pair (`pure_group_pair`)
        pairs = [pure_group_pair(atom.inner.epsilon, atom.rate, atom.size, way) for way in ways]
    else:
        return None
    if any(pair is None for pair in pairs):
        return None
    return max(epsilon_for_delta(np.asarray(p.losses), np.asarray(p.masses), p.infinity, delta)
               for p in pairs if p is not None)


def _up(value: Fraction) -> float:
    """The smallest double >= an exact rate (a larger rate is less private)."""
    rounded = float(value)
    return rounded if Fraction(rounded) >= Fraction(value) else math.nextafter(rounded, math.inf)


def _tail_outside_window(losses: np.ndarray, masses: np.ndarray, k: int, s2: float, log_z: float) -> float:
    """The mass a discrete Gaussian (and each shift of it) can have outside
    the window [-k, k] on one side, added to the atom of the smallest loss
    (the pessimistic place): sum_{y >= K} f(y) / Z <= f(K - 1) / Z / (1 - r),
    r = e^{-(2K - 1) / (2 s2)} (`dgauss_replace_pair`). Returns that mass."""
    ratio = math.exp(-(2 * k - 1) / (2 * s2))
    beyond = math.exp(-((k - 1) ** 2) / (2 * s2) - log_z) / (1 - ratio) if ratio < 1 else 1.0
    masses[int(np.argmin(losses))] += beyond
    return beyond


# ---------------------------------------------------------------- a person's k rows over a pure body


@functools.lru_cache(maxsize=64)
def pure_group_pair(epsilon: Fraction, rate: Fraction, size: int, way: str) -> AtomicTails:
    """A person's k rows over a Poisson subsample (rate q) of a body that is
    eps-DP under add/remove of one row of the sample (any pure body: a
    `geometric`, a `staircase`, several draws by basic composition): a pair
    of at most 2k + 1 atoms (ours; the mixture of Balle, Barthe & Gaboardi
    2018 over the j ~ Bin(k, q) rows drawn, bounded with the trade-off
    function of pure DP of Kairouz, Oh & Viswanath 2015, as dominating pairs
    in the sense of Zhu, Dong & Wang 2022).

    Removal: given the other rows' sample S and the rows T drawn (|T| = j,
    chance w_j = C(k, j) q^j (1-q)^{k-j}), M(S + T) is (j eps)-DP against
    M(S) (group privacy, Dwork & Roth 2014, Thm 2.2), so for a set E of
    M(S)-mass p, M(S + T)(E) <= f_j(p) = min(e^{j eps} p, 1 - e^{-j eps} (1 - p))
    (applied to E and to its complement). Hence P(E) - gamma Q(E) <=
    E_S[f(p_S) - gamma p_S] <= sup_p f(p) - gamma p with f = sum_j w_j f_j,
    at every gamma >= 0. f is concave and piecewise linear with f(0) = 0,
    f(1) = 1: it is the trade-off curve of the pair whose atoms are its
    segments (Q*-mass the segment's length, P*-mass its rise, loss the log
    of its slope), and sup_p f(p) - gamma p is that pair's H_gamma. Addition:
    M(S + T)(E) >= g_j(p) = max(e^{-j eps} p, 1 - e^{j eps} (1 - p)), the pair of
    the curve (g(p), p). Replacement (both sides' rows drawn by the same
    coins, each side j eps from M(S)): P(E) <= f(p), Q(E) >= g(p), the pair
    of the curve (g(p), f(p)), whose slope f'/g' decreases (f' decreases, g'
    increases): a valid pair again. Each is at most (k eps')-DP with eps' =
    log(1 + q (e^eps - 1)), so it is never looser than the group rule's
    pure k eps' (randomized response at k eps' dominates every such pair).

    Computed in mpmath; losses and masses rounded up (`_declared`)."""
    import mpmath

    with mpmath.workprec(160):
        e, q = mpmath.mpf(epsilon.numerator) / epsilon.denominator, mpmath.mpf(rate.numerator) / rate.denominator
        w = [mpmath.binomial(size, j) * q**j * (1 - q) ** (size - j) for j in range(size + 1)]
        ups = [1 / (1 + mpmath.exp(j * e)) for j in range(1, size + 1)]  # where f_j turns
        downs = [mpmath.exp(j * e) / (1 + mpmath.exp(j * e)) for j in range(1, size + 1)]  # where g_j turns
        cuts = sorted({mpmath.mpf(0), mpmath.mpf(1), *(ups if way != "add" else []), *(downs if way != "remove" else [])})
        losses, masses = [], []
        for lo, hi in zip(cuts[:-1], cuts[1:], strict=True):
            mid = (lo + hi) / 2
            f_slope = w[0] + mpmath.fsum(w[j] * (mpmath.exp(j * e) if mid < ups[j - 1] else mpmath.exp(-j * e))
                                         for j in range(1, size + 1))
            g_slope = w[0] + mpmath.fsum(w[j] * (mpmath.exp(-j * e) if mid < downs[j - 1] else mpmath.exp(j * e))
                                         for j in range(1, size + 1))
            rise = f_slope if way != "add" else mpmath.mpf(1)
            run = g_slope if way != "remove" else mpmath.mpf(1)
            losses.append(float(mpmath.log(rise / run)))
            masses.append(float(rise * (hi - lo)))
    loss_array = np.asarray(losses, dtype=float)
    errors = 4 * ULP * (np.abs(loss_array) + 1)  # one rounding of an mpmath value to a double, with margin
    return _declared(loss_array, errors, np.asarray(masses, dtype=float), 0.0, f"pure group {way}")


@functools.lru_cache(maxsize=64)
def geometric_group_pair(scale: Fraction, shift: int, rate: Fraction, size: int, way: str) -> AtomicTails | None:
    """A person's k rows over a Poisson subsample of one `geometric[b]`
    release (two-sided geometric, f(y) proportional to a^|y|, a = e^{-1/b})
    of an integer query moving by at most ``shift`` per row: the mixture
    pair on the PMF, exactly as `dgauss_group_pair` for the discrete
    Gaussian (w_j = C(k, j) q^j (1-q)^{k-j}):

        remove   P = sum_j w_j f(. - j s)   against  Q = f,
        add      P = f                      against  Q = sum_j w_j f(. - j s),
        replace  P = sum_j w_j f(. - j s)   against  Q = sum_j w_j f(. + j s).

    The proof of `dgauss_group_pair` carries over word for word: f is even
    and f(y - a) / f(y) = a^{|y - a| - |y|} is non-decreasing in y for a >= 0,
    so the randomised upper half-line test is most powerful against every
    positive shift, one test for every j (Balle, Barthe & Gaboardi 2018 for
    the mixture; Zhu, Dong & Wang 2022 for dominating pairs). Outside the
    centres' span every law is a^{distance} times a constant, so the loss is
    constant there: the two tails are one atom each, their masses in closed
    form (P(Y <= -t) = a^t / (1 + a) for t >= 0); no cut, no window.
    Computed in mpmath, declared upwards (`_declared`). None past
    MAX_ATOMS outcomes."""
    import mpmath

    if shift < 1 or size < 1 or not 0 < rate < 1 or scale <= 0 or 2 * size * shift + 3 > MAX_ATOMS:
        return None
    with mpmath.workprec(160):
        a = mpmath.exp(-mpmath.mpf(scale.denominator) / scale.numerator)
        q = mpmath.mpf(rate.numerator) / rate.denominator
        w = [mpmath.binomial(size, j) * q**j * (1 - q) ** (size - j) for j in range(size + 1)]
        moved = [(w[j], j * shift) for j in range(size + 1)]
        point = [(mpmath.mpf(1), 0)]
        p_law, q_law = {"remove": (moved, point), "add": (point, moved),
                        "replace": (moved, [(c, -m) for c, m in moved])}[way]
        centres = [m for _, m in p_law + q_law]
        lo, hi = min(centres), max(centres)

        def below(law: list, t: int) -> mpmath.mpf:  # P(Y <= t), t <= every centre
            return mpmath.fsum(c * a ** (m - t) / (1 + a) for c, m in law)

        def above(law: list, t: int) -> mpmath.mpf:  # P(Y >= t), t >= every centre
            return mpmath.fsum(c * a ** (t - m) / (1 + a) for c, m in law)

        def at(law: list, y: int) -> mpmath.mpf:
            return mpmath.fsum(c * (1 - a) / (1 + a) * a ** abs(y - m) for c, m in law)

        cells = [(below(p_law, lo), below(q_law, lo))]
        cells += [(at(p_law, y), at(q_law, y)) for y in range(lo + 1, hi)]
        cells += [(above(p_law, hi), above(q_law, hi))]
        losses = [float(mpmath.log(p / r)) for p, r in cells]
        masses = [float(p) for p, _ in cells]
    loss_array = np.asarray(losses, dtype=float)
    errors = 4 * ULP * (np.abs(loss_array) + 1)  # one rounding of an mpmath value to a double, with margin
    return _declared(loss_array, errors, np.asarray(masses, dtype=float), 0.0, f"geometric group {way}")
