"""Sources of random bits for the exact samplers.

Every sampler in `fuzzpy.runtime.samplers` consumes only uniformly random
64-bit words and turns them into exact integer draws by rejection; no
floating-point number ever enters a noise computation.

* `SecureSource` reads the operating system's CSPRNG (`os.urandom`, the same
  source as the `secrets` module): the default for every private run.
* `SeededSource` is a reproducible generator (numpy's PCG64) for tests and
  `--seed`; a release made with it is *not* private, since anyone who knows
  the seed can subtract the noise.
"""

from __future__ import annotations

import os
from abc import ABC, abstractmethod
from array import array

from fuzzpy.support.lazy import lazy

np = lazy("numpy")

_WORD_BITS = 64


_BUFFER_WORDS = 4096


class RandomSource(ABC):
    """Uniform random words, and exact uniform integers derived from them.

    Small requests are served from a buffer of pre-drawn words (one system
    call per 4096 words instead of one per draw); every word is used once.
    """

    private: bool = True

    def __init__(self) -> None:
        self._buffer: np.ndarray | None = None  # drawn on the first array request
        self._position = 0
        self._scalar_words: list[int] = []

    @abstractmethod
    def _generate(self, count: int) -> np.ndarray:
        """`count` fresh independent uniform uint64 words."""

    def _generate_ints(self, count: int) -> list[int]:
        """The same words as `_generate`, as Python ints."""
        return self._generate(count).tolist()

    def words(self, count: int) -> np.ndarray:
        """`count` independent uniform uint64 words."""
        if count > _BUFFER_WORDS // 4:
            return self._generate(count)
        if self._buffer is None or self._position + count > self._buffer.size:
            self._buffer = self._generate(_BUFFER_WORDS)
            self._position = 0
        start = self._position
        self._position += count
        return self._buffer[start : self._position]

    # -- derived exact draws

    def bits(self, count: int) -> np.ndarray:
        """`count` fair bits as a bool array (64 from each word)."""
        words = self.words((count + 63) // 64)
        return np.unpackbits(words.view(np.uint8))[:count].view(bool)

    def below(self, bound: int, count: int) -> np.ndarray:
        """`count` exact uniform integers in [0, bound) as int64 (1 <= bound < 2^62).

        Rejection from the top ``bound.bit_length()`` bits of a uniform chunk:
        every accepted value is equally likely, and a draw is accepted with
        probability bound / 2^bits >= 1/2. Small bounds take 8-, 16- or 32-bit
        chunks of a word (each chunk is itself uniform and independent), so
        that a coin flip does not spend 64 random bits.
        """
        if not 1 <= bound < 2**62:
            raise ValueError(f"bound {bound} outside [1, 2^62)")
        if bound == 1:
            return np.zeros(count, dtype=np.int64)
        nbits = (bound - 1).bit_length()
        chunk = next(c for c in (np.uint8, np.uint16, np.uint32, np.uint64) if np.iinfo(c).bits >= nbits)
        chunk_bits = np.iinfo(chunk).bits
        per_word = 64 // chunk_bits
        shift = chunk(chunk_bits - nbits)
        accept = bound / 2.0**nbits
        parts = []
        filled = 0
        while filled < count:
            need = count - filled
            wanted = int(need / accept * 1.05) + 16
            chunks = self.words(-(-wanted // per_word)).view(chunk) >> shift
            draws = chunks[chunks < bound][:need].astype(np.int64)
            parts.append(draws)
            filled += draws.size
        return parts[0] if len(parts) == 1 else np.concatenate(parts) if parts else np.zeros(0, dtype=np.int64)

    def below_by_remainder(self, bound: int, count: int) -> np.ndarray:
        """`count` exact uniform integers in [0, bound) as int64 (1 <= bound < 2^62),
        one 64-bit word each: a word w below 2^64 - (2^64 mod bound), the
        largest multiple of bound, gives w mod bound, uniform; the other
        words (a fraction below bound / 2^64) are drawn again. Cheaper than
        `below` for a bound just above a power of two (which rejects up to
        half of its draws); different words, so kept for the samplers that
        are new with it (`samplers.discrete_gaussian_array`)."""
        if not 1 <= bound < 2**62:
            raise ValueError(f"bound {bound} outside [1, 2^62)")
        divisor = np.uint64(bound)
        words = self.words(count)
        out = (words % divisor).astype(np.int64)
        if 2**64 % bound == 0:  # a power of two: every word is used
            return out
        limit = np.uint64(2**64 - 2**64 % bound)
        again = np.flatnonzero(words >= limit)
        while again.size:
            words = self.words(again.size)
            fits = words < limit
            out[again[fits]] = (words[fits] % divisor).astype(np.int64)
            again = again[~fits]
        return out

    def word(self) -> int:
        """One uniform 64-bit word as a Python int (the scalar samplers' path)."""
        if not self._scalar_words:
            self._scalar_words = self._generate_ints(_BUFFER_WORDS)
        return self._scalar_words.pop()

    def below_one(self, bound: int) -> int:
        """One exact uniform integer in [0, bound), any bound >= 1."""
        nbits = (bound - 1).bit_length()
        if nbits > 64:
            return self.big_below(bound)
        shift = 64 - nbits
        while True:
            value = self.word() >> shift
            if value < bound:
                return value

    def big_below(self, bound: int) -> int:
        """One exact uniform integer in [0, bound) for an arbitrarily large bound."""
        if bound < 1:
            raise ValueError("bound must be positive")
        nbits = (bound - 1).bit_length()
        if nbits == 0:
            return 0
        nwords = (nbits + 63) // 64
        excess = nwords * 64 - nbits
        while True:
            value = 0
            for word in self.words(nwords).tolist():
                value = (value << 64) | int(word)
            value >>= excess
            if value < bound:
                return value


class SecureSource(RandomSource):
    """Words from the operating system's cryptographically secure generator."""

    private = True

    def _generate(self, count: int) -> np.ndarray:
        return np.frombuffer(os.urandom(8 * count), dtype=np.uint64)

    def _generate_ints(self, count: int) -> list[int]:
        # the same words without numpy (a run that draws only scalars need
        # not import it): native-order 64-bit unsigned, as np.uint64 reads them
        words = array("Q", os.urandom(8 * count))
        assert words.itemsize == 8
        return words.tolist()


class SeededSource(RandomSource):
    """Reproducible words from a seed: for tests and `--seed` (not private)."""

    private = False

    def __init__(self, seed: int) -> None:
        super().__init__()
        self._generator = np.random.Generator(np.random.PCG64(seed))

    def _generate(self, count: int) -> np.ndarray:
        return self._generator.integers(0, 2**64, size=count, dtype=np.uint64, endpoint=False)
