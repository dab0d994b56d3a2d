"""Sizing a PLD computation from the events and the target delta.

Nothing here affects validity -- every choice (grid spacing, tilt, window,
truncation) gives a proven upper bound -- only tightness and speed. The
choices come from a coarse pessimistic grid of each part's loss
(`Summary`) and Chernoff's bound P(S >= u) <= e^{Lambda(t) - tu}, with
Lambda(t) = log E[e^{tS}] the composed log moment generating function:

* each part keeps the loss range holding all but ETA * delta / (parts * n)
  of its mass (read off the coarse grid: a heavy upper tail, as subsampled
  Gaussians have, makes Chernoff's bound on a single step useless), and
  Lambda is that of the truncated parts;
* the window holds all but ETA * delta of the composed mass on either side;
* the tilt t: the FFT's absolute error, untilted, is about
  E e^{Lambda(t) - t eps} per cell near the answer eps, smallest near the
  Renyi-optimal order; but mass above the window wraps around onto its
  bottom multiplied by e^{t width} (and mass below onto its top divided by
  it), so the window is widened until the wrapped mass is below
  WRAP_SHARE * delta,
  and the tilt is lowered while that widening costs more than a factor
  WRAP_ALLOWANCE in points;
* grid spacing h: connect-the-dots spreads each step's loss by at most
  h^2/4 (h^2/6 on average), kept below VARIANCE_TOLERANCE of the variance,
  within MAX_POINTS points; on the lattice of randomized response when all
  atoms share one.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import field
from functools import cache, lru_cache
from typing import TYPE_CHECKING, overload

import numpy as np

from fuzzpy.accounting.pld_grid import GridPLD, Strides, discretise, log_sum_exp_rows
from fuzzpy.accounting.pld_pairs import GaussianPair, LaplacePair, RandomizedResponsePair
from fuzzpy.support.records import frozen

if TYPE_CHECKING:
    from fuzzpy.accounting.pld_grid import PairTails

ETA = 1e-9  # share of delta spent on each truncation
# share of delta the wrapped-around mass may add (each side). Wrapped mass only
# adds to the bound (`pld_fft`), so this costs tightness, never validity: about
# a relative 1e-6 of delta, i.e. ~1e-6 / t of epsilon at tilt t; 1e-9 widened
# the 1e-15 windows past a power of two (2x the FFT) for no visible gain.
WRAP_SHARE = 1e-6
VARIANCE_TOLERANCE = 1e-5  # grid spread allowed, relative to the loss variance
# the same for Gaussian-only directions (DP-SGD): their epsilon moves by about
# half the relative spread (measured: 1e-4 moved it by at most 7e-5 relative on
# the DP-SGD grid, and cut the FFT from 2^19 to 2^17 points at large sigma and
# many steps, where 1e-5 was 2-3x slower than dp-accounting's PLD)
SMOOTH_VARIANCE_TOLERANCE = 1e-4
# the same for the first, coarse pass: only its answer is used, to place the fine
# window (1e-4 cost a tenth of a short DP-SGD run at 1e-15 and changed no answer)
HINT_TOLERANCE = 4e-4
MAX_POINTS = 1 << 19
HINT_POINTS = 1 << 16
MIN_POINTS = 1 << 16  # below this many points a finer grid costs next to nothing
# Gaussian-only directions (DP-SGD): a smooth density, whose connect-the-dots
# spread the variance criterion governs; atoms (Laplace, randomized response)
# keep the floor above. Measured: 2^16 points cost 3-4x dp-accounting's time
# on short DP-SGD runs, and 2^12 keeps them within 1e-5 of the reference.
SMOOTH_MIN_POINTS = 1 << 12
WRAP_ALLOWANCE = 2.0
# smooth directions: a window needing up to this factor more cells than a
# power of two gets a grid that much coarser instead of twice the FFT length
# (the connect-the-dots spread grows by FIT_SLACK^2 at most; tightness only)
FIT_SLACK = 1.05
# smooth directions whose window needs more than SMOOTH_FFT_POINTS cells at the
# tolerance above (heavy upper tails: sigma 50, q 0.001 needed 2^17-2^18) get a
# grid up to SMOOTH_STRETCH times coarser, as far as fits SMOOTH_FFT_POINTS (the
# spread grows by SMOOTH_STRETCH^2 at most: measured <= 1.5e-3 relative on the DP-SGD
# grid of bench/dpsgd_speed.py, 2-4x faster there; tightness only). The coarse
# pass likewise, at most its factor coarser, as far as fits half that.
SMOOTH_STRETCH = 8.0
SMOOTH_FFT_POINTS = 1 << 15
STRIDES = (2, 4, 8, 16, 32, 64)  # cell widths (in grid steps) allowed in a smooth part's tail
STRIDE_SHARE = 1e-8  # tilted tail share times m^2 (`Planner.strides`)
ORDERS = np.geomspace(1e-3, 1e3, 49)
_PLAN_CELLS = 1024  # planning only (validity never depends on it); 4096 cost a third of a short DP-SGD run

Direction = Sequence[tuple["PairTails", int]]


@frozen
class Summary:
    """A part's loss on a coarse pessimistic grid, its variance and atoms."""

    grid: GridPLD
    variance: float
    lattice: float | None  # randomized response: the loss takes only the values +-lattice
    atoms: float | None  # Laplace: atoms at +-atoms besides a density
    full_log_mgf: np.ndarray  # an upper bound of log E[e^{tL}; L finite] at ORDERS
    _truncated: dict = field(default_factory=dict, compare=False, hash=False, repr=False)

    def cuts(self, log_share: float) -> tuple[float, float]:
        """The loss range outside which the grid holds at most e^log_share on each side."""
        probs, losses = self.grid.probs, self.grid.losses
        share = math.exp(log_share)
        above = np.cumsum(probs[::-1])[::-1] + self.grid.infinity_mass  # P(L >= l_j)
        below = np.cumsum(probs)  # P(L <= l_j)
        top_index = int(np.argmax(above <= share)) if np.any(above <= share) else probs.size - 1
        bottom_index = max(int(np.searchsorted(below, share, side="right")) - 1, 0)
        return float(losses[bottom_index]), float(losses[max(top_index, bottom_index)])

    def log_mgf(self, orders: np.ndarray, lo: float, hi: float) -> np.ndarray:
        """log E[e^{tL}] of the part truncated to [lo, hi] (mass below moved up)."""
        key = (orders[0], orders.size, lo, hi)
        if key not in self._truncated:
            self._truncated[key] = self._log_mgf(orders, lo, hi)
        return self._truncated[key]

    def _log_mgf(self, orders: np.ndarray, lo: float, hi: float) -> np.ndarray:
        grid_losses, grid_probs = self.grid.losses, self.grid.probs
        keep = (grid_losses >= lo) & (grid_losses <= hi) & (grid_probs > 0)  # empty cells add 0
        losses = np.append(grid_losses[keep], lo)
        probs = np.append(grid_probs[keep], grid_probs[grid_losses < lo].sum())
        with np.errstate(divide="ignore", invalid="ignore"):
            return log_sum_exp_rows(np.log(probs), losses, orders)


@lru_cache(maxsize=256)
def summary(tails: PairTails) -> Summary:
    lo, hi = tails.loss_range()
    lo = lo if math.isfinite(lo) else -1e3
    coarse = discretise(tails, max((hi - lo) / _PLAN_CELLS, 1e-12), lo, hi)
    bulk_lo, bulk_hi = _bulk(coarse)
    fine = coarse
    if bulk_hi - bulk_lo < (hi - lo) / 64:  # the mass sits in a few coarse cells: zoom in
        fine = discretise(tails, max((bulk_hi - bulk_lo) / _PLAN_CELLS, 1e-12), bulk_lo, bulk_hi)
    losses, probs = fine.losses, fine.probs
    mean = float(np.dot(losses, probs) / probs.sum())
    spread = fine.interval**2 / 6  # what the coarse grid itself added, on average
    variance = max(float(np.dot((losses - mean) ** 2, probs) / probs.sum()) - spread, 0.0)
    base, whole = tails.base, tails.rate >= 1
    lattice = None
    if whole and isinstance(base, RandomizedResponsePair) and base.delta == 0:
        lattice = base.epsilon
    atoms = base.epsilon if whole and isinstance(base, LaplacePair) else None
    # the coarse grid is pessimistic, so its moments bound the pair's for t > 0
    return Summary(coarse, variance, lattice, atoms, coarse.log_mgf(ORDERS))


def _bulk(grid: GridPLD) -> tuple[float, float]:
    """The loss range holding all but 1e-12 of a grid's mass."""
    cumulative = np.cumsum(grid.probs) / grid.probs.sum()
    first = int(np.searchsorted(cumulative, 1e-12))
    last = int(np.searchsorted(cumulative, 1 - 1e-12))
    losses = grid.losses
    return float(losses[max(first - 1, 0)]), float(losses[min(last + 1, losses.size - 1)])


@frozen
class Plan:
    interval: float
    tilt: float
    low: int  # the window's first grid index
    size: int  # the window's length, a power of two
    cuts: tuple[tuple[float, float], ...]  # per part: the loss range kept
    orders_above: np.ndarray  # Chernoff orders for the mass above the window
    orders_below: np.ndarray  # and below it
    strides: tuple[Strides, ...] = ()  # per part: coarser cells over its tail (`Planner.strides`)


class Planner:
    """Plans for one direction (a list of parts) at one target delta."""

    def __init__(self, direction: Direction, delta: float) -> None:
        self.summaries = [summary(tails) for tails, _ in direction]
        self.counts = [n for _, n in direction]
        self.delta = delta
        smooth = all(isinstance(tails.base, GaussianPair) for tails, _ in direction)
        self.min_points = SMOOTH_MIN_POINTS if smooth else MIN_POINTS
        self.log_share = math.log(ETA * delta)
        self.log_wrap = math.log(WRAP_SHARE * delta)
        parts = len(self.counts)
        self.cuts = tuple(
            s.cuts(self.log_share - math.log(parts * n))
            for s, n in zip(self.summaries, self.counts, strict=True)
        )
        t = ORDERS
        self.log_mgf = self._composed(t)
        self.log_mgf_neg = self._composed(-t)
        self.support = (
            sum(n * lo for (lo, _), n in zip(self.cuts, self.counts, strict=True)),
            sum(n * hi for (_, hi), n in zip(self.cuts, self.counts, strict=True)),
        )
        # the Renyi / Chernoff epsilon (Canonne, Kamath & Steinke 2020, Prop. 12)
        renyi = (self.log_mgf - math.log(delta) + t * np.log(t) - (t + 1) * np.log1p(t)) / t
        self.renyi_tilt = float(t[int(np.argmin(renyi))])
        self.renyi_epsilon = float(np.min(renyi))
        above = (self.log_mgf - self.log_share) / t
        below = (self.log_share - self.log_mgf_neg) / t
        self.top = min(float(np.min(above)), self.support[1])
        self.bottom = max(float(np.max(below)), self.support[0])
        self.orders_above = _near(t, int(np.argmin(above)))
        self.orders_below = _near(t, int(np.argmax(below)))

    def renyi_bound(self) -> float:
        """`renyi_bound` of this planner's direction."""
        return _renyi_bound(self._pairs(), self.delta)

    def estimate(self) -> float:
        """A rough lower estimate of the answer (the Renyi bound is rarely
        more than twice it, except with heavy tails)."""
        return max(self.renyi_epsilon / 2, min(0.0, self.bottom))

    def _pairs(self) -> list[tuple[Summary, int]]:
        return list(zip(self.summaries, self.counts, strict=True))

    def _composed(self, orders: np.ndarray) -> np.ndarray:
        return sum(
            n * s.log_mgf(orders, lo, hi)
            for s, n, (lo, hi) in zip(self.summaries, self.counts, self.cuts, strict=True)
        )

    # -- the two passes

    def needs_hint(self, reference: float) -> bool:
        """Whether mass above the window, wrapped around at the Renyi tilt,
        would force a much wider window than the plain one when the answer
        is ``reference``: then a coarse pass should find the answer first."""
        if self.support[1] <= self.top:
            return False
        plain = self._window(self.renyi_tilt, reference, wrap=False)
        wrapped = self._window(self.renyi_tilt, reference, wrap=True)
        return wrapped[1] - wrapped[0] > 1.5 * (plain[1] - plain[0])

    def coarser_smooth(self) -> bool:
        """Whether `final` plans this direction on a coarser grid than ``fine=True``."""
        smooth = self.min_points == SMOOTH_MIN_POINTS
        return smooth and SMOOTH_VARIANCE_TOLERANCE > VARIANCE_TOLERANCE

    def hint(self) -> Plan:
        """A coarse plan: the Renyi tilt, a window reaching down to 0."""
        lo, hi = self._window(self.renyi_tilt, 0.0, wrap=False)
        interval = self._interval(HINT_TOLERANCE, hi - lo, HINT_POINTS)
        if self.coarser_smooth():
            stretched = min(SMOOTH_STRETCH / 2 * interval, (hi - lo) / (SMOOTH_FFT_POINTS // 2 - 8))
            interval = max(interval, stretched)
        return self._plan(interval, self.renyi_tilt, lo, hi)

    def final(self, epsilon: float | None, fine: bool = False) -> Plan:
        """The fine plan, knowing roughly the answer (or not, when the window
        at the Renyi tilt needs no widening): the largest tilt up to the
        Renyi one whose wrap-around widening stays within WRAP_ALLOWANCE.
        ``fine``: Gaussian-only directions at VARIANCE_TOLERANCE too."""
        reference = None
        if epsilon is not None:
            reference = max(epsilon * (1 - 1e-3) - 1e-9, min(0.0, self.bottom))
        plain_lo, plain_hi = self._window(self.renyi_tilt, reference, wrap=False)
        smooth = self.min_points == SMOOTH_MIN_POINTS
        tolerance = SMOOTH_VARIANCE_TOLERANCE if smooth and not fine else VARIANCE_TOLERANCE
        interval = self._interval(tolerance, plain_hi - plain_lo, MAX_POINTS)
        allowed = max(WRAP_ALLOWANCE * (plain_hi - plain_lo), 1024 * interval)
        choices, skipped = [], []
        for t in ORDERS[self.renyi_tilt * 1.0001 >= ORDERS][::-1]:
            window = self._window(float(t), reference, wrap=True, within=allowed)
            if window is None:  # certainly wider than allowed: its width only if none fits
                skipped.append(float(t))
                continue
            lo, hi = window
            choices.append((hi - lo, float(t), lo, hi))
            if hi - lo <= allowed:
                break
        fits = [c for c in choices if c[0] <= allowed]
        for t in skipped if not fits else ():
            lo, hi = self._window(t, reference, wrap=True)
            choices.append((hi - lo, t, lo, hi))
        _, tilt, lo, hi = fits[0] if fits else min(choices)
        # the window's ends add up to 3 cells (`_plan`): sized for MAX_POINTS - 8,
        # the FFT length stays MAX_POINTS (a width of exactly MAX_POINTS cells doubled it)
        interval = max(interval, (hi - lo) / (MAX_POINTS - 8))
        if smooth and not fine and self.coarser_smooth():
            stretched = min(SMOOTH_STRETCH * interval, (hi - lo) / (SMOOTH_FFT_POINTS - 8))
            interval = max(interval, stretched)
        if self.min_points == SMOOTH_MIN_POINTS:
            # a window just over a power of two: a slightly coarser grid halves the FFT
            shorter = _length(hi - lo, interval) // 2
            if shorter >= 1024 and (hi - lo) / (shorter - 8) <= FIT_SLACK * interval:
                interval = (hi - lo) / (shorter - 8)
        return self._plan(interval, tilt, lo, hi)

    # -- pieces

    @overload
    def _window(self, tilt: float, reference: float | None, wrap: bool) -> tuple[float, float]: ...

    @overload
    def _window(
        self, tilt: float, reference: float | None, wrap: bool, within: float
    ) -> tuple[float, float] | None: ...

    def _window(
        self, tilt: float, reference: float | None, wrap: bool, within: float = math.inf
    ) -> tuple[float, float] | None:
        """[lo, hi]: all but ETA delta of the mass above hi; below lo either
        that too or (mass wrapping onto the top divided by e^{t W}) at most
        WRAP_SHARE delta; reaching down to the reference (the answer) if given; and,
        with ``wrap``, wide enough that mass above it wrapping onto the bottom
        lands below the reference or is harmless. None when that width is
        certainly more than ``within`` (`_wrap_width`)."""
        hi = self.top
        lo = self._lowest(tilt, hi)
        if reference is not None:
            lo = min(lo, reference)
        if wrap and self.support[1] > hi:
            # mass beyond reference + W lands above the reference times e^{t W}
            base = lo if reference is None else reference
            width = self._wrap_width(tilt, base, hi - lo, max(self.support[1] - lo, hi - lo), within)
            if width is None:
                return None
            lo = min(lo, hi - width)
        return lo, max(hi, lo + 1e-9)

    def _wrap_width(
        self, tilt: float, base: float, least: float, most: float, within: float = math.inf
    ) -> float | None:
        """The smallest width W in [least, most] found with
        t W + log P(S > base + W) <= log(WRAP_SHARE delta): on a geometric grid,
        then on a linear one between the last failing and first passing
        width (a coarse grid alone overshoots by up to its ratio, which can
        double the FFT length). None, without the linear search, when the
        answer is certainly above ``within`` (a relative 1e-9 to spare)."""
        def fits(widths: np.ndarray) -> np.ndarray:
            return tilt * widths + self._log_tail(base + widths) <= self.log_wrap

        widths = np.geomspace(least, most + 1e-9, 24)  # 48 + 16 cost a fifth of a short DP-SGD run
        fine = fits(widths)
        beyond = within * (1 + 1e-9)
        if not np.any(fine):
            return None if widths[-1] > beyond else float(widths[-1])
        index = int(np.argmax(fine))
        if index == 0:
            return float(widths[0])
        if widths[index - 1] > beyond:  # the answer lies above widths[index - 1]
            return None
        widths = np.linspace(widths[index - 1], widths[index], 33)[1:]
        return float(widths[int(np.argmax(fits(widths)))])

    def _lowest(self, tilt: float, hi: float) -> float:
        """The highest window bottom lo for which the mass below lo either
        is below ETA delta (``bottom``) or, wrapping onto the top, shrinks by
        e^{-t (hi - lo)} under WRAP_SHARE delta: with Chernoff's lower tail
        P(S < lo) <= e^{Lambda(-s) + s lo}, that is
        min_s Lambda(-s) + s lo - t (hi - lo) <= log(WRAP_SHARE delta).
        (Planning only: wrapped mass only adds to the bound, `pld_fft`.)"""
        plain = max(self.bottom, hi + self.log_wrap / tilt)
        if plain >= hi or self.bottom >= plain:
            return plain
        candidates = np.linspace(plain, min(hi, max(self.bottom, plain + 0.5 * (hi - plain))), 33)
        s = ORDERS[:, None]
        log_below = np.min(self.log_mgf_neg[:, None] + s * candidates[None, :], axis=0)
        fine = np.minimum(log_below, 0.0) - tilt * (hi - candidates) <= self.log_wrap
        return float(candidates[np.flatnonzero(fine)[-1]]) if np.any(fine) else plain

    def _log_tail(self, u: np.ndarray) -> np.ndarray:
        """log of an upper bound of P(S > u): Chernoff's, or, for the part with
        the heaviest tail, splitting on how many (j) of its n steps exceed a
        level b, each term with its own Chernoff order:
        sum_j C(n, j) min_t e^{-tu} E[e^{tL}; L > b]^j E[e^{tL}; L <= b]^{n-j} ...
        -- a few big jumps are what makes such a tail."""
        t = ORDERS[:, None]
        tu = t * u[None, :]
        best = np.min(self.log_mgf[:, None] - tu, axis=0)
        split = self._tail_split()
        if split is None:
            return best
        exponent, log_binomials, rare = split
        # orders last: the minimum over them runs along contiguous memory (the
        # same values as over axis 2 of exponent[..., None] - tu, a fifth faster)
        tu_last = np.multiply.outer(u, ORDERS)
        terms = log_binomials + np.min(exponent[:, :, None, :] - tu_last, axis=3)
        if rare is not None:
            rare_terms = np.broadcast_to(rare, (rare.shape[0], 1, u.size))
            terms = np.concatenate([terms, rare_terms], axis=1)
        return np.minimum(best, np.min(np.logaddexp.reduce(terms, axis=1), axis=0))

    @cache  # noqa: B019 - one planner per direction and delta; `_log_tail` asks often
    def _tail_split(self) -> tuple[np.ndarray, np.ndarray, np.ndarray | None] | None:
        """`_log_tail`'s pieces that do not depend on u: the exponents of
        its terms (axes level, j, order), log C(n, j), and the rare-jumps term."""
        heavy = max(range(len(self.counts)), key=lambda i: self.cuts[i][1])
        levels = self._levels(heavy)
        if not levels:
            return None
        summary_h, n, (lo, hi) = self.summaries[heavy], self.counts[heavy], self.cuts[heavy]
        rest = self.log_mgf - n * summary_h.log_mgf(ORDERS, lo, hi)
        # all levels b and counts j at once: axes (level, j, order, u)
        log_above = np.array([level[0] for level in levels])[:, None, None]
        small = np.array([level[1] for level in levels])[:, None, :]
        big = np.array([level[2] for level in levels])[:, None, :]
        j = np.arange(min(n, 6) + 1)
        exponent = (n - j)[None, :, None] * small + j[None, :, None] * big + rest
        log_binomials = np.array([_log_binomial(n, i) for i in j])[None, :, None]
        rare = _log_binomial(n, 7) + 7 * log_above if n > 6 else None
        return exponent, log_binomials, rare

    @cache  # noqa: B019 - one planner per direction and delta
    def _levels(self, index: int) -> tuple[tuple[float, np.ndarray, np.ndarray], ...]:
        """(log P(b < L), log E[e^{tL}; L <= b], log E[e^{tL}; b < L]) for a
        few levels b of a part (truncated to its cuts; the mass below is moved
        up to the lowest cut, as in `Summary.log_mgf`). One log-sum-exp per
        segment between consecutive levels, combined by logaddexp (the same
        sums as one log-sum-exp per level and side, a few times faster)."""
        summary_i, (lo, hi) = self.summaries[index], self.cuts[index]
        losses, probs = summary_i.grid.losses, summary_i.grid.probs  # losses ascending
        bounds = np.linspace(lo, hi, 6)[1:-1]
        first, last = np.searchsorted(losses, [lo, hi], side="left"), np.searchsorted(losses, hi, "right")
        # segment k: losses in (b_{k-1}, b_k] (the first from lo, the last to hi)
        edges = [int(first[0]), *np.searchsorted(losses, bounds, side="right").tolist(), int(last)]
        exponents = np.multiply.outer(ORDERS, losses)
        exponents += summary_i.grid.log_probs
        below = float(probs[: edges[0]].sum())
        parts, masses = [], []
        for k in range(bounds.size + 1):
            start, stop = edges[k], max(edges[k + 1], edges[k])
            chosen = exponents[:, start:stop]
            if k == 0 and below > 0:
                chosen = np.concatenate([chosen, (math.log(below) + ORDERS * lo)[:, None]], axis=1)
            top = np.max(chosen, axis=1) if chosen.shape[1] else np.full(ORDERS.size, -np.inf)
            finite = np.where(np.isfinite(top), top, 0.0)
            with np.errstate(divide="ignore"):
                parts.append(finite + np.log(np.sum(np.exp(chosen - finite[:, None]), axis=1)))
            masses.append(float(probs[start:stop].sum()))
        levels = []
        for k in range(bounds.size):
            above = sum(masses[k + 1 :])
            if above <= 0:
                continue
            small = np.logaddexp.reduce(np.array(parts[: k + 1]), axis=0)
            big = np.logaddexp.reduce(np.array(parts[k + 1 :]), axis=0)
            levels.append((math.log(above), small, big))
        return tuple(levels)

    def _interval(self, tolerance: float, width: float, max_points: int) -> float:
        lattices = {s.lattice for s in self.summaries if s.lattice is not None}
        lattices |= {s.atoms for s in self.summaries if s.atoms is not None}
        pairs = list(zip(self.summaries, self.counts, strict=True))
        smooth = [(s.variance, n) for s, n in pairs if s.lattice is None]
        if len(lattices) > 1:  # randomized responses on different lattices: spread too
            smooth += [(s.variance, n) for s, n in pairs if s.lattice is not None]
        total = sum(n for _, n in smooth)
        interval = math.inf
        if smooth and total > 0:
            variance = sum(v * n for v, n in smooth) / total
            interval = math.sqrt(6 * tolerance * max(variance, 1e-300))
            interval = max(
                min(interval, width / min(self.min_points, max_points)), width / (max_points - 8)
            )
        if len(lattices) == 1:
            step = lattices.pop()
            if not smooth:
                interval = step
                while width / interval > max_points:
                    interval *= 2
                return interval
            return step / math.ceil(step / interval)
        return interval

    def _plan(self, interval: float, tilt: float, lo: float, hi: float) -> Plan:
        low = math.floor(lo / interval) - 1
        size = _length(hi - lo, interval)
        cuts = _window_cuts(self.cuts, self.counts, low * interval, (low + size) * interval)
        strides = tuple(self.strides(i, tilt) for i in range(len(self.summaries)))
        return Plan(interval, tilt, low, size, cuts, self.orders_above, self.orders_below, strides)

    @cache  # noqa: B019 - one planner per direction and delta; every pass asks again
    def strides(self, index: int, tilt: float) -> Strides:
        """Where part ``index`` may use cells of m grid steps. Connect-the-dots
        on a cell of width w spreads its mass by about w^2 in loss, which at
        tilt t changes the composition's e^{tS}-weighted mass (what the bound
        near the answer is made of, `pld_fft`) by a relative ~ t^2 w^2 times
        the part's tilted share of mass in such cells; over the bulk (width
        h, share ~1) that is the discretisation's error. So beyond a loss b
        whose tilted tail share T(b) = E[e^{tL}; L > b] / E[e^{tL}] is at
        most STRIDE_SHARE / m^2 cells of m steps add at most STRIDE_SHARE of
        it. Smooth (Gaussian-based) directions only; tightness only."""
        if self.min_points != SMOOTH_MIN_POINTS:
            return ()
        grid = self.summaries[index].grid
        held = grid.probs > 0
        if not held.any():
            return ()
        losses = grid.losses[held]
        weights = np.log(grid.probs[held]) + tilt * losses
        weights = np.exp(weights - np.max(weights))
        share = np.cumsum(weights[::-1])[::-1] / np.sum(weights)  # T at each coarse loss
        found = []
        for m in STRIDES:
            beyond = np.flatnonzero(share <= STRIDE_SHARE / (m * m))
            if beyond.size:  # T(l_j) counts l_j itself: cells above l_j hold at most T
                found.append((float(losses[beyond[0]]), m))
        return tuple(found)


def renyi_bound(direction: Direction, delta: float) -> float:
    """A proven upper bound of a direction's epsilon (no planner needed): the
    Renyi bound (CKS20, Prop. 12) of its parts' coarse pessimistic grids,
    whose moments are rounded up, at the delta left after the mass at
    infinity, with a relative 1e-9 for the rounding of the formula."""
    return _renyi_bound([(summary(tails), n) for tails, n in direction], delta)


def _renyi_bound(pairs: Sequence[tuple[Summary, int]], delta: float) -> float:
    infinity = -math.expm1(
        sum(n * math.log1p(-min(s.grid.infinity_mass, 1.0)) for s, n in pairs)
    ) * (1 + 1e-12)
    left = delta - infinity
    if left <= 0:
        return math.inf
    t = ORDERS
    log_mgf = sum(n * s.full_log_mgf for s, n in pairs)
    values = (log_mgf - math.log(left) + t * np.log(t) - (t + 1) * np.log1p(t)) / t
    return max(float(np.min(values)) * (1 + 1e-9) + 1e-12, 0.0)


def _length(width: float, interval: float) -> int:
    """The FFT length `_plan` gives a window of this width."""
    return 1 << max(math.ceil(math.log2(width / interval + 3)), 4)


def _log_binomial(n: int, j: int) -> float:
    return math.lgamma(n + 1) - math.lgamma(j + 1) - math.lgamma(n - j + 1)


def _near(orders: np.ndarray, index: int) -> np.ndarray:
    return orders[max(index - 2, 0) : index + 3]


def _window_cuts(
    cuts: Sequence[tuple[float, float]], counts: Sequence[int], lo: float, hi: float
) -> tuple[tuple[float, float], ...]:
    """Narrow each part's range further: no lower than where even the
    others' largest losses leave the sum below the window (such mass only
    counts below it), no higher than where their smallest leave it above."""
    highest_total = sum(n * c_hi for (_, c_hi), n in zip(cuts, counts, strict=True))
    lowered = [min(max(c_lo, lo - (highest_total - c_hi)), c_hi) for (c_lo, c_hi) in cuts]
    lowest_total = sum(n * c for c, n in zip(lowered, counts, strict=True))
    return tuple(
        (c_lo, max(min(c_hi, hi - (lowest_total - c_lo)), c_lo))
        for c_lo, (_, c_hi) in zip(lowered, cuts, strict=True)
    )
