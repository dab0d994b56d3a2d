"""`subsample[q]` inside an engine: a keyed hash of each row's id.

An engine cannot run fuzzpy's exact Bernoulli sampler row by row, and its
own random functions are seedable and replayable (a re-executed Spark task
draws again), so a row is kept when

    int(first 60 bits of SHA-256(secret || ":" || row_id)) < floor(q * 2^60),

where `secret` is 256 bits drawn from the run's source of randomness (the
operating system's CSPRNG, `os.urandom`, for every private run; the seed for
a `--seed` run) afresh for every draw of the subsample, and `row_id` is the
row's position in its file (unique within the bag: `fuzzpy.engines.scan`).

Why this is a Poisson subsample for privacy (Balle, Barthe & Gaboardi,
"Privacy Amplification by Subsampling", NeurIPS 2018): the amplification
theorems need each row included independently with probability q, the
inclusion of the added or removed row independent of everything else, and
the sample unseen by the analyst. With SHA-256 keyed by a uniform unknown
secret modelled as a random function (a PRF: the messages all start with
the 64-character key and none is a padded extension of another, so length
extension does not apply), the 60-bit values of distinct row ids are
independent and uniform, so each row is kept independently with probability
floor(q 2^60) / 2^60, which is at most q and within 2^-60 of it. A rate
q' <= q is as good as q: a Poisson subsample at q' is one at q followed by
one at q' / q, and subsampling the input of a mechanism can only make it
more private (the inner subsample is post-processing of the outer one's
output composed with the mechanism; convexity of the hockey-stick
divergence). The secret exists only in the engine's query text: the
engine's logs and query history must not be shown to the analyst.

Row *ids*, not row contents, are hashed: two identical rows (two people
with the same values) must be kept or dropped independently; hashing the
content would keep or drop all copies together, and the copies of one
added row would then move a sample by more than one row.
"""

from __future__ import annotations

import hashlib
from fractions import Fraction

ID_BITS = 60


def keep_threshold(q: Fraction) -> int:
    """floor(q * 2^60): a row is kept when its hash is below this."""
    scaled = Fraction(q) * (1 << ID_BITS)
    return scaled.numerator // scaled.denominator


def draw_secret(source: object) -> str:
    """256 fresh random bits from the run's source, as hex."""
    words = source.words(4)  # type: ignore[attr-defined]
    return "".join(f"{int(w):016x}" for w in words)


def keeps(secret: str, row_id: int, q: Fraction) -> bool:
    """The rule, in Python (the engines' SQL is tested against it)."""
    return row_hash(secret, row_id) < keep_threshold(q)


def row_hash(secret: str, row_id: int) -> int:
    return int(hashlib.sha256(f"{secret}:{row_id}".encode()).hexdigest()[:15], 16)


def hashed_subsample_interpreter(program, source, warn, checked=None):  # type: ignore[no-untyped-def]
    """The in-memory interpreter with the engines' `subsample` rule instead
    of its exact Bernoulli draws, for comparing engines with memory (the
    differential tests): a row's id is its position among the loaded rows,
    as in a scan of a loaded file (`fuzzpy.engines.scan`)."""
    import numpy as np

    from fuzzpy.runtime.interpreter import Interpreter

    class Hashed(Interpreter):
        def subsample_mask(self, bag, q):  # type: ignore[no-untyped-def]
            ids = _row_ids(bag)
            secret, threshold = draw_secret(self.source), keep_threshold(q)
            return np.fromiter((row_hash(secret, int(i)) < threshold for i in ids), dtype=bool, count=len(ids))

    return Hashed(program, source, warn, checked)


def _row_ids(bag):  # type: ignore[no-untyped-def]
    import numpy as np

    if bag.selection is None:
        return np.arange(len(bag))
    if bag.selection.dtype == bool:
        return np.flatnonzero(bag.selection)
    return bag.selection
