"""The local model: randomized response and the guarantees of local reports.

* Randomized response (Warner 1965): a person holding a bit reports it with
  probability e^eps / (e^eps + 1) and flips it otherwise. For any two inputs
  and any report the likelihood ratio is at most e^eps, attained: the exact
  local epsilon is ln(e^eps) = eps (`rr_exact_epsilon` computes it from the
  report probabilities, independently of the construction).
* k-ary randomized response (Wang, Blocki, Li & Jha, USENIX Security 2017,
  "direct encoding"): a value in {0, .., k-1} is reported with probability
  e^eps / (e^eps + k - 1), each other value with 1 / (e^eps + k - 1); exact
  local epsilon eps again.
* Local model (Kasiviswanathan, Lee, Nissim, Raskhodnikova & Smith 2011): a
  per-row randomiser R is eps-LDP when R(x) and R(x') are e^eps-close for
  ANY two rows. Releasing every person's report (each row randomised once,
  independently) is eps-DP in the central model for datasets differing in one
  person's row (parallel composition over rows; the number of reports is the
  number of rows, so it is public: replace-one neighbours).
* Debiasing the reports (counts -> unbiased estimates) is post-processing:
  it costs nothing more.
"""

from __future__ import annotations

import math
from fractions import Fraction
from typing import TYPE_CHECKING

from fuzzpy.accounting.events import (
    Event,
    Group,
    LocalReports,
    Repeat,
    ShuffledReports,
    Subsample,
)
from fuzzpy.accounting.rounding import MP_PREC, fraction_up_mp, mp_of

if TYPE_CHECKING:
    import mpmath


def has_local(events: tuple[Event, ...]) -> bool:
    """Whether some event releases local reports (replace-one guarantees)."""
    for event in events:
        if isinstance(event, LocalReports | ShuffledReports):
            return True
        if isinstance(event, Repeat | Subsample | Group) and has_local(event.body):
            return True
    return False


def has_shuffled(events: tuple[Event, ...]) -> bool:
    """Whether some event releases shuffled reports ((eps, delta) guarantees)."""
    for event in events:
        if isinstance(event, ShuffledReports):
            return True
        if isinstance(event, Repeat | Subsample | Group) and has_shuffled(event.body):
            return True
    return False


def local_epsilon_of(events: tuple[Event, ...]) -> Fraction | None:
    """The local guarantee a person gets from the reports of these events: the
    largest local epsilon of one release, times the releases of it (a person
    reporting again in each of k runs of a loop is k eps-LDP by composition);
    None without local reports. Group sizes (k rows per person) multiply."""
    total = Fraction(0)
    found = False
    for event in events:
        if isinstance(event, LocalReports | ShuffledReports):
            total += Fraction(event.epsilon)
            found = True
        elif isinstance(event, Repeat | Group | Subsample):
            inner = local_epsilon_of(event.body)
            if inner is not None:
                found = True
                factor = event.count if isinstance(event, Repeat) else (
                    math.ceil(event.size) if isinstance(event, Group) else 1)
                total += inner * factor
    return total if found else None


SHUFFLE_METHOD = "fmt2021"  # Feldman, McMillan & Talwar 2021, "Hiding among the clones" (`accounting.shuffle`)


def shuffle_method(events: tuple[Event, ...], method: str) -> str:
    """The method named for a figure of shuffled reports that is below their
    local epsilon (so shuffling amplified it): FMT 2021's bound, composed
    with the others by ``method`` when the release holds more events."""
    if method.startswith(SHUFFLE_METHOD):  # the accountant named it already
        return method
    single = len(events) == 1 and isinstance(events[0], ShuffledReports)
    return SHUFFLE_METHOD if single else f"{SHUFFLE_METHOD} + {method}"


def replace_one_view(events: tuple[Event, ...]) -> tuple[Event, ...]:
    """The events as costs for replace-one neighbours when some release local
    reports (else unchanged): `accounting.neighbours.resolve` under
    replace-one, the one conversion between relations (a replacement is a
    removal and an addition: Dwork & Roth 2014, Thm 2.2)."""
    if not has_local(events):
        return events
    from fuzzpy.accounting.neighbours import REPLACE_ONE, resolve

    return resolve(events, REPLACE_ONE)


def report_probabilities(epsilon: Fraction, k: int) -> tuple[mpmath.mpf, mpmath.mpf]:
    """(P[report = truth], P[report = one given other value]) for k-RR at eps
    (k = 2 is Warner's randomized response)."""
    import mpmath
    from mpmath import mp

    with mp.workprec(MP_PREC):
        e = mpmath.exp(mp_of(epsilon))
        return e / (e + k - 1), 1 / (e + k - 1)


def rr_exact_epsilon(epsilon: Fraction, k: int = 2) -> Fraction:
    """The exact local epsilon of k-RR at eps: the largest log likelihood
    ratio over every pair of inputs and every report, from the report
    probabilities (rounded up)."""
    if k < 2:
        return Fraction(0)  # one category: the report is constant
    import mpmath
    from mpmath import mp

    with mp.workprec(MP_PREC):
        truth, other = report_probabilities(epsilon, k)
        ratios = [truth / other, other / truth, other / other] if k > 2 else [truth / other, other / truth]
        return fraction_up_mp(mpmath.log(max(ratios)))


def debias_count(reported_true: int, n: int, epsilon: Fraction) -> mpmath.mpf:
    """An unbiased estimate of how many of n people hold `true`, from the
    number of `true` reports of RR at eps: (c - n (1 - p)) / (2 p - 1)."""
    from mpmath import mp

    with mp.workprec(MP_PREC):
        p, _ = report_probabilities(epsilon, 2)
        return (reported_true - n * (1 - p)) / (2 * p - 1)


def debias_histogram(reported: list[int], epsilon: Fraction) -> list[mpmath.mpf]:
    """Unbiased estimates of the k category counts from k-RR reports' counts
    (Wang et al. 2017): (c_v - n q) / (p - q)."""
    k, n = len(reported), sum(reported)
    from mpmath import mp

    with mp.workprec(MP_PREC):
        p, q = report_probabilities(epsilon, k)
        return [(c - n * q) / (p - q) for c in reported]
