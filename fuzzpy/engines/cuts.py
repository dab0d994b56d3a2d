"""Many counts of one value cut at many constants, without a search per row.

An exponential mechanism over candidates c_0 < ... < c_{n-1} asks, for every
c, how many rows have ``value < c`` and ``value <= c``. A row's *bucket* is
the number of those tests it fails, ``sum_j [value >= c_j] + [value > c_j]``
(the tests are monotone), and each count is a cumulative sum of buckets
(`fuzzpy.engines.execute.Executor._run_thresholds`).

A binary search written as nested `CASE`s costs the engine one expression
node per cut and per batch of rows (2,000 nodes for 1,000 candidates: 30x a
count at 10M rows). Here the value's range is cut into equal *cells* by
arithmetic (one `floor` per row); each cell is a row of a small table that
holds the number of cuts surely below every value of the cell and the few
cuts that may fall inside it, and a row's bucket is that number doubled
plus its comparisons with those few cuts, in the engine's own comparison of
two values of the value's type -- the same comparisons as the filters'.

Why it is exact: a cell's value range is computed with a margin far above
the floating-point error of the cell formula, so every cut left out of a
cell's few is surely above or surely below each of its values (a cut below
adds 2 to the bucket, one above adds 0), whatever the engine rounds.
"""

from __future__ import annotations

import bisect
import math
from collections.abc import Callable
from dataclasses import dataclass

#: cells per cut: more cells, fewer cuts to compare each row with
CELLS_PER_CUT = 4
#: past this many cuts in one cell (cuts crowded together), the search stays
MAX_CUTS_PER_CELL = 16
#: fewer cuts than this are searched (a short search costs less than a join)
MIN_CUTS = 12


@dataclass(frozen=True)
class Cells:
    """The cell formula's constants and its table: for cell k (0 .. cells +
    1; 0 below the first cut, cells + 1 above the last), the cuts
    ``spans[k] = (first, last)``: those before ``first`` are surely below
    each of its values, those from ``last`` on surely above."""

    low: float
    width: float
    cells: int
    spans: tuple[tuple[int, int], ...]

    @property
    def top(self) -> float:
        """Above every cut: a value clamped here is in the last cell."""
        return self.low + (self.cells + 1) * self.width

    @property
    def columns(self) -> int:
        """The most cuts one cell's values are compared with."""
        return max(last - first for first, last in self.spans)


def plan_cells(cuts: list[float]) -> Cells | None:
    """Cells for sorted cut values (as the engine holds them: doubles, or
    integers), or None where a search is as good or the arithmetic would not
    be sound (one distinct value, a range that overflows, crowded cuts)."""
    if len(cuts) < MIN_CUTS or not all(math.isfinite(c) for c in cuts):
        return None
    low, high = float(cuts[0]), float(cuts[-1])
    cells = CELLS_PER_CUT * len(cuts)
    width = (high - low) / cells
    if not (width > 1e-290 and math.isfinite(width) and math.isfinite(high - low)):
        return None  # (subnormal widths lose the relative error bound below)
    # The engine's cell, floor(fl(fl(fl(x) - low) / width)) + 1 of the clamped
    # x, errs from the true (x - low) / width by 3 roundings of 2^-53 relative
    # to |x| and |x - low| (in units of x), and this module's own `low + k *
    # width` by 2 more: all under 2^-53 * 5 (|low| + |high| + 2 width)
    # = 5.6e-16 (...), so 4e-15 (...) is 7 times the bound.
    margin = 4e-15 * (abs(low) + abs(high) + 2 * width)
    spans = []
    for k in range(cells + 2):
        start = -math.inf if k == 0 else low + (k - 1) * width - margin
        stop = math.inf if k == cells + 1 else low + k * width + margin
        spans.append((bisect.bisect_left(cuts, start), bisect.bisect_right(cuts, stop)))
    plan = Cells(low, width, cells, tuple(spans))
    if not math.isfinite(plan.top) or plan.columns > MAX_CUTS_PER_CELL:
        return None
    return plan


def cell_sql(plan: Cells, value: str, double: Callable[[float], str]) -> str:
    """The cell of a value (``double(x)`` writes a double literal): the same
    formula for every row, NaN above the last cut as the engine orders it."""
    # clamped first, so that no arithmetic overflows on any value (an engine may refuse to)
    near = f"least(greatest({value}, {double(plan.low - plan.width)}), {double(plan.top)})"
    index = f"floor(({near} - {double(plan.low)}) / {double(plan.width)}) + {double(1.0)}"
    return f"CAST(least(greatest({index}, {double(0.0)}), {double(float(plan.cells + 1))}) AS BIGINT)"
