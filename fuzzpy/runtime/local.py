"""Exact samplers for randomized response and k-ary randomized response.

No floating-point coin: the report keeps the truth with probability exactly
e^eps / (e^eps + k - 1) for rational eps, by rejection from the project's
exact Bernoulli(exp(-gamma)) sampler (Canonne, Kamath & Steinke 2020, Alg. 1;
`samplers.bernoulli_exp_fraction`): propose a report uniformly among the k
values; accept the true value always and any other value with probability
e^{-eps}. A proposal is accepted with probability (1 + (k - 1) e^{-eps}) / k,
and given acceptance the report is the truth with probability
1 / (1 + (k - 1) e^{-eps}) = e^eps / (e^eps + k - 1), each other value with
1 / (e^eps + k - 1): exactly k-RR (Warner 1965 for k = 2; Wang et al. 2017).
"""

from __future__ import annotations

from fractions import Fraction
from typing import TYPE_CHECKING

from fuzzpy.runtime.bag import Bag, column_from_rows, dummy_row
from fuzzpy.runtime.randomness import RandomSource
from fuzzpy.runtime.samplers import bernoulli_exp_fraction
from fuzzpy.runtime.values import Function, Fuzzy, RuntimeFailure, Value, force

if TYPE_CHECKING:
    from fuzzpy.runtime.interpreter import Interpreter


def krr(value: int, k: int, epsilon: Fraction, source: RandomSource) -> int:
    """One k-RR report of ``value`` in {0, .., k-1}."""
    if not 0 <= value < k:
        raise ValueError(f"k-RR value {value} outside 0..{k - 1}")
    if k == 1:
        return 0
    while True:
        proposal = source.below_one(k)
        if proposal == value or bernoulli_exp_fraction(Fraction(epsilon), source):
            return proposal


def rr(value: bool, epsilon: Fraction, source: RandomSource) -> bool:
    """One randomized-response report of a bit (k-RR with k = 2)."""
    return bool(krr(int(value), 2, epsilon, source))


def shuffled(values: list[Value], source: RandomSource) -> list[Value]:
    """A uniformly random permutation of ``values`` (Fisher-Yates with exact
    uniform integers): the shuffler of the shuffle model."""
    out = list(values)
    for i in range(len(out) - 1, 0, -1):
        j = source.below_one(i + 1)
        out[i], out[j] = out[j], out[i]
    return out


# ---------------------------------------------------------------- the language's primitives


def _bit(value: object) -> bool:
    import numpy

    if isinstance(value, bool | numpy.bool_):
        return bool(value)
    raise RuntimeFailure("FZ516", "`rr` randomises a bool")


def _category(value: object, k: int) -> int:
    """A category in 0..k-1: a value outside is clamped into the range (a
    deterministic step before the randomiser, as the checker documents)."""
    try:
        whole = int(Fraction(value))  # type: ignore[call-overload]
    except (TypeError, ValueError) as exc:
        raise RuntimeFailure("FZ516", "`krr` randomises an int") from exc
    return min(max(whole, 0), k - 1)


def rr_primitive(interp: Interpreter, args: list[Fraction]) -> Function:
    (eps,) = args
    return Function("rr", 1, lambda b: Fuzzy(lambda: rr(_bit(force(b)), eps, interp.source)))


def krr_primitive(interp: Interpreter, args: list[Fraction]) -> Function:
    eps, k = args
    cats = int(k)
    return Function("krr", 1, lambda v: Fuzzy(lambda: krr(_category(force(v), cats), cats, eps, interp.source)))


def _reports(interp: Interpreter, func: Value, db: Value, what: str) -> list[Value]:
    """One report per row: the randomiser run on each row, its draw sampled."""
    from fuzzpy.runtime.interpreter import ROW, exact_value

    if not isinstance(db, Bag):
        raise RuntimeFailure("FZ516", f"`{what}` expects a bag")
    out: list[Value] = []
    with interp.per_row(ROW, 1):
        for row in db.rows():
            interp.fresh_row()
            draw = force(func)(row)
            if not isinstance(draw, Fuzzy):
                raise RuntimeFailure("FZ516", f"the randomiser given to `{what}` must be `fuzzy`")
            out.append(exact_value(draw.sample()))
    return out


def _bag_of(values: list[Value], interp: Interpreter, func: Value, db: Bag) -> Bag:
    from fuzzpy.runtime.interpreter import ROW, exact_value

    if values:
        return Bag(column_from_rows(values))
    with interp.per_row(ROW, 1):  # the shape of a report, from the public all-zero row
        draw = force(func)(dummy_row(db.source))
        template = exact_value(draw.sample()) if isinstance(draw, Fuzzy) else None
    return Bag(column_from_rows([], template))


def local_function(interp: Interpreter) -> Function:
    def run(func: Value, db: Value) -> Fuzzy:
        def draw() -> Value:
            bag = force(db)
            if not isinstance(bag, Bag):
                raise RuntimeFailure("FZ516", "`local` expects a bag")
            return _bag_of(_reports(interp, func, bag, "local"), interp, func, bag)

        return Fuzzy(draw)

    return Function("local", 2, run)


def shuffle_primitive(interp: Interpreter, args: list[Fraction]) -> Function:
    (n,) = args
    least = int(n)

    def run(func: Value, db: Value) -> Fuzzy:
        def draw() -> Value:
            bag = force(db)
            if not isinstance(bag, Bag):
                raise RuntimeFailure("FZ516", "`shuffle` expects a bag")
            if len(bag) < least:  # the guarantee was computed for at least n reports
                # (the message does not say how many rows there are: the
                # refusal itself is all that depends on the size)
                raise RuntimeFailure(
                    "FZ519", f"`shuffle[{least}]` is charged for at least {least} reports, but the bag has fewer rows"
                )
            reports = shuffled(_reports(interp, func, bag, "shuffle"), interp.source)
            return _bag_of(reports, interp, func, bag)

        return Fuzzy(draw)

    return Function("shuffle", 2, run)


def rr_estimate_primitive(interp: Interpreter, args: list[Fraction]) -> Function:
    """(c - n (1 - p)) / (2 p - 1), exact in the reports, p = e^eps / (e^eps + 1)
    evaluated as an exact real (post-processing of released reports)."""
    (eps,) = args

    def estimate(reports: Value) -> Value:
        bag = force(reports)
        if not isinstance(bag, Bag):
            raise RuntimeFailure("FZ516", "`rr_estimate` expects a bag of reports")
        values = [bool(v) for v in bag.rows()]
        p = _keep_probability(eps, 2)
        return (Fraction(sum(values)) - len(values) * (1 - p)) / (2 * p - 1)

    return Function("rr_estimate", 1, estimate)


def krr_estimate_primitive(interp: Interpreter, args: list[Fraction]) -> Function:
    """(c_v - n q) / (p - q) per category (Wang et al. 2017)."""
    eps, k = args
    cats = int(k)

    def estimate(reports: Value) -> Value:
        bag = force(reports)
        if not isinstance(bag, Bag):
            raise RuntimeFailure("FZ516", "`krr_estimate` expects a bag of reports")
        counts = [0] * cats
        for v in bag.rows():
            counts[_category(v, cats)] += 1
        p = _keep_probability(eps, cats)
        q = (1 - p) / (cats - 1)
        n = sum(counts)
        return [(Fraction(c) - n * q) / (p - q) for c in counts]

    return Function("krr_estimate", 1, estimate)


def _keep_probability(eps: Fraction, k: int) -> Fraction:
    """e^eps / (e^eps + k - 1) to 60 significant digits, as a Fraction (the
    estimate is post-processing: its arithmetic need not be exact)."""
    from mpmath import exp as mexp
    from mpmath import mp, mpf

    with mp.workdps(60):
        e = mexp(mpf(eps.numerator) / eps.denominator)
        return Fraction(str(e / (e + k - 1)))
