"""`fuzzpy budget`: what does a program or a series of releases cost?

    fuzzpy budget FILE [DEF] [--delta D]                 a program's definitions
    fuzzpy budget --gaussian SIGMA --rounds K --delta D  k Gaussian releases
    fuzzpy budget --laplace EPS0 --rounds K [--delta D]  k Laplace releases
    fuzzpy budget --geometric EPS0 | --dgauss SIGMA ...   k integer releases (geometric, discrete Gaussian)
    fuzzpy budget --staircase EPS0 ...                   k staircase releases (EPS0 x ceil(sensitivity) each)
        [--subsample Q] [--sensitivity S]                (Poisson-subsampled)
    fuzzpy budget --rr EPS0 [--categories K] [--shuffle N] [--rounds K]
                                                          randomized-response reports
    fuzzpy budget --calibrate gaussian|laplace --epsilon E --delta D --rounds K
    fuzzpy budget --accuracy X [--confidence C] --laplace|--gaussian|--geometric|--dgauss
                                                          the noise for +/- X at C (0.95), and its cost
    ... --plot out.png                                    eps against rounds
    ... --profile [--plot out.png]                        profile, trade-off, rho, Renyi curve
    ... --json                                            one JSON document

Exit codes: 0 done, 1 the program is rejected, 2 bad arguments or input.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from collections.abc import Callable, Sequence
from fractions import Fraction
from typing import TYPE_CHECKING

from fuzzpy.commands.common import (
    DEFAULT_DELTA,
    DELTA_POLICY,
    EXIT_OK,
    add_delta_option,
    usage_error,
)
from fuzzpy.language.figures import NEIGHBOURS, NEIGHBOURS_TEXT, text_down, text_exact, text_up

if TYPE_CHECKING:  # the accountant (scipy, dp_accounting) is imported when the command runs
    from fuzzpy.accounting.accountant import Guarantee
    from fuzzpy.accounting.calibrate import Calibration
    from fuzzpy.accounting.events import Event
    from fuzzpy.accounting.neighbours import Neighbours
    from fuzzpy.accounting.profile import PrivacyViews

DESCRIPTION = (
    "Say what releases cost in privacy: a program's definitions (FILE [DEF]), or K rounds of "
    "Gaussian or Laplace noise, or of integer noise (geometric, discrete Gaussian), optionally "
    "subsampled, at a delta, with the tightest valid accounting method named; calibrate the noise for "
    "a target epsilon, or find it for an accuracy (--accuracy X with a noise flag given without its "
    "value: the most private noise whose interval is +/- X at --confidence); plot epsilon against rounds. "
    "Every figure is for the neighbour relation printed under it: datasets that differ by adding or "
    "removing one row (the bag metric, the default), or with --neighbours replace-one datasets of one "
    "size that differ in one row (\"neighbours\" in --json). "
    "Printed figures are rounded toward safety (epsilon and delta up; a calibrated noise is printed as "
    "the least 6-digit value whose own guarantee, re-accounted, meets the target, which may be a little "
    "below the search's value in --json); --json keeps the exact floats."
)
EPILOG = DELTA_POLICY

CALIBRATION_FAILED = "FZ704"
#: a noise flag given without its value: --accuracy finds it
ASK = "ask"
_NOISE_FLAGS = ("laplace", "gaussian", "geometric", "dgauss")
CANNOT_WRITE = "FZ705"


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("file", nargs="?", metavar="FILE", help="a .fz program")
    p.add_argument("definition", nargs="?", metavar="DEF", help="one definition of FILE")
    add_delta_option(p, "the delta to report epsilon at")
    mech = p.add_mutually_exclusive_group()
    # each noise flag takes its parameter, or none with --accuracy (which finds it)
    mech.add_argument(
        "--gaussian", type=_positive_or_ask, nargs="?", const=ASK, metavar="SIGMA", help="Gaussian releases of std SIGMA"
    )
    mech.add_argument(
        "--laplace", type=_positive_or_ask, nargs="?", const=ASK, metavar="EPS0", help="Laplace releases, EPS0-DP each"
    )
    mech.add_argument(
        "--geometric", type=_positive_or_ask, nargs="?", const=ASK, metavar="EPS0",
        help="integer releases with two-sided geometric noise (`geometric[EPS0]`), EPS0-DP each at sensitivity 1",
    )
    mech.add_argument(
        "--dgauss", type=_positive_or_ask, nargs="?", const=ASK, metavar="SIGMA",
        help="integer releases with discrete Gaussian noise N_Z(0, SIGMA^2) (`dgauss[SIGMA]`)",
    )
    mech.add_argument(
        "--staircase", type=_positive, metavar="EPS0",
        help="releases with staircase noise (`staircase[EPS0]`, steps of width 1; Geng & Viswanath 2016), "
        "EPS0 x ceil(sensitivity)-DP each",
    )
    mech.add_argument(
        "--rr", type=_positive, metavar="EPS0",
        help="local reports by randomized response, EPS0-LDP each (replace-one neighbours)",
    )
    p.add_argument("--categories", type=_count, default=2, metavar="K",
                   help="with --rr: k-ary randomized response over K values (default 2)")
    p.add_argument("--shuffle", type=_reports, metavar="N",
                   help="with --rr: the reports shuffled, at least N of them (Feldman, McMillan & Talwar 2021)")
    p.add_argument(
        "--rounds", type=_count, default=None, metavar="K",
        help="number of releases (default 1); with FILE [DEF]: each definition released K times, its events "
        "composed K times (sequential, possibly adaptive composition)"
    )
    p.add_argument(
        "--subsample", type=_rate, metavar="Q", help="each release on a Poisson subsample of rate Q"
    )
    p.add_argument(
        "--choose", type=_count, metavar="M",
        help="each release on M rows drawn without replacement (amplified by M/N with --neighbours "
        "replace-one --rows N)",
    )
    p.add_argument("--neighbours", choices=("add-remove-one", "replace-one"), default=None,
                   help="the neighbour relation of every figure (default: add-remove-one; replace-one for --rr)")
    p.add_argument("--rows", action="append", metavar="N|PARAM=N",
                   help="with --neighbours replace-one: the dataset's public number of rows; for a program, "
                   "N for a definition with one bag parameter or PARAM=N per bag parameter (repeatable)")
    p.add_argument(
        "--sensitivity",
        type=_positive,
        default=1.0,
        metavar="S",
        help="L2 (Gaussian) / L1 sensitivity",
    )
    p.add_argument(
        "--calibrate", choices=("gaussian", "laplace"), help="find the noise for --epsilon"
    )
    p.add_argument("--epsilon", type=_positive, metavar="E", help="target epsilon for --calibrate")
    p.add_argument("--accuracy", type=_positive, metavar="X",
                   help="find the most private noise (of the flag given without a value) whose interval is "
                   "+/- X at --confidence, and say what it costs")
    p.add_argument("--confidence", type=_confidence, default=None, metavar="C",
                   help="with --accuracy: the interval's level (default 0.95)")
    p.add_argument("--plot", metavar="OUT.png",
                   help="draw epsilon against the number of rounds (with --profile: the profile, "
                   "trade-off and Renyi curves)")
    p.add_argument("--profile", action="store_true",
                   help="also show the privacy profile (eps at several deltas), the f-DP trade-off curve, "
                   "zCDP's rho and the Renyi curve eps(alpha)")
    p.add_argument("--json", action="store_true", help="print one JSON document")


# ---------------------------------------------------------------- argument types


def _number(text: str) -> float:
    try:
        value = float(Fraction(text))
    except (ValueError, ZeroDivisionError):
        raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
    if not math.isfinite(value):
        raise argparse.ArgumentTypeError(f"not a finite number: {text!r}")
    return value


def _positive(text: str) -> float:
    value = _number(text)
    if value <= 0:
        raise argparse.ArgumentTypeError(f"must be positive: {text!r}")
    return value


def _positive_or_ask(text: str) -> float | str:
    """A noise flag's value; argparse passes the flag's `const`, ASK, through here too."""
    return ASK if text == ASK else _positive(text)


def _confidence(text: str) -> float:
    value = _number(text)
    if not 0 < value < 1:
        raise argparse.ArgumentTypeError(f"a confidence lies in (0, 1): {text!r}")
    return value


def _rate(text: str) -> float:
    value = _number(text)
    if not 0 < value <= 1:
        raise argparse.ArgumentTypeError(f"a sampling rate lies in (0, 1]: {text!r}")
    return value


def _count(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a whole number: {text!r}") from None
    if value < 1 or value > 10**7:
        raise argparse.ArgumentTypeError(f"must lie in 1..10^7: {text!r}")
    return value


def _reports(text: str) -> int:
    """--shuffle N: at least two reports, as `shuffle[n]` requires (one report shuffled
    is the report itself: nothing to hide among; review s30a)."""
    value = _count(text)
    if value < 2:
        raise argparse.ArgumentTypeError(f"must lie in 2..10^7 (a shuffle hides a report among others): {text!r}")
    return value


# ---------------------------------------------------------------- the command


def run(args: argparse.Namespace) -> int:
    """Errors are raised as diagnostics: UsageError (FZ703) or FuzzError."""
    asked = [flag for flag in _NOISE_FLAGS if getattr(args, flag) == ASK]
    if args.accuracy is not None or asked:
        return _accuracy(args, asked)
    if args.confidence is not None:
        raise usage_error("--confidence goes with --accuracy X")
    if args.calibrate:
        return _calibrate(args)
    if any(getattr(args, flag) is not None for flag in _NOISE_FLAGS) or args.rr is not None or args.staircase is not None:
        if args.file:
            raise usage_error("give either FILE or --gaussian/--laplace/--geometric/--dgauss/--staircase/--rr, not both")
        return _releases(args)
    if args.file:
        return _program(args)
    raise usage_error(
        "nothing to account", "give FILE, --gaussian SIGMA, --laplace EPS0, --rr EPS0 or --calibrate gaussian|laplace"
    )


def _failure(code: str, message: str, hint: str | None = None) -> Exception:
    from fuzzpy.language.diagnostics import Diagnostic, FuzzError
    from fuzzpy.language.source import NO_SPAN

    return FuzzError((Diagnostic(code, message, NO_SPAN, hint=hint),))


def _default_delta(args: argparse.Namespace, events: Sequence[Event]) -> float:
    """--delta, else the policy: 0 for pure releases, 1e-6 for approximate ones."""
    from fuzzpy.accounting.accountant import pure_epsilon

    if args.delta is not None:
        return float(args.delta)
    return 0.0 if pure_epsilon(events) is not None else float(DEFAULT_DELTA)


def _finite_tightest(found: Sequence[Guarantee], events: Sequence[Event], delta: float) -> Guarantee:
    """The smallest finite epsilon among the proven methods' (an unproven
    float evaluation is listed, never reported: a23 M1); infinity only when
    no method proves a finite one (never an inf beside a finite value)."""
    from fuzzpy.accounting.accountant import tightest

    finite = [g for g in found if g.proven and math.isfinite(g.epsilon)]
    return min(finite, key=lambda g: g.epsilon) if finite else tightest(events, _as_typed(delta))


def _as_typed(delta: float) -> Fraction:
    """The exact delta typed (`check`'s reading, `checker.report.exact_delta`):
    every method is proved at the largest float at or below it, never at the
    float nearest 0.28, which lies above it (review s29a)."""
    from fuzzpy.checker.report import exact_delta

    return exact_delta(delta)


def _release_events(args: argparse.Namespace, rounds: int) -> tuple[Event, ...]:
    from fuzzpy.accounting.calibrate import gaussian_events, laplace_events
    from fuzzpy.accounting.events import Repeat, Sample

    # the numbers as the user wrote them (0.1 is 1/10, not the double nearest
    # it): a13b found eps0 = 10 accounted as 1 / Fraction(0.1), a hair below 10
    if args.rr is not None:
        return _rr_events(args, rounds)
    sensitivity, rate = _as_written(args.sensitivity), _as_written(args.subsample)
    if args.gaussian is not None:
        events = gaussian_events(_as_written(args.gaussian), rounds, sensitivity, rate)
    elif args.geometric is not None or args.dgauss is not None:
        events = _integer_events(args.geometric, args.dgauss, rounds, sensitivity, rate)
    elif args.staircase is not None:
        events = _staircase_events(_as_written(args.staircase), rounds, sensitivity, rate)
    else:  # --laplace EPS0: scale sensitivity / EPS0, so each release is EPS0-DP
        events = laplace_events(sensitivity / _as_written(args.laplace), rounds, sensitivity, rate)
    if rate is not None and rate < 1:  # a Poisson subsample of the dataset itself (its replace-one pair applies)
        events = tuple(_of_the_dataset(e) for e in events)
    if args.choose is not None:  # each round on M rows of the dataset itself
        (repeat,) = events
        assert isinstance(repeat, Repeat)
        events = (Repeat(repeat.count, (Sample(False, args.choose, True, repeat.body),)),)
    return _neighbours(args).resolve(events)


def _integer_events(geometric: float | Fraction | None, dgauss: float | Fraction | None, rounds: int,
                    sensitivity: Fraction | None, rate: Fraction | None) -> tuple[Event, ...]:
    """``rounds`` integer releases: `geometric[EPS0]` (pure EPS0 x sensitivity,
    Ghosh, Roughgarden & Sundararajan 2009) or `dgauss[SIGMA]` (CKS 2020)."""
    from fuzzpy.accounting.events import DiscreteGaussian, Geometric, Repeat, Subsample

    s = Fraction(sensitivity if sensitivity is not None else 1)
    step: Event
    if geometric is not None:
        eps0 = geometric if isinstance(geometric, Fraction) else _as_written(geometric)
        assert eps0 is not None
        step = Geometric(s, 1 / eps0)
    else:
        sigma = dgauss if isinstance(dgauss, Fraction) else _as_written(dgauss)
        assert sigma is not None
        step = DiscreteGaussian(s, sigma)
    if rate is not None and rate < 1:
        step = Subsample(rate, (step,))
    return (Repeat(rounds, (step,)),)


def _staircase_events(eps0: Fraction, rounds: int, sensitivity: Fraction | None,
                      rate: Fraction | None) -> tuple[Event, ...]:
    """``rounds`` releases by `staircase[EPS0]`: pure EPS0 x ceil(sensitivity)
    each (Geng & Viswanath 2016; `events.Staircase`)."""
    from fuzzpy.accounting.events import Repeat, Staircase, Subsample

    step: Event = Staircase(Fraction(sensitivity if sensitivity is not None else 1), eps0)
    if rate is not None and rate < 1:
        step = Subsample(rate, (step,))
    return (Repeat(rounds, (step,)),)


def _of_the_dataset(event: Event) -> Event:
    """The event with its Poisson subsamples marked as samples of the
    dataset itself (`events.Subsample.direct`), as the checker marks
    `subsample[q] f db`: `budget --subsample` samples the dataset."""
    import dataclasses

    from fuzzpy.accounting.events import Repeat, Subsample

    if isinstance(event, Subsample):
        return dataclasses.replace(event, direct=True)
    if isinstance(event, Repeat):
        return dataclasses.replace(event, body=tuple(_of_the_dataset(e) for e in event.body))
    return event


def _rr_events(args: argparse.Namespace, rounds: int) -> tuple[Event, ...]:
    """``rounds`` releases of every person's randomized-response report
    (each eps0-LDP: Warner 1965; k-ary, Wang, Blocki, Li & Jha 2017), shuffled
    with --shuffle N. A release of local reports is a replace-one release
    (`accounting.neighbours`): --neighbours add-remove-one is refused."""
    from fuzzpy.accounting.events import LocalReports, Repeat, ShuffledReports
    from fuzzpy.accounting.neighbours import LocalNeedsReplaceOne

    if args.subsample is not None or args.choose is not None or args.sensitivity != 1:
        raise usage_error("--rr takes no --subsample, --choose or --sensitivity (a report is private for any two rows)")
    eps0 = _as_written(args.rr)
    assert eps0 is not None
    report = LocalReports(eps0) if args.shuffle is None else ShuffledReports(eps0, args.shuffle)
    try:
        return _neighbours(args).resolve((Repeat(rounds, (report,)),))
    except LocalNeedsReplaceOne as exc:
        raise usage_error(f"{exc}: give --neighbours replace-one (or leave it out) with --rr") from None


def _neighbours(args: argparse.Namespace) -> Neighbours:
    from fuzzpy.accounting.neighbours import Neighbours
    from fuzzpy.accounting.row_counts import parse

    try:
        rows = parse(args.rows)
        if isinstance(rows, dict) and getattr(args, "file", None) is None:
            raise ValueError("--rows NAME=N names a program's bag parameter; without a program give --rows N")
        return Neighbours.of(args.neighbours or ("replace-one" if args.rr is not None else "add-remove-one"), rows)
    except ValueError as exc:
        raise usage_error(str(exc)) from None


def _for_relation(relation: Neighbours, events: tuple[Event, ...]) -> tuple[Event, ...]:
    """``events`` restated for ``relation``; a release of local reports is a
    replace-one release whatever the relation asked (as in `check`:
    fuzzpy.accounting.neighbours)."""
    from fuzzpy.accounting.neighbours import Neighbours, relation_of

    found = relation_of(events, relation.relation)
    if found != relation.relation:
        relation = Neighbours(found)
    return relation.resolve(events)


def _relation_mark(relation: Neighbours, events: tuple[Event, ...]) -> tuple[str, Fraction | None]:
    """The relation a program row's figure is for (`accounting.neighbours.relation_of`:
    replace-one for local reports, whatever was asked) and the person's local epsilon
    (None without local reports), as `check` marks it (issue 28: budget printed a
    local release's figure under the add/remove line, unmarked)."""
    from fuzzpy.accounting.local import has_local, local_epsilon_of
    from fuzzpy.accounting.neighbours import relation_of

    return relation_of(events, relation.relation), local_epsilon_of(events) if has_local(events) else None


def _mark_text(mark: tuple[str, Fraction | None], asked: str) -> str:
    relation, local = mark
    if relation == asked and local is None:
        return ""
    ldp = f"; {text_up(local)}-LDP per person" if local is not None else ""
    return f" ({relation}{ldp})"


def _as_written(value: float | None) -> Fraction | None:
    """The decimal a command-line number was typed as (its shortest repr)."""
    return None if value is None else Fraction(repr(float(value)))


def _release_label(args: argparse.Namespace) -> str:
    if args.rr is not None:
        what = f"randomized response eps0={text_exact(args.rr)}"
        if args.categories != 2:
            what += f", {args.categories} categories"
        if args.shuffle is None:
            return what + ", local reports"
        return what + f", shuffled (at least {args.shuffle} reports; each release by Feldman, McMillan & Talwar 2021)"
    what = (
        f"Gaussian sigma={text_exact(args.gaussian)}"
        if args.gaussian is not None
        else f"geometric (integer) eps0={text_exact(args.geometric)}"
        if args.geometric is not None
        else f"discrete Gaussian (integer) sigma={text_exact(args.dgauss)}"
        if args.dgauss is not None
        else f"staircase eps0={text_exact(args.staircase)}"
        if args.staircase is not None
        else f"Laplace eps0={text_exact(args.laplace)}"
    )
    # the inputs as typed (not rounded): the figures below are for exactly these
    if args.sensitivity != 1:
        what += f", sensitivity {text_exact(args.sensitivity)}"
    if args.subsample is not None and args.subsample < 1:
        what += f", Poisson subsampling q={text_exact(args.subsample)}"
    if args.choose is not None:
        what += f", batches of {args.choose} rows without replacement"
    return what


def _releases(args: argparse.Namespace) -> int:
    from fuzzpy.accounting.accountant import guarantees

    rounds = args.rounds or 1
    events = _release_events(args, rounds)
    delta = _default_delta(args, events)
    found = guarantees(events, _as_typed(delta))
    best = _finite_tightest(found, events, delta)
    label = f"{rounds} x {_release_label(args)}"
    seen = _views(args, events)
    shuffled = _shuffled_at_default(args, delta, events)
    if args.plot:
        if seen is not None:
            _plot_views(args, seen, label)
        else:
            _plot(args, label, delta, rounds)
    if args.json:
        _print_json(
            {
                "ok": True,
                "releases": label,
                "rounds": rounds,
                "delta": delta,
                **_neighbours(args).to_json(),
                "tightest": _guarantee_json(best),
                "methods": [_guarantee_json(g) for g in found],
                **({} if seen is None else {"views": seen.to_json()}),
                **({} if shuffled is None else {"shuffled_at_default_delta": _guarantee_json(shuffled)}),
            }
        )
        return EXIT_OK
    from fuzzpy.accounting.accountant import pure_epsilon

    print(f"{label}, at delta = {text_up(delta)}:")
    _print_table(found, best, pure_epsilon(events))
    print(f"  {_neighbours(args).text()}")
    if shuffled is not None:
        print(f"  note: shuffling amplifies only at delta > 0; at the default delta {text_up(shuffled.delta)} "
              f"(as `check` reports it) the tightest is eps = {text_up(shuffled.epsilon)} "
              f"({shuffled.method}); --delta D shows every method at D")
    if seen is not None:
        _print_views(seen)
    return EXIT_OK


def _shuffled_at_default(args: argparse.Namespace, delta: float, events: Sequence[Event]) -> Guarantee | None:
    """Shuffled reports with no --delta are pure, reported at delta 0 with no
    amplification (Feldman, McMillan & Talwar 2021 amplify to (eps, delta) for
    delta > 0 only): the tightest figure at the default delta, which `check`
    shows for the same releases, or None when --delta was given."""
    from fuzzpy.accounting.accountant import guarantees

    if args.shuffle is None or args.delta is not None or delta > 0:
        return None
    at = float(DEFAULT_DELTA)
    return _finite_tightest(guarantees(events, at), events, at)


def _accuracy(args: argparse.Namespace, asked: list[str]) -> int:
    """--accuracy X with one noise flag given without its value: the most
    private noise whose stated interval (`fuzzpy.runtime.accuracy`, what `run`
    prints for a scalar release) is within +/- X at the confidence, its
    parameter written as a program writes it, rounded toward a narrower
    interval and checked at that value; then what K such releases cost."""
    from fuzzpy.accounting.accountant import guarantees, pure_epsilon
    from fuzzpy.runtime.accuracy import DEFAULT_CONFIDENCE, noise_for_accuracy

    if args.accuracy is None:
        raise usage_error(f"--{asked[0]} needs its value (or give --accuracy X to find it)")
    if len(asked) != 1 or args.rr is not None or args.calibrate or args.file:
        raise usage_error("--accuracy X takes one of --laplace, --gaussian, --geometric, --dgauss, without its value",
                          "e.g. `fuzzpy budget --accuracy 5 --geometric`")
    if args.neighbours not in (None, "add-remove-one") or args.choose is not None:
        raise usage_error("--accuracy is for add/remove-one neighbours (Poisson --subsample allowed)")
    flag = asked[0]
    kind = {"gaussian": "gauss"}.get(flag, flag)
    confidence = _as_written(args.confidence) if args.confidence is not None else DEFAULT_CONFIDENCE
    assert confidence is not None
    try:
        choice = noise_for_accuracy(kind, _as_written(args.accuracy) or Fraction(1), confidence)
    except ValueError as exc:
        raise _failure(CALIBRATION_FAILED, f"cannot find the noise: {exc}") from None
    rounds = args.rounds or 1
    events = _accuracy_events(kind, choice.parameter, rounds, args)
    delta = _default_delta(args, events)
    found = guarantees(events, _as_typed(delta))
    best = _finite_tightest(found, events, delta)
    pure = pure_epsilon(events)
    name = "eps" if kind in ("laplace", "geometric") else "sigma"
    written = f"{kind}[{text_exact(float(choice.parameter))}]"
    level = f"{float(confidence * 100):g}%"
    integer = kind in ("geometric", "dgauss")
    if args.json:
        _print_json({"ok": True, "mechanism": kind, name: float(choice.parameter),
                     "exact": {name: str(choice.parameter)}, "accuracy": args.accuracy,
                     "half_width": float(choice.half_width), "confidence": float(confidence),
                     "rounds": rounds, "sensitivity": args.sensitivity, "subsample": args.subsample,
                     "neighbours": NEIGHBOURS, "guarantee": _guarantee_json(best)})
        return EXIT_OK
    print(f"{written}: +/- {text_up(choice.half_width)} at {level} "
          f"({'an integer release' if integer else 'per release'}; asked +/- {_plain(args.accuracy)})")
    print(f"  {rounds} release(s) at sensitivity {text_exact(args.sensitivity)}: {_describe(best, pure)} "
          f"by {best.method}")
    print(f"  {NEIGHBOURS_TEXT}")
    return EXIT_OK


def _plain(value: float) -> str:
    """A command-line number as typed (100, not 1e+02)."""
    text = repr(float(value))
    return text[:-2] if text.endswith(".0") else text


def _accuracy_events(kind: str, parameter: Fraction, rounds: int, args: argparse.Namespace) -> tuple[Event, ...]:
    from fuzzpy.accounting.calibrate import gaussian_events, laplace_events

    sensitivity, rate = _as_written(args.sensitivity), _as_written(args.subsample)
    assert sensitivity is not None
    if kind == "laplace":  # `laplace[eps]`: scale 1/eps
        return laplace_events(1 / parameter, rounds, sensitivity, rate)
    if kind == "gauss":
        return gaussian_events(parameter, rounds, sensitivity, rate)
    return _integer_events(parameter if kind == "geometric" else None, parameter if kind == "dgauss" else None,
                           rounds, sensitivity, rate)


def _calibrate(args: argparse.Namespace) -> int:
    from fuzzpy.accounting.calibrate import calibrate_gaussian, calibrate_laplace

    if args.epsilon is None:
        raise usage_error("--calibrate needs --epsilon E")
    if args.neighbours not in (None, "add-remove-one") or args.choose is not None:
        raise usage_error("--calibrate is for add/remove-one neighbours and Poisson subsampling",
                          "for replace-one, calibrate at twice the sensitivity (no subsampling), or "
                          "try scales with --gaussian SIGMA --neighbours replace-one")
    pure = args.calibrate == "laplace"
    delta = args.delta if args.delta is not None else (0.0 if pure else float(DEFAULT_DELTA))
    rounds = args.rounds or 1
    try:
        if args.calibrate == "gaussian":
            result = calibrate_gaussian(
                args.epsilon, delta, rounds, args.sensitivity, args.subsample
            )
        else:
            result = calibrate_laplace(
                args.epsilon, delta, rounds, args.sensitivity, args.subsample
            )
    except ValueError as exc:
        raise _failure(CALIBRATION_FAILED, f"cannot calibrate: {exc}") from None
    _print_calibration(args, result, rounds)
    return EXIT_OK


def _print_calibration(args: argparse.Namespace, result: Calibration, rounds: int) -> None:
    from fuzzpy.accounting.accountant import DESCRIPTIONS

    g = result.guarantee
    printed = result.printed_guarantee or g
    name = "sigma" if result.mechanism == "gaussian" else "scale"
    if args.json:
        _print_json(
            {
                "ok": True,
                "mechanism": result.mechanism,
                name: result.scale,
                "rounds": rounds,
                "neighbours": NEIGHBOURS,
                "sensitivity": args.sensitivity,
                "subsample": args.subsample,
                "guarantee": _guarantee_json(g),
                # the text's figures: the scale rounded up, re-accounted at that value
                "printed": {name: result.printed, "guarantee": _guarantee_json(printed)},
            }
        )
        return
    sampled = f" on Poisson subsamples (q={text_exact(args.subsample)})" if args.subsample else ""
    # the noise printed is the noise proved: `printed` is the least 6-digit
    # scale that meets the target, its guarantee re-accounted at that value
    print(
        f"{result.mechanism} {name} = {result.printed} for {rounds} round(s){sampled} "
        f"at sensitivity {text_exact(args.sensitivity)}"
    )
    print(f"  proves {_describe(printed)} by {DESCRIPTIONS[printed.method]}")
    print(f"  {NEIGHBOURS_TEXT}")


# ---------------------------------------------------------------- programs


def _program(args: argparse.Namespace) -> int:
    from fuzzpy.accounting.accountant import DESCRIPTIONS, guarantees, pure_epsilon
    from fuzzpy.checker.report import under
    from fuzzpy.commands.program_costs import CostsUnavailable, costs_and_parameterised

    _program_options(args)
    relation = _neighbours(args)
    try:
        with under(relation):  # parameterised definitions' expressions and calls are for this relation too
            costs, parameterised = costs_and_parameterised(args.file, args.definition,
                                                           None if args.delta is None else float(args.delta))
    except CostsUnavailable as exc:
        raise _failure(exc.code, str(exc)) from None
    _rows_fit(relation, costs)
    costs = [(name, param, _rounds(args.rounds, _for_relation(relation.for_parameter(param), events)))
             for name, param, events in costs]
    rows = []
    for name, param, events in costs:
        rows.append((name, param, _program_guarantee(events, args.delta),
                     pure_epsilon(events)))
    marks = {(name, param): _relation_mark(relation, events) for name, param, events in costs}
    if (args.plot or args.profile) and len(rows) != 1:
        raise usage_error(f"--{'plot' if args.plot else 'profile'} on a program needs one DEF with one database parameter")
    seen = _views(args, costs[0][2]) if args.profile else None
    if args.plot:
        if seen is not None:
            _plot_views(args, seen, f"{rows[0][0]} in {rows[0][1]}")
        else:
            _plot_events(args, f"{rows[0][0]} in {rows[0][1]}", rows[0][2].delta, costs[0][2])
    if args.json:
        _print_json({"ok": True, "file": args.file, **relation.to_json(), "rounds": args.rounds or 1,
                     "definitions": _definitions_json(rows, costs, args, marks, parameterised.unchecked),
                     "parameterised": parameterised.documents,
                     **({} if seen is None else {"views": seen.to_json()})})
        return EXIT_OK
    if not rows and not parameterised:
        print(f"{args.file}: no definition releases a private value")
    elif not rows:  # only definitions over static parameters: their costs are expressions
        print(f"{args.file}: every private definition is parameterised (its cost depends on its parameters)")
    for (name, param, g, pure), (_, _, events) in zip(rows, costs, strict=True):
        times = f" for {args.rounds} releases" if args.rounds and args.rounds > 1 else ""
        mark = _mark_text(marks[(name, param)], relation.relation)
        print(f"{name:20} {_describe(g, pure)}{mark} in {param}{times}   [{g.method}: {DESCRIPTIONS[g.method]}]")
        if args.definition and g.delta > 0:  # one definition: every method, side by side
            _print_table(guarantees(events, _typed(args.delta)), g, pure)
        for line in parameterised.notes.pop(name, []):  # once per definition
            print(line)
    for line in parameterised.lines:
        print(line)
    if parameterised and args.rounds and args.rounds > 1:
        print(f"(each parameterised cost above is one release's; --rounds {args.rounds} composes only the "
              "definitions with a figure)")
    if rows or parameterised:
        print(relation.text())
    if any(found != relation.relation for found, _ in marks.values()):
        from fuzzpy.checker.report import REPLACE_ONE_TEXT
        print(REPLACE_ONE_TEXT)
    if seen is not None:
        _print_views(seen)
    return EXIT_OK


def _program_options(args: argparse.Namespace) -> None:
    """A program's releases are its definitions': the options that describe
    a release flag's noise have no meaning for them, and none is silently
    ignored (review s27c): each is refused, with what to write instead."""
    given = [flag for flag, value, default in (
        ("--subsample", args.subsample, None), ("--sensitivity", args.sensitivity, 1.0),
        ("--choose", args.choose, None), ("--shuffle", args.shuffle, None), ("--categories", args.categories, 2),
        ("--epsilon", args.epsilon, None)) if value != default]
    if given:
        raise usage_error(
            f"{', '.join(given)} describe{'s' if len(given) == 1 else ''} the releases of --gaussian/--laplace/"
            "--geometric/--dgauss/--rr, not a program's definitions",
            "a definition's noise, sensitivity and subsampling are written in the program (`subsample[q] ...`, "
            "`laplace[eps] (e / s)`); `fuzzpy budget FILE DEF --rounds K` composes its releases K times")


def _rounds(rounds: int | None, events: tuple[Event, ...]) -> tuple[Event, ...]:
    """K releases of a definition: its events composed K times, sequentially
    and possibly adaptively (each later release may depend on the earlier
    ones: Dwork & Roth 2014, Thm 3.16 and 3.20 bound them)."""
    from fuzzpy.accounting.events import Repeat

    return events if rounds is None or rounds == 1 or not events else (Repeat(rounds, events),)


def _definitions_json(
    rows: list[tuple[str, str, Guarantee, Fraction | None]],
    costs: list[tuple[str, str, tuple[Event, ...]]],
    args: argparse.Namespace,
    marks: dict[tuple[str, str], tuple[str, Fraction | None]],
    unchecked: dict[str, list[str]] | None = None,
) -> list[dict[str, object]]:
    """One entry per definition, with a `privacy` entry per database parameter
    (the field names of `fuzzpy check --json`, language design section 7):
    each with the relation its figure is for, "neighbours", when not the one
    asked (local reports: replace-one), and "local_epsilon"; and the unchecked
    `assume def`s its figures rest on (FZ318), if any."""
    from fuzzpy.accounting.accountant import float_up, guarantees

    definitions: dict[str, dict[str, object]] = {}
    for (name, param, g, pure), (_, _, events) in zip(rows, costs, strict=True):
        entry = definitions.setdefault(name, {"name": name, "privacy": {}})
        privacy = _program_json(g, pure)
        found, local = marks[(name, param)]
        privacy["neighbours"] = found
        if local is not None:
            privacy["local_epsilon"] = float_up(local)
        if args.definition and g.delta > 0:
            privacy["methods"] = [_guarantee_json(m) for m in guarantees(events, _typed(args.delta))]
        entry["privacy"][param] = privacy  # type: ignore[index]
        if (unchecked or {}).get(name):
            entry["rests_on_unchecked"] = (unchecked or {})[name]
    return list(definitions.values())


def _rows_fit(relation: Neighbours, costs: Sequence[tuple[str, str, tuple[Event, ...]]]) -> None:
    """A bare --rows N only where each definition has one bag parameter; each
    NAME=N a bag parameter of one (`accounting.row_counts`)."""
    from fuzzpy.accounting.row_counts import RowsError, for_parameters

    by_definition: dict[str, list[str]] = {}
    for name, param, _ in costs:
        by_definition.setdefault(name, []).append(param)
    try:
        if relation.rows is not None:
            for name, params in by_definition.items():
                for_parameters(relation.rows, params, f"`{name}`")
        if relation.named:
            for_parameters(dict(relation.named), [p for ps in by_definition.values() for p in ps], "the program")
    except RowsError as exc:
        raise usage_error(str(exc)) from None


def _program_guarantee(events: Sequence[Event], delta: float | None) -> Guarantee:
    """Without --delta, a pure definition reports its pure epsilon and an
    approximate one epsilon at 1e-6 (the delta policy). The figure is the
    accountant's `charged_epsilon`, as `check` prints it and `run` charges it;
    only when every method is shown beside it (one DEF) are they all run: the
    unproven grid RDP alone loads dp-accounting, ~0.8 s of imports (issue 24)."""
    from fuzzpy.accounting.accountant import Guarantee, charged_epsilon, float_up, pure_epsilon
    from fuzzpy.checker.report import exact_delta

    if delta is None:
        pure = pure_epsilon(events)
        if pure is not None:
            return Guarantee(float_up(pure), 0.0, "pure")
        delta = float(DEFAULT_DELTA)
    # `check`'s and `run`'s figure, by the same function at the same exact delta (issue 25: budget
    # read 0.28 as the float above it, check as the float below, and the two disagreed)
    exact = exact_delta(delta)
    charged, method = charged_epsilon(events, exact)
    epsilon = math.inf if charged is None else float_up(charged)
    return Guarantee(epsilon, delta, method if charged is not None else "none")


def _typed(delta: float | None) -> Fraction:
    """The exact delta a user typed (or the default), as `check` reads it."""
    from fuzzpy.checker.report import exact_delta

    return exact_delta(float(DEFAULT_DELTA) if delta is None else delta)


def _program_json(g: Guarantee, pure: Fraction | None) -> dict[str, object]:
    from fuzzpy.accounting.accountant import float_up

    entry = _guarantee_json(g)
    if pure is not None:
        entry["pure_epsilon"] = float_up(pure)
    return entry


# ---------------------------------------------------------------- output


def _epsilon_text(g: Guarantee, pure: Fraction | None) -> str:
    """An epsilon rounded up (`fuzzpy.language.figures`); pure composition's from its
    exact Fraction (0.35, not the double above it, 0.350001)."""
    if g.method == "pure" and pure is not None:
        return text_up(pure)
    return text_up(g.epsilon)


def _describe(g: Guarantee, pure: Fraction | None = None) -> str:
    if math.isinf(g.epsilon):
        return f"not private at delta={text_up(g.delta)}"
    if g.delta == 0:
        return f"{_epsilon_text(g, pure)}-DP"
    return f"({_epsilon_text(g, pure)}, {text_up(g.delta)})-DP"


def _guarantee_json(g: Guarantee) -> dict[str, object]:
    from fuzzpy.accounting.accountant import DESCRIPTIONS

    return {
        "epsilon": g.epsilon if math.isfinite(g.epsilon) else "inf",
        "delta": g.delta,
        "method": g.method,
        "description": DESCRIPTIONS[g.method],
        "proven": g.proven,
    }


def _print_table(found: Sequence[Guarantee], best: Guarantee, pure: Fraction | None = None) -> None:
    from fuzzpy.accounting.accountant import DESCRIPTIONS

    for g in found:
        mark = "  <- tightest" if g.method == best.method and math.isfinite(g.epsilon) else ""
        mark = mark if g.proven else "  (float evaluation not proven: not used)"
        eps = _epsilon_text(g, pure)
        print(f"  {g.method:15} eps = {eps:>12}   {DESCRIPTIONS[g.method]}{mark}")
    if math.isinf(best.epsilon):
        print("  no method proves a finite epsilon at this delta")


def _print_json(document: object) -> None:
    sys.stdout.write(json.dumps(document, indent=2) + "\n")


def _plot(args: argparse.Namespace, label: str, delta: float, rounds: int) -> None:
    from fuzzpy.accounting.plot import plot_rounds

    delta = delta if delta > 0 else float(DEFAULT_DELTA)  # (eps, delta) methods side by side
    try:
        plot_rounds(
            lambda k: _release_events(args, k), max(rounds, 2), delta, args.plot, title=label,
            progress=_progress(args),
        )
    except OSError as exc:
        raise _failure(CANNOT_WRITE, f"cannot write {args.plot}: {exc.strerror or exc}") from None
    finally:
        _clear_progress(args)
    if not args.json:
        print(f"wrote {args.plot}")


def _plot_events(
    args: argparse.Namespace, label: str, delta: float, events: Sequence[Event]
) -> None:
    from fuzzpy.accounting.events import Repeat
    from fuzzpy.accounting.plot import plot_rounds

    rounds = args.rounds or 100
    plot_delta = delta or float(DEFAULT_DELTA)
    try:
        plot_rounds(
            lambda k: (Repeat(k, tuple(events)),),
            max(rounds, 2),
            plot_delta,
            args.plot,
            title=f"{label}, run k times",
            progress=_progress(args),
        )
    except OSError as exc:
        raise _failure(CANNOT_WRITE, f"cannot write {args.plot}: {exc.strerror or exc}") from None
    finally:
        _clear_progress(args)
    if not args.json:
        print(f"wrote {args.plot}")


def _views(args: argparse.Namespace, events: Sequence[Event]) -> PrivacyViews | None:
    from fuzzpy.accounting.profile import views

    if not args.profile:
        return None
    try:
        return views(events, progress=_progress(args))
    finally:
        _clear_progress(args)


def _print_views(seen: PrivacyViews) -> None:
    """The views in words; epsilons, rho and Renyi values rounded up, type II
    errors rounded down (`fuzzpy.accounting.profile`)."""
    print("privacy profile (each line is a proved (eps, delta)-DP guarantee):")
    print(f"  {'delta':>8}  {'eps':>10}   method")
    for p in seen.profile:
        print(f"  {text_up(p.delta):>8}  {text_up(p.epsilon):>10}   {p.method}")
    mu = "" if seen.gdp_mu is None else f"; mu-GDP with mu = {text_up(seen.gdp_mu)}"
    print(f"trade-off curve (f-DP: a test telling the neighbours apart with type I error alpha has type II error"
          f" at least beta; {seen.tradeoff_source}{mu}):")
    print("  " + "  ".join(f"{t.alpha:g}->{text_down(t.beta, 4)}" for t in seen.tradeoff))
    if seen.rho is not None:
        unamplified = " (zCDP is not amplified by subsampling: this is the releases' rho on the whole data;" \
            " the Renyi curve below is amplified)" if seen.subsampled else ""
        print(f"zCDP: rho = {text_up(seen.rho)} (Bun & Steinke 2016){unamplified}")
    if seen.renyi:
        print("Renyi DP, eps(alpha) (Mironov 2017): "
              + ", ".join(f"{text_up(e)} at {a:g}" for a, e in seen.renyi))
    else:
        print("Renyi DP: no curve (an event has a delta of its own)")


def _plot_views(args: argparse.Namespace, seen: PrivacyViews, label: str) -> None:
    from fuzzpy.accounting.plot import plot_profile

    try:
        plot_profile(seen, args.plot, label)
    except OSError as exc:
        raise _failure(CANNOT_WRITE, f"cannot write {args.plot}: {exc.strerror or exc}") from None
    if not args.json:
        print(f"wrote {args.plot}")


def _progress(args: argparse.Namespace) -> Callable[[str], None] | None:
    """Progress on stderr for a person watching: not under --json, not when
    stderr is not a terminal."""
    if args.json or not sys.stderr.isatty():
        return None

    def show(message: str) -> None:
        sys.stderr.write(f"\r\033[K{message}")
        sys.stderr.flush()

    return show


def _clear_progress(args: argparse.Namespace) -> None:
    if _progress(args) is not None:
        sys.stderr.write("\r\033[K")
