"""What the checker produces: the typed, costed view of a program.

This is the contract between the checker and its consumers (the CLI's
`check` output, the interpreter, the ledger). The checker fills it in.
"""

from __future__ import annotations

from dataclasses import field
from fractions import Fraction

from fuzzpy.accounting.events import Event
from fuzzpy.checker.assumed import Assumption
from fuzzpy.language.diagnostics import Diagnostic
from fuzzpy.language.library import is_library_file
from fuzzpy.language.sensitivity import Sens
from fuzzpy.language.source import Span
from fuzzpy.language.symbolic import Poly
from fuzzpy.language.syntax import DefDecl, MechanismDecl, Program
from fuzzpy.language.types import LenVar, Type
from fuzzpy.support.records import frozen


@frozen
class LengthOf:
    """A vector length known once the arguments of the definition that
    contains it are: the length of the vector found in the argument for
    ``param`` by following ``path``, whose steps are a record field's name,
    a tuple component's index (an int), or "rows" (the width of a bag of
    vectors: its number of columns, known even when the bag is empty)."""

    param: str
    path: tuple[str | int, ...] = ()


#: The length of the vectors a `vsum` sums or a `map` makes: a number, or read off an argument.
VectorLength = int | LengthOf

#: A length `run` needs while it evaluates a definition's body: a number, or
#: a length variable of that definition's signature (`CheckedDef.params`),
#: whose value the caller passes (`CheckedProgram.call_lengths`) or `run`
#: reads off the arguments (`fuzzpy.runtime.lengths`).
RunLength = int | LenVar


@frozen
class ParamInfo:
    name: str
    type: Type
    sensitivity: Sens


@frozen
class CheckedDef:
    """A definition's inferred signature and privacy cost.

    ``privacy`` maps every `bag` parameter of a definition whose result is
    `fuzzy` to the mechanism events it performs on that database.

    Vector types carry their length (`types.TVec.length`): an int, or a
    `types.LenVar` shared by the parameters whose vectors must have the same
    length (`run` checks the arguments against them before reading data).
    """

    name: str
    decl: DefDecl
    params: tuple[ParamInfo, ...]
    result: Type
    privacy: dict[str, tuple[Event, ...]] = field(default_factory=dict)
    #: The parameters that stand in a noise scale (DFuzz-style static
    #: parameters, docs/semantics.md "Static parameters"): the definition is
    #: checked once with them as symbols and again at each call's numbers.
    #: Such a definition has no event list (``privacy`` is empty): its cost
    #: in each `bag` parameter is a polynomial over them (None: not pure),
    #: and `run` refuses it as an entry point (give it numbers in a caller).
    static_params: tuple[str, ...] = ()
    symbolic_privacy: dict[str, Poly | None] = field(default_factory=dict)
    #: The delta of a `symbolic_privacy` cost that is (eps, delta)-DP rather
    #: than pure (`gauss_dp[s, eps, delta]` over parameters), by parameter;
    #: absent for a pure cost.
    symbolic_delta: dict[str, Poly] = field(default_factory=dict)
    #: The `bag` parameters of such a definition that release local reports
    #: (`local`, `shuffle`), each with its local epsilon when that is a number:
    #: their guarantee is for replace-one neighbours, each person's LDP
    #: beside it (`accounting.local`), so no add/remove expression is stated
    #: for them (their ``symbolic_privacy`` is None: each call's numbers give it).
    local_reports: dict[str, Fraction | None] = field(default_factory=dict)

    @property
    def result_is_fuzzy(self) -> bool:
        from fuzzpy.language.types import TFuzzy

        return isinstance(self.result, TFuzzy)
    #: Every parameter that is not a `bag` and whose cost is finite but not
    #: pure (Gaussian noise on a `num`/`vec` argument; Duet's Gaussian rule,
    #: Near et al. OOPSLA 2019): the events it performs on that argument,
    #: reported as an (eps, delta) guarantee like a bag's. A pure cost stays
    #: the parameter's sensitivity (Fuzz's max-divergence metric). Nothing is
    #: charged for it: an argument of `run` is public; a caller that passes
    #: data re-expresses these events in its own variables.
    argument_privacy: dict[str, tuple[Event, ...]] = field(default_factory=dict)
    #: The static parameters named where a number is needed (a `gauss`
    #: sigma, a `loop` count, a clamp bound, a sampling rate, an epsilon
    #: under `subsample`), each with the first such position: the
    #: definition has no cost expression (every `symbolic_privacy` entry is
    #: None) and is checked at each call's numbers only.
    deferred: tuple[tuple[str, str], ...] = ()
    #: The `bag` parameters whose whole cost is ONE noise draw's event, each
    #: with a number naming that draw (parameters read by the same draw have
    #: the same number): `run` giving them the same dataset charges that
    #: draw once at the summed sensitivity (`checker.costs.merge_events`).
    draws: dict[str, int] = field(default_factory=dict)
    #: an `assume def`: its declared sensitivities beyond the rules, and
    #: whether z3 proved them (`fuzzpy.checker.assumed`)
    assumption: Assumption | None = None
    #: the `assume def`s whose declarations z3 could not check and that this
    #: definition uses (itself included, transitively) and whose declared
    #: bound its figures use (`driver._where_bounds_are_used`): every figure
    #: it reports rests on them, and `check` and `run` say so
    rests_on: tuple[str, ...] = ()
    #: `privacy zcdp[delta]`: the delta its rho-zCDP cost is converted at
    #: (Bun & Steinke 2016); None: the default measure
    zcdp_delta: Fraction | None = None


@frozen
class Instance:
    """A definition with static parameters at one call's numbers: the
    events it performs on each `bag` parameter there (the check of the
    program written with those numbers)."""

    values: tuple[tuple[str, Fraction], ...]
    privacy: dict[str, tuple[Event, ...]]
    #: each other parameter's sensitivity there (what a deterministic
    #: definition's call states)
    sensitivities: tuple[tuple[str, Sens], ...] = ()

    def assignment(self) -> str:
        return ", ".join(f"{name} = {Sens(value)}" for name, value in self.values)


@frozen
class CheckedProgram:
    program: Program
    definitions: dict[str, CheckedDef]
    mechanisms: dict[str, MechanismDecl]
    constants: dict[str, object]  # static `let` constants: name -> Fraction
    warnings: tuple[Diagnostic, ...] = ()
    #: What `run` needs to know of vector lengths when a bag is empty, keyed
    #: by the span of the node: for every `vsum[c]` node, the length of the
    #: vectors it sums (the sum of an empty bag is that many zeros); for every
    #: `map` node whose rows are vectors, their length (the width of the
    #: result when the bag is empty). Bags of vectors that are parameters
    #: carry their width (a data file's columns; a caller's `map`).
    vector_lengths: dict[Span, VectorLength] = field(default_factory=dict)
    #: Every product `c * e` or `e * c` with a static c = 0, keyed by the
    #: span of the product: e is scaled by 0, so `run` does not evaluate it
    #: and gives the zero of e's type instead: None when e is a number, else
    #: the length of the vector e (docs/semantics.md, "What the checker
    #: scales by 0 is not evaluated").
    zero_products: dict[Span, RunLength | None] = field(default_factory=dict)
    #: At every use of a definition whose body needs lengths of its
    #: signature (a zero-scaled vector, or a call that needs them), keyed by
    #: the span of the definition's name there: each of those signature
    #: variables with its value in the caller (dictionary passing, as type
    #: classes are compiled).
    call_lengths: dict[Span, dict[LenVar, RunLength]] = field(default_factory=dict)
    #: Every `len v` of a vector, keyed by the span of the application: the
    #: length from v's type. The checker gives `len` no dependence on v, so
    #: `run` takes the length from here and does not evaluate v (it may fail
    #: or not terminate on one neighbour only: adversarial review of issue 9).
    length_reads: dict[Span, RunLength] = field(default_factory=dict)
    #: Every lambda, by its span: the variables it captures and uses with a
    #: sensitivity above 0. `run` evaluates them when it makes the closure at
    #: macro level, so that a per-row function never forces a macro-level
    #: binding only on the rows that reach it (adversarial review of issue 9,
    #: round 2, G2). What it uses at 0 is still never evaluated.
    captures: dict[Span, frozenset[str]] = field(default_factory=dict)
    #: Every lambda, by its span: the local variables it reads but uses at
    #: sensitivity 0 and at no cost, with their types. A closure made at
    #: macro level holds, for each such binding not yet evaluated, the default
    #: of its type (`runtime.defaults.type_default`) instead: its result does
    #: not depend on the value, and a row forcing the binding (by value, per
    #: row) could fail on some datasets only (review s29d: `map (fun r -> {
    #: let (a, b) = (1, z); a }) db` with `z = deep (size db)`).
    zero_captures: dict[Span, dict[str, Type]] = field(default_factory=dict)
    #: Every definition with static parameters, at the numbers its calls gave
    #: (in the order first met); `check` prints each one's concrete cost.
    instances: dict[str, tuple[Instance, ...]] = field(default_factory=dict)

    def own_definitions(self) -> dict[str, CheckedDef]:
        """The program's own definitions, without those it imported from the
        standard library (which `check` does not list: they are checked, and
        used, like the program's own)."""
        return {n: d for n, d in self.definitions.items() if not is_library_file(d.decl.span.file)}
