"""The linear sensitivity type checker: types, sensitivities and privacy costs.
May import `verifier`, `accounting`, `frontend`, `language`, `support`.

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
* `lengths`     -- vector lengths as type indices (unification, generalisation)
* `terms`       -- fresh names and free variables for the terms the checker builds
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
* A `num` parameter named by the epsilon of `laplace`/`expmech` is static
  (DFuzz, Gaboardi et al. POPL 2013): the definition is checked once with
  its cost a polynomial over such parameters (`SymbolicPure` events,
  `language.symbolic.Poly`), and each call, whose argument must be a
  positive static number or a polynomial over the caller's static
  parameters, checks the body again at it (`ProgramChecker.instance`);
  docs/language-notes.md, "Static parameters".
* A `(n : nat)` parameter is a symbol too (issue 27, item 1): sensitivities
  are index terms over it (`Sens(None, poly)`, `language.sensitivity`), costs
  polynomials, declared bounds decided over the naturals
  (`obligations.at_most`); where no index term can be stated the definition
  falls back to the check at each call's numbers and says why
  (`ProgramChecker.check_def`, `CheckedDef.deferred`).

Decisions of issue 9 (soundness of the checker's own logic):

* Static positions are read in the scope their meaning was proved in. A
  mechanism's `requires` and `privacy` are evaluated at each call with the
  mechanism's parameters standing for the call's arguments; a parameter
  hides a top-level constant of the same name, and an expression that needs
  a non-static argument refuses the call (FZ309). A `def`'s signature (its
  bounds `(db :[c] bag Row)`, function types `-[k]->`, result type) cannot
  name a constant hidden by one of its parameters, and a type written in a
  body is read where it stands (FZ202).
* Terms the checker builds are capture-avoiding: `loop`/`subsample` given a
  function that is not a lambda check `fun s#1 -> f s#1`, a name no user can
  write (`terms.eta_expand`). A binder that shadows another variable has its
  uses recorded under a fresh key (`db#3`), so a `let`-bound distribution,
  whose cost is replayed at each `sample` of it, is charged to the
  variables it read, not to whatever bears their names at the `sample`.
* `vec[p] num` carries its length as a type index the user does not write:
  an integer (list literals, `tabulate`, `counts`) or a variable (a
  parameter's vectors; generalised in the signature, instantiated at each
  call). `+`, `-`, `dot`, both branches of `if`/`case` and an argument and
  its parameter must have equal lengths (FZ201, the lengths in the message).
  The metric across lengths is infinite (as for lists), so values of one
  vector type have one length and `len` of a vector is public (a static
  number when the length is). `tabulate` and `counts` need lists of static
  length (FZ214). A mechanism's vector result has a length known only at run
  time (rigid: equal only to itself). Every `vsum`, and every `map` whose
  rows are vectors, records their length for `run`, which needs it when the
  bag is empty (`CheckedProgram.vector_lengths`): a number, or
  `LengthOf(param, path)` read off an argument; neither known: FZ214.
* `c * e` with a static c = 0 is recorded with e's type
  (`CheckedProgram.zero_products`): `run` does not evaluate e and gives the
  zero of its type, a vector of e's length; lengths that are variables of a
  signature are passed by each use of the definition
  (`CheckedProgram.call_lengths`); a length neither static nor a
  signature's is FZ214.
* A loop whose rounds, times those of the loops around it (also through
  calls), repeat a release more than 10^6 times is FZ217.
* A precondition `abs(dist(x)) < c` is strict: a sensitivity s meets it only
  if s < c (`<=`: s <= c); `c > abs(dist(x))` and `c >= abs(dist(x))` read
  the same way, `&&` splits preconditions, other relations are FZ311.
* Static numbers are zero or between 2.2e-308 and 1.8e308 in magnitude with
  at most 1100-bit numerators and denominators: literals beyond are FZ115
  (refused on the text, before any big number is built), static arithmetic
  beyond is FZ217 (located at the operation). `loop[k]` and `group[k]` take
  at most 10^6 rounds or buckets, `iterate[k]` 2^16 rounds (FZ217). Derived sensitivities are rounded
  up: beyond the largest double they are infinite. JSON prints costs beyond
  doubles as "inf".
* A value read in another vector norm is scaled by the conversion factor
  wherever it is read, including a lambda parameter annotated with another
  norm (`loop[k] v (fun (s : vec[1] num) -> ...)` with `v : vec[2] num`) and
  the data given to an `expmech` score.
"""

from fuzzpy.checker.driver import check_program, explain_definition, instantiate_definition

__all__ = ["check_program", "explain_definition", "instantiate_definition"]
