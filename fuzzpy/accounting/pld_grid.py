"""A pair's privacy loss on a grid, pessimistic even in floating point.

`discretise` puts the P-distribution of the loss L of a (possibly
subsampled) dominating pair on the grid {i * h}. What makes the result an
upper bound: writing x = e^{-L}, the hockey-stick divergence at e^eps of a
product of pairs is E[(1 - e^eps x_1 ... x_k)_+] under the product of the
P-laws, an expectation of a function that is

* decreasing in each x_i (so moving mass to a larger loss can only raise it),
* convex in each x_i (so a spread of mass that keeps its P-mass and its mean
  of x -- its Q-mass -- can only raise it, by Jensen's inequality, one
  factor at a time),
* and non-negative (so adding P-mass anywhere can only raise it).

Each cell (a, b] between consecutive nodes (grid points: every grid point,
or every m-th one where the planner strides over negligible tail mass) gets
its mass spread onto its end points keeping its P- and Q-mass ("connect the
dots", Doroshenko, Ghazi, Kamath, Kumar & Manurangsi 2022; the argument is
per cell, any width): a share y* = (A - B e^a) / (1 - e^{-(b - a)}) of its
P-mass A (Q-mass B) goes to b, the rest to a. In floating point A, B and the cell
ends are known only within error bounds (`pld_pairs` error model); so we
put an upper bound of y* at b and an upper bound of A minus that at a, which
is the exact spread followed by moving mass up and adding mass -- all three
operations above. Mass below the grid is moved up to its first point, mass
above it to +infinity. The cells' ends may lie up to `shift` away from the
nominal grid points; declaring every loss `shift` larger makes that a move
up as well, and the composition adds the shifts.
"""

from __future__ import annotations

import math
from functools import cached_property, lru_cache
from typing import TYPE_CHECKING

import numpy as np

from fuzzpy.accounting.pld_atomic import AtomicTails
from fuzzpy.accounting.pld_group import GroupTails, LaplaceGroupTails, ReplaceGroupTails
from fuzzpy.accounting.pld_pairs import FLOOR, ULP, LossTails

if TYPE_CHECKING:
    from fuzzpy.accounting.pld_symmetric import SymmetrisedTails
from fuzzpy.accounting.pld_replace import ReplaceTails
from fuzzpy.support.records import frozen

if TYPE_CHECKING:
    from typing import TypeAlias

    #: every pair the PLD composes, as loss tails
    PairTails: TypeAlias = (LossTails | SymmetrisedTails | ReplaceTails | GroupTails | ReplaceGroupTails
                            | LaplaceGroupTails | AtomicTails)


#: The most grid cells one part's discretisation may hold. A window sized by a
#: tiny answer (a few releases at a delta near 1: interval ~1e-14) would span a
#: loss range of width 2 in ~1e14 cells (review s30d: "Unable to allocate 954
#: TiB"); beyond this the PLD proves nothing here (`GridTooLarge`) and the
#: accountant's other methods answer alone (infinite when none does).
MAX_GRID_CELLS = 1 << 22


class GridTooLarge(ValueError):
    """A discretisation would need more than `MAX_GRID_CELLS` cells."""


@frozen
class GridPLD:
    """Upper bounds of the P-masses at losses (offset + i) * interval (each
    loss possibly up to ``shift`` larger), and of the mass at +infinity."""

    interval: float
    offset: int
    probs: np.ndarray
    infinity_mass: float
    shift: float

    @cached_property
    def losses(self) -> np.ndarray:
        values = (self.offset + np.arange(self.probs.size)) * self.interval
        values.setflags(write=False)  # computed once, shared by every reader
        return values

    @cached_property
    def log_probs(self) -> np.ndarray:
        """log of ``probs`` (-inf at empty cells), computed once."""
        with np.errstate(divide="ignore"):
            values = np.log(self.probs)
        values.setflags(write=False)
        return values

    @property
    def last(self) -> int:
        return self.offset + self.probs.size - 1

    def log_mgf(self, orders: np.ndarray) -> np.ndarray:
        """An upper bound of log E[e^{t L}; L finite] for each t in ``orders``
        (the sum of non-negative terms is computed to a relative 1e-12)."""
        orders = np.atleast_1d(np.asarray(orders, dtype=float))
        held = self.probs > 0  # empty cells add nothing (randomized response fills a few)
        if not held.any():
            return np.full(orders.shape, -np.inf)
        total = log_sum_exp_rows(self.log_probs[held], self.losses[held], orders)
        return total + 1e-12 * (1 + np.abs(total))


def log_sum_exp_rows(log_probs: np.ndarray, losses: np.ndarray, orders: np.ndarray) -> np.ndarray:
    """log sum_j e^{log p_j + t l_j} for each t in ``orders``: the row maximum
    taken out, then exp and sum (computed in place: the (orders x cells)
    temporaries of the plain expression, a few hundred kB each, cost more in
    page faults than the arithmetic; the same operations, the same result)."""
    exponents = np.multiply.outer(orders, losses)
    exponents += log_probs
    top = np.max(exponents, axis=1)
    exponents -= top[:, None]
    np.exp(exponents, out=exponents)
    return top + np.log(np.sum(exponents, axis=1))


def upper(value: np.ndarray, rel: np.ndarray) -> np.ndarray:
    """An upper bound of the exact value behind a computed one."""
    return np.maximum(value, 0.0) * (1 + 2 * rel) + FLOOR


def lower(value: np.ndarray, rel: np.ndarray) -> np.ndarray:
    return np.maximum(np.maximum(value, 0.0) * (1 - 2 * rel) - FLOOR, 0.0)


Strides = tuple[tuple[float, int], ...]


@lru_cache(maxsize=256)
def discretise(
    tails: PairTails, interval: float, lo: float, hi: float, strides: Strides = ()
) -> GridPLD:
    """The pessimistic grid PLD of ``tails`` on [lo, hi] (clipped to the pair's
    loss range): mass below lo moved up to the grid, mass above hi to +inf.
    ``strides`` ((loss, m), ...), losses and m increasing: above each loss
    the cells span m grid steps (connect-the-dots on any cells whose ends
    are grid points is pessimistic; the planner strides only where the
    mass is negligible, `pld_plan.Planner.strides`)."""
    range_lo, range_hi = tails.loss_range()
    lo, hi = max(lo, range_lo), min(hi, range_hi)
    first = math.floor(lo / interval)
    last = max(math.ceil(hi / interval), first + 1)
    if last * interval < hi:
        # hi / interval rounded down onto an integer (a lattice interval
        # eps0 / n): the node must reach hi, or the atom of a Laplace loss
        # at +eps0 is counted at +infinity (valid, but delta >= half the mass)
        last += 1
    if last - first > MAX_GRID_CELLS:
        raise GridTooLarge(f"a grid of {last - first} cells (at most {MAX_GRID_CELLS})")
    indices = _node_indices(first, last, interval, strides)
    nodes = indices * interval
    t = tails.tails(nodes)
    cell_p_up, _ = _cell_bounds(t.p_sf, t.p_cdf, t.rel)
    _, cell_q_lo = _cell_bounds(t.q_sf, t.q_cdf, t.rel)
    shift = tails.threshold_error(nodes) + 2 * ULP * float(np.max(np.abs(nodes)))
    widths = np.diff(indices) * interval  # exact: integers times the interval, as the nodes
    upper_share = _upper_share(cell_p_up, cell_q_lo, nodes, widths, shift)
    probs = np.zeros(last - first + 1)
    positions = (indices - first).astype(np.intp)
    probs[positions[:-1]] += cell_p_up - upper_share  # each position once per line
    probs[positions[1:]] += upper_share
    probs[0] += float(upper(t.p_cdf[:1], t.rel[:1])[0])  # below the grid: moved up
    infinity = float(upper(t.p_sf[-1:], t.rel[-1:])[0])
    if t.p_sf[-1] <= 0 and _no_mass_above(tails, hi):
        infinity = 0.0
    start, kept = _trim(probs)
    return GridPLD(interval, first + start, kept, min(infinity, 1.0), shift)


def _node_indices(first: int, last: int, interval: float, strides: Strides) -> np.ndarray:
    """Grid indices first..last, every m-th one above each stride's loss
    (segment starts aligned to multiples of m; first and last always kept)."""
    pieces, start, step = [], first, 1
    for loss, m in strides:
        begin = max(math.ceil(loss / interval / m) * m, start)
        if begin >= last:
            break
        pieces.append(np.arange(start, begin, step))
        start, step = begin, m
    if not pieces:
        return np.arange(first, last + 1, dtype=float)
    pieces.append(np.arange(start, last, step))
    pieces.append(np.array([last]))
    return np.concatenate(pieces).astype(float)


def _no_mass_above(tails: PairTails, hi: float) -> bool:
    """The pair has no finite loss above hi and no mass at +inf, exactly (a
    bounded loss: Laplace, randomized response; not an (eps, delta) pair)."""
    base = tails.base
    bounded = not hasattr(base, "mu") and getattr(base, "delta", 0.0) == 0.0
    return bounded and hi >= tails.loss_range()[1]


def _cell_bounds(sf: np.ndarray, cdf: np.ndarray, rel: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Upper and lower bounds of each cell's mass, from whichever tail is
    small (the difference of two tails, each known to rel; the subtraction
    is exact or adds one rounding)."""
    use_sf = sf[:-1] < 0.5
    a_hi, b_hi = np.where(use_sf, sf[:-1], cdf[1:]), np.where(use_sf, sf[1:], cdf[:-1])
    r = np.maximum(rel[:-1], rel[1:])
    diff = a_hi - b_hi
    slack = 2 * r * (np.abs(a_hi) + np.abs(b_hi)) + ULP * np.abs(diff) + 2 * FLOOR
    return np.maximum(diff + slack, 0.0), np.maximum(diff - slack, 0.0)


def _upper_share(
    cell_p_up: np.ndarray, cell_q_lo: np.ndarray, nodes: np.ndarray, widths: np.ndarray, shift: float
) -> np.ndarray:
    """An upper bound of y* = (A - B e^a) / (1 - e^{-h}) for every cell whose
    true ends a', b' lie within ``shift`` of the nominal ones, clipped to
    [0, A_up]. The exact y* is at most (A_up - B_lo e^{a - shift}) / den with
    den = 1 - e^{-(w - 2 shift)}, w the cell's width; each float operation below adds at most a
    few ulp, absorbed by the factor (1 + 16 ulp) and by rounding den down."""
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        # B e^{a}: at most A in exact arithmetic; in log space so that a > 709
        # with a tiny B does not overflow
        q_scaled = np.exp(np.log(cell_q_lo) + nodes[:-1] - shift) * (1 - 8 * ULP)
        numerator = cell_p_up - q_scaled
        denominator = -np.expm1(-(widths - 2 * shift)) * (1 - 8 * ULP)
        share = np.maximum(numerator, 0.0) / denominator * (1 + 16 * ULP)
    share = np.where(np.isfinite(share), share, cell_p_up)
    return np.clip(share, 0.0, cell_p_up)


def _trim(probs: np.ndarray) -> tuple[int, np.ndarray]:
    nonzero = np.flatnonzero(probs > 0)
    if nonzero.size == 0:
        return 0, probs[:1]
    return int(nonzero[0]), probs[nonzero[0] : nonzero[-1] + 1]
