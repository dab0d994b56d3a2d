"""The accountant against independent references and dp-accounting, on a grid.

    python bench/accounting_grid.py [--quick] [--repeats N] [--regenerate] [--family F,G]
                                    [--cached-only] [--references-only]
                                    [--rows-out FILE] [--combine FILE ...]

Cases (bench/grid_cases.py, 504 rows): k-fold Gaussian, Laplace and pure,
Poisson-subsampled pure, one Poisson-subsampled Laplace, the DP-SGD grid
q in {0.001, 0.01} x sigma in {0.8, 1, 2} x steps in {100, 300, 1000}, and
mixtures (a Gaussian with repeated pure events, Laplace with pure events);
delta from 1e-5 to 1e-15.
Each row has a reference bracket [lo, hi] for the exact epsilon, computed by
tests/dp_reference (mpmath / long double; exact except for the subsampled
Gaussians, whose numerical inversion is bracketed), cached in
bench/accounting_grid_reference.json (--regenerate recomputes it; missing
rows are computed and added). fuzzpy's `tightest` and dp-accounting's PLD
accountant (default settings) are timed in the same run, best of N, each
fuzzpy run from cold caches; a run slower than 5 s is timed once.

Printed: every row -- the reference bracket [lo, hi] and whether it is
rigorous ('ex': closed forms and enumerations in mpmath), a rigorous bracket
('rb': DP-SGD rows; lo and hi from tests/dp_reference/rigorous -- lattice
pairs below and above each step in Blackwell's order, composed by FFT with a
proven error bound; hi is the least of that and the step's exact Renyi DP
converted by CKS20 Prop. 12, tests/dp_reference/renyi_upper; proven upper
ends are kept in bench/accounting_grid_upper.json; 'rbR': the same with hi
from the Renyi DP alone, loose, where the lattice has not been run), has a proven lower end
only ('rlo': hi from the numerical inversion) or is only numerical ('num':
DP-SGD rows whose long-double Fourier inversion is checked by two settings'
agreement, not proven), fuzzpy's epsilon, time and method, dp-accounting's
epsilon and time, fuzzpy / best (best: the exact hi for 'ex' rows, the
numerical inversion's hi for DP-SGD rows -- tighter than a proven hi) and the
time ratio; then the summary -- rows with rigorous references and brackets,
rows below the reference (fuzzpy's epsilon < lo (1 - 1e-9)): must be zero;
'rb' rows whose numerical inversion leaves the proven bracket: must be zero;
rows slower than dp-accounting: must be zero; fuzzpy / best (median, max),
and dp-accounting's, for comparison.
--quick runs fewer deltas and cases; --cached-only skips rows whose reference
is not cached yet (the DP-SGD inversions take tens of seconds each).
--references-only --family dp-sgd also replaces cached DP-SGD lower ends by
proven ones and adds proven upper ends; --proven-upper [MATCH] adds only
those (minutes per (q, sigma), then about a minute per row on a loaded machine);
--renyi-upper gives rows still without one the Renyi end (a second in all) (minutes per (q, sigma) for one step's lattice pair, in mpmath,
cached in the temporary directory; seconds per row after that).
"""

from __future__ import annotations

import argparse
import json
import logging
import math
import os
import signal
import statistics
import sys
import time
from pathlib import Path
from types import SimpleNamespace

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE), str(HERE.parent / "tests")]

from dp_reference import renyi_upper  # noqa: E402
from grid_cases import (  # noqa: E402
    Case,
    cases,
    reference,
    rigorous_lower,
    rigorous_upper,
    sampled_gaussian,
)

from fuzzpy.accounting import composition, gaussian, pld, pld_grid, pld_plan, rdp, renyi  # noqa: E402
from fuzzpy.accounting import zcdp as accounting_zcdp  # noqa: E402
from fuzzpy.accounting.accountant import tightest  # noqa: E402

CACHE = HERE / "accounting_grid_reference.json"
UPPER = HERE / "accounting_grid_upper.json"  # DP-SGD: {key: {"hi", "lattice", "renyi"}}
SLOW = 5.0
DPA_CAP = 20.0  # dp-accounting on huge losses (sigma = 0.5, 1000 steps) runs for minutes


def _reset() -> None:
    """Cold caches: every memoised function of the accounting modules."""
    for module in (pld, rdp, renyi, pld_plan, pld_grid, accounting_zcdp, composition, gaussian):
        for value in vars(module).values():
            if callable(getattr(value, "cache_clear", None)):
                value.cache_clear()


def timed(fn, repeats: int, reset=lambda: None) -> tuple[object, float]:
    best, value = math.inf, None
    for _ in range(repeats):
        reset()
        start = time.perf_counter()
        value = fn()
        best = min(best, time.perf_counter() - start)
        if best > SLOW:
            break
    return value, best


class _TimedOut(Exception):
    pass


def _alarm(signum, frame):
    raise _TimedOut


def dpa_epsilon(case: Case) -> float:
    """dp-accounting's epsilon; NaN when it runs past DPA_CAP seconds (its
    time is then recorded as the cap, a lower bound)."""
    previous = signal.signal(signal.SIGALRM, _alarm)
    signal.setitimer(signal.ITIMER_REAL, DPA_CAP)
    try:
        return case.dpa(case.delta)
    except (ValueError, OverflowError):
        return math.inf
    except _TimedOut:
        return math.nan
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def select(all_cases: list[Case], quick: bool, family: str | None) -> list[Case]:
    families = None if family is None else family.split(",")
    chosen = [c for c in all_cases if families is None or c.family in families]
    if not quick:
        return chosen
    keep = []
    for c in chosen:
        if c.delta not in (1e-5, 1e-11, 1e-15) or c.delta == 1e-11 and c.family != "dp-sgd":
            continue
        if c.family == "dp-sgd" and "k=1000" in c.name:
            continue
        if c.family in ("gaussian", "pure") and ("k=1000" in c.name):
            continue
        keep.append(c)
    return keep


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="a subset, for CI-like runs")
    parser.add_argument("--repeats", type=int, default=3, help="best of N timings (default 3)")
    parser.add_argument("--regenerate", action="store_true", help="recompute every reference")
    parser.add_argument(
        "--family", help="only these families, comma-separated (gaussian, laplace, pure, ...)"
    )
    parser.add_argument(
        "--references-only", action="store_true", help="fill the reference cache, time nothing"
    )
    parser.add_argument(
        "--cached-only", action="store_true", help="skip rows whose reference is not cached"
    )
    parser.add_argument(
        "--proven-upper",
        metavar="MATCH",
        nargs="?",
        const="",
        help="only add proven upper ends (bench/accounting_grid_upper.json) to DP-SGD rows "
        "whose name contains MATCH",
    )
    parser.add_argument(
        "--renyi-upper",
        action="store_true",
        help="give DP-SGD rows with no proven upper end the (loose) Renyi one",
    )
    parser.add_argument("--rows-out", help="append each row as a JSON line to this file")
    parser.add_argument("--combine", nargs="+", help="summarise --rows-out files, run nothing")
    args = parser.parse_args()
    if args.combine:
        summarise(
            [_row(line) for path in args.combine for line in Path(path).read_text().splitlines()]
        )
        return
    logging.getLogger().setLevel(logging.ERROR)
    if args.proven_upper is not None:
        fill_uppers(select(cases(), args.quick, "dp-sgd"), args.proven_upper)
        return
    if args.renyi_upper:
        fill_renyi_uppers(select(cases(), args.quick, "dp-sgd"))
        return
    if args.references_only:
        fill_references(select(cases(), args.quick, args.family), args.regenerate)
        return

    cache = {} if args.regenerate or not CACHE.exists() else json.loads(CACHE.read_text())
    uppers = _load(UPPER)
    rows = []
    header = (
        f"{'case':46} {'delta':>7} {'ref lo':>14} {'ref hi':>14} {'ref':4} {'fuzzpy':>14} "
        f"{'t(s)':>7} {'method':16} {'dpa PLD':>14} {'t(s)':>7} {'eps/best':>12} {'t/t_dpa':>7}"
    )
    print(header)
    print("-" * len(header))
    skipped = 0
    for case in select(cases(), args.quick, args.family):
        if case.key not in cache and CACHE.exists():  # a fill running beside may have it
            cache.update(json.loads(CACHE.read_text()))
        if args.cached_only and case.key not in cache:
            skipped += 1
            continue
        found, ours_t = timed(lambda c=case: tightest(c.events, c.delta), args.repeats, _reset)
        theirs, theirs_t = timed(lambda c=case: dpa_epsilon(c), args.repeats)
        if case.key not in cache:
            cache[case.key] = list(reference(case, found.epsilon))
            _store(CACHE, cache)
        lo, hi = cache[case.key][:2]
        best = hi  # exact rows: hi; DP-SGD rows: the numerical inversion's hi
        kind = rigour(case, cache[case.key], uppers.get(case.key))
        if kind == "rb":
            hi = uppers[case.key]["hi"]
            kind = "rb" if uppers[case.key]["lattice"] is not None else "rbR"
        inside = kind not in ("rb", "rbR") or lo <= best <= hi  # the numerical estimate
        rows.append((case, lo, hi, found, ours_t, theirs, theirs_t, kind, best, inside))
        if args.rows_out:
            with open(args.rows_out, "a") as out:
                out.write(
                    json.dumps(
                        [
                            case.name,
                            case.delta,
                            lo,
                            hi,
                            found.epsilon,
                            found.method,
                            found.proven,
                            ours_t,
                            theirs,
                            theirs_t,
                            kind,
                            best,
                            inside,
                        ]
                    )
                    + "\n"
                )
        ratio = found.epsilon / best if best > 0 else math.nan
        print(
            f"{case.name:46} {case.delta:7.0e} {lo:14.9f} {hi:14.9f} {kind:4} "
            f"{found.epsilon:14.9f} {ours_t:7.3f} {found.method:16} {theirs:14.9f} "
            f"{theirs_t:7.3f} {ratio:12.10f} {ours_t / theirs_t:7.3f}",
            flush=True,
        )
    summarise(rows)
    if skipped:
        print(f"rows skipped for want of a cached reference: {skipped}")


def fill_references(chosen: list[Case], regenerate: bool) -> None:
    cache = {} if regenerate or not CACHE.exists() else json.loads(CACHE.read_text())
    # the proven DP-SGD lower ends take a while (heavy tails at small sigma
    # most): large sigma and large delta first
    chosen = sorted(chosen, key=lambda c: (c.kind == "fourier", "sigma=2 " not in c.name, -c.delta))
    for case in chosen:
        if case.key in cache and case.kind == "fourier" and len(cache[case.key]) == 2:
            _add_rigorous_lower(cache, case)
        if case.key in cache and case.kind == "fourier":
            _add_rigorous_upper(case, cache[case.key][1])
        if case.key in cache:
            continue
        start = time.perf_counter()
        try:
            cache[case.key] = list(reference(case, tightest(case.events, case.delta).epsilon))
        except RuntimeError as failure:  # a numerical inversion that did not converge
            print(f"{case.key:60} no reference: {failure}", flush=True)
            continue
        _store(CACHE, cache)
        print(f"{case.key:60} {cache[case.key]} {time.perf_counter() - start:.1f}s", flush=True)


def _add_rigorous_lower(cache: dict, case: Case) -> None:
    """Replace a DP-SGD row's numerical lower end by a proven one:
    [proven lo, numerical hi, 'rlo', numerical lo]."""
    start = time.perf_counter()
    num_lo, num_hi = cache[case.key][:2]
    lo = rigorous_lower(case, num_hi)
    cache[case.key] = [lo, num_hi, "rlo", num_lo]
    _store(CACHE, cache)
    print(f"{case.key:60} proven lo {lo!r} (numerical {num_lo!r}) "
          f"{time.perf_counter() - start:.1f}s", flush=True)


def fill_uppers(chosen: list[Case], match: str) -> None:
    """Proven upper ends for the DP-SGD rows with a cached reference (its
    numerical hi sizes the tilt), leaving the reference file alone."""
    cache = _load(CACHE)
    chosen = [c for c in chosen if match in c.name and c.key in cache]
    for case in chosen:
        _add_rigorous_upper(case, cache[case.key][1])


def fill_renyi_uppers(chosen: list[Case]) -> None:
    """The Renyi upper end alone (a second for all rows) where a row has no
    proven upper end yet: valid, loose; a later --proven-upper replaces it."""
    uppers = _load(UPPER)
    for case in chosen:
        if case.key not in uppers:
            steps, pairs = sampled_gaussian(case)
            renyi, _ = renyi_upper.epsilon_upper(pairs[0].rate, pairs[0].mu, steps, case.delta)
            uppers[case.key] = {"hi": renyi, "lattice": None, "renyi": renyi}
    _store(UPPER, uppers)


def _add_rigorous_upper(case: Case, hint: float) -> None:
    """Add a DP-SGD row's proven upper ends to UPPER (once)."""
    if _load(UPPER).get(case.key, {}).get("lattice") is not None:
        return
    start = time.perf_counter()
    lattice, renyi = rigorous_upper(case, hint)
    entry = {"hi": min(lattice, renyi), "lattice": lattice, "renyi": renyi}
    _store(UPPER, {case.key: entry})
    print(f"{case.key:60} proven hi {entry['hi']!r} (lattice {lattice!r}, renyi {renyi!r}; "
          f"numerical {hint!r}) {time.perf_counter() - start:.1f}s", flush=True)


def rigour(case: Case, entry: list | None = None, upper: dict | None = None) -> str:
    """'ex': the reference bracket is rigorous (closed forms and enumerations
    in mpmath); 'rb': a DP-SGD row with a proven lower end and a proven upper
    end (`UPPER`); 'rlo': a DP-SGD row whose lower end is proven (rigorous
    lattice bound, tests/dp_reference/rigorous) and whose upper end is the
    numerical inversion's; 'num': numerical (the subsampled Gaussians'
    Fourier inversion in long double, bracketed only by two settings' agreement)."""
    if case.kind != "fourier":
        return "ex"
    if entry is not None and len(entry) > 2 and entry[2] == "rlo" and upper is not None:
        return "rb"
    return "rlo" if entry is not None and len(entry) > 2 and entry[2] == "rlo" else "num"


def _row(line: str) -> tuple:
    """A --rows-out line back as summarise's row."""
    fields = json.loads(line)
    name, delta, lo, hi, eps, method, proven, t, theirs, theirs_t = fields[:10]
    kind = fields[10] if len(fields) > 10 else ("num" if name.startswith("dp-sgd") else "ex")
    best, inside = fields[11:13] if len(fields) > 12 else (hi, True)
    case = SimpleNamespace(name=name, delta=delta)
    return (
        case,
        lo,
        hi,
        SimpleNamespace(epsilon=eps, method=method, proven=proven),
        t,
        theirs,
        theirs_t,
        kind,
        best,
        inside,
    )


def _load(path: Path) -> dict:
    return json.loads(path.read_text()) if path.exists() else {}


def _store(path: Path, cache: dict) -> None:
    """Merge into the file (fills for different families may run side by side)."""
    cache.update({k: v for k, v in _load(path).items() if k not in cache})
    partial = path.with_suffix(f".{os.getpid()}.tmp")
    partial.write_text(json.dumps(cache, indent=0, sort_keys=True))
    os.replace(partial, path)  # atomic: a reader never sees half a file


def summarise(rows) -> None:
    below = [r for r in rows if r[3].epsilon < r[1] * (1 - 1e-9)]
    slower = [r for r in rows if r[4] > r[6]]
    capped = [r for r in rows if math.isnan(r[5])]
    time_ratios = [r[4] / r[6] for r in rows if r[6] > 0]
    ratios = [r[3].epsilon / r[8] for r in rows if r[8] > 0 and math.isfinite(r[3].epsilon)]
    theirs = [r[5] / r[8] for r in rows if r[8] > 0 and math.isfinite(r[5])]
    widths = [(r[2] - r[1]) / r[2] for r in rows if r[2] > 0 and math.isfinite(r[2])]
    dpa_below = [r for r in rows if math.isfinite(r[5]) and r[5] < r[1] * (1 - 1e-9)]
    print()
    numerical = [r for r in rows if r[7] == "num"]
    proven_lower = [r for r in rows if r[7] == "rlo"]
    bracketed = [r for r in rows if r[7] in ("rb", "rbR")]
    outside = [r for r in bracketed if not r[9]]
    print(f"rows: {len(rows)}")
    print(
        f"rows with a rigorous reference (exact, mpmath): "
        f"{sum(1 for r in rows if r[7] == 'ex')}; "
        f"with a rigorous bracket (DP-SGD, proven lo and proven hi): {len(bracketed)} "
        f"(hi tight from the lattice: {sum(1 for r in bracketed if r[7] == 'rb')}, "
        f"loose from Renyi DP only: {sum(1 for r in bracketed if r[7] == 'rbR')}); "
        f"with a proven lower end and a numerical upper end (DP-SGD): {len(proven_lower)}; "
        f"numerical only (DP-SGD Fourier inversion, not a proven bracket): {len(numerical)}"
    )
    if bracketed:
        slack = [(r[2] - r[8]) / r[8] for r in bracketed]
        print(
            f"rigorous brackets: numerical inversion outside the proven bracket in "
            f"{len(outside)} rows (must be 0); (proven hi - numerical) / numerical: "
            f"median {statistics.median(slack):.2e}, max {max(slack):.2e}"
        )
    for r in outside:
        print(f"   {r[0].name} at {r[0].delta:g}: numerical {r[8]!r} outside [{r[1]!r}, {r[2]!r}]")
    print(f"rows below the reference (fuzzpy < lo (1 - 1e-9)): {len(below)}")
    for r in below:
        print(f"   {r[0].name} at {r[0].delta:g}: {r[3].epsilon!r} < {r[1]!r}")
    print(f"rows slower than dp-accounting's PLD (best of N): {len(slower)}")
    for r in slower:
        print(f"   {r[0].name} at {r[0].delta:g}: {r[4]:.3f}s > {r[6]:.3f}s")
    print(
        f"time fuzzpy / dp-accounting: median {statistics.median(time_ratios):.4f}, "
        f"max {max(time_ratios):.4f}; dp-accounting stopped at {DPA_CAP:g}s in "
        f"{len(capped)} rows (its time counted as {DPA_CAP:g}s)"
    )
    print(f"fuzzpy / best: median {statistics.median(ratios):.10f}, max {max(ratios):.10f}")
    if theirs:
        print(
            f"dp-accounting PLD / best: median {statistics.median(theirs):.10f}, "
            f"max {max(theirs):.10f}, min {min(theirs):.10f}; "
            f"{len(dpa_below)} rows below the reference; "
            f"{sum(1 for r in rows if math.isinf(r[5]))} rows infinite"
        )
    print(
        f"reference bracket width (hi - lo) / hi: median {statistics.median(widths):.2e}, "
        f"max {max(widths):.2e}"
    )
    total_ours = sum(r[4] for r in rows)
    total_theirs = sum(r[6] for r in rows)
    print(f"total time: fuzzpy {total_ours:.1f}s, dp-accounting {total_theirs:.1f}s")


if __name__ == "__main__":
    main()
