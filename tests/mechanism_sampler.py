"""Many runs of a mechanism at once, with numpy's float noise (the statistical
net, issue 23 item 3).

The runtime (fuzzpy/runtime/mechanisms.py) runs a mechanism with exact
arithmetic and exact continuous noise, at about 0.3 ms a run: too slow for the
10^5-10^6 runs per input a statistical lower bound on epsilon needs. The lane
runner of `fuzzpy audit` (`fuzzpy.runtime.lanes`: every variable an array with
one lane per run, an `if` both arms under complementary masks, a `while` until
no lane's condition holds, `return` retiring its lanes) runs the body here; only
the noise differs: numpy's float64 Laplace / exponential (`lapplus`) noise,
NOT the runtime's exact sampler, so that the net does not lean on the samplers
it also checks. Float rounding moves probabilities by far less than the
confidence intervals' widths; tests/test_mechanism_neighbours.py checks that
both samplers agree in distribution on a few mechanisms.
"""

from __future__ import annotations

from fractions import Fraction
from typing import Any

import numpy as np

from fuzzpy.language import syntax as S
from fuzzpy.runtime.lanes import MAX_ITERATIONS, Outputs, Unsupported, _Lanes, row_keys

__all__ = ["MAX_ITERATIONS", "Outputs", "Unsupported", "row_keys", "sample"]


def sample(decl: S.MechanismDecl, constants: dict[str, Fraction], args: dict[str, object], n: int,
           rng: np.random.Generator) -> Outputs:
    """n runs of ``decl`` on ``args`` (parameter name -> number, bool or list of numbers)."""
    runner = _FloatLanes(n, rng, constants)
    for param in decl.params:
        runner.env[param.name] = runner.constant(args[param.name])
    runner.block(decl.body, np.ones(n, dtype=bool))
    return runner.result()


class _FloatLanes(_Lanes):
    def __init__(self, n: int, rng: np.random.Generator, constants: dict[str, Fraction]) -> None:
        super().__init__(n, rng, constants)  # type: ignore[arg-type]
        self.float_rng = rng

    def _noise(self, expr: S.Noise) -> Any:
        scale = self._scalar(self.expr(expr.scale))
        if np.any(self.mask & ~(scale > 0)):
            raise Unsupported("a noise scale that is not positive")  # the runtime fails (FZ517)
        scale = np.where(scale > 0, scale, 1.0)  # lanes whose value is not used
        if expr.kind == "lap":
            return self.float_rng.laplace(0.0, 1.0, self.n) * scale
        if expr.kind == "gauss":
            return self.float_rng.normal(0.0, 1.0, self.n) * scale
        return self.float_rng.exponential(1.0, self.n) * scale  # `lapplus`: one-sided, density e^-x/b / b
