"""The linear sensitivity type checker: types, sensitivities and privacy costs.

`check_program(program)` returns a `CheckedProgram` or raises `FuzzError`
with every error found. Module map:

* `driver`      -- check_program, explain_definition: declarations, defs, bounds
* `infer`       -- the Inferencer: dispatch, operators, if, return, coercions
* `literals`    -- variables, literals, tuples, records, lists and vectors
* `blocks`      -- let / sample blocks, lambdas, case
* `apply`       -- application spines: defs, function values
* `primitives`  -- the table of primitive signatures; rules in
                   `first_order`, `higher_order`, `noise`
* `mechanism_calls`, `static_eval` -- calling verified mechanisms
* `usage`       -- sensitivity contexts with provenance (the sensitivity map)
* `costs`       -- privacy contexts as mechanism events (the privacy map)
* `typerel`     -- subtyping, norm conversions; `elaborate` -- static values, types
* `explain`     -- the derivation trace for `check --explain`
* `report`      -- text and JSON output of `fuzzpy check`

Choices made where the language design is silent:

* `int <: num` (same metric); a numeric literal without a dot is an `int`.
* A distribution bound by `let m = laplace[..] e;` is charged at every
  `sample` of it (each sample runs the mechanism again), nothing if unused.
* `if`/`case` with distribution-valued branches: a condition with any
  positive sensitivity in a variable gives infinite cost in it; branch costs
  are joined by taking the larger event list when one contains the other,
  and otherwise both lists (sound: running both costs at least as much).
  Parts of a tuple of bags (`split`) join the same way, since between
  neighbours only one part changes (parallel composition).
* The sampled variable of `sample x = m` is public (already released).
* `loop[k] x0 f`: the body's cost in captured variables is a `Repeat`; its
  cost in the state is charged once, against what `x0` depends on (later
  rounds only see released states).
* A function value returning a distribution (a partially applied `def`) is
  s-sensitive in max divergence for s its pure epsilon; calling it costs a
  black-box pure event (`Verified("function value", eps)`).
* Events scale with a sensitivity factor: Laplace, Gaussian and the
  exponential mechanism exactly (their sensitivity scales); other events by
  group privacy over ceil(factor) for factors above 1.
* `laplace` also takes a `list num` (the list metric, the sum, is L1).
* A mechanism's private argument must move by at most the distance its proof
  assumes (1 for `vec[p]`, c for `requires abs(dist(x)) <= c`); preconditions
  on neighbours of any other form are refused (FZ311).
* A `def` returning a distribution reports as each parameter's sensitivity
  its pure epsilon in it (Fuzz's max-divergence metric); an approximate cost
  is `inf` there (`ParamInfo.sensitivity`), with its events in
  `CheckedDef.privacy` (`check` prints the epsilon at the reported delta).
* Math: `sigmoid` is 1/4-Lipschitz, `min`/`max` 1 in each argument; `exp`,
  `log`, `sqrt`, `floor`, `dot` and products of non-constants are infinite.
  `dot w v` with `w` a list literal of static numbers is ||w||_q in `v`
  (Hoelder, q dual to v's norm); a list literal there takes the other
  vector's norm (L2 when both are literals).
* A distribution is never part of data: types such as `(fuzzy num, num)`,
  `list (fuzzy A)`, `fuzzy num + B` or `fuzzy (fuzzy A)` are refused
  (FZ213), and `==` / `!=` compare data only (not distributions, FZ213;
  not functions, FZ201). A function may return a distribution.
* `(fun x y -> e) a b`: unannotated parameters take the arguments' types.
  `if c then inl a else inr b` infers the sum from its two branches.
* `loop[k] x0 f`: the state has the expected result's type when known,
  else x0's type with integers read as `num` (`loop[k] (0, 0) f` may carry
  noisy reals).
* Printed approximate epsilons (floats from the accountant) are rounded up
  to 6 significant digits, never down.
"""

from fuzzpy.checker.driver import check_program, explain_definition

__all__ = ["check_program", "explain_definition"]
