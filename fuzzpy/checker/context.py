"""What the checker knows while it walks a definition.

* `Judgment`: the result of checking one expression, Fuzz's `Γ ⊢ e : A`
  read bottom-up: its type, its sensitivity context (`usage.Ctx`), and, for
  expressions of type `fuzzy A`, its privacy context (`costs.CostCtx`).
* `Env`: the variables in scope with their types (a dict with shadowing
  undone on exit, so lookups are O(1) however deep the block).
* `DefSig`: a checked definition's interface, used by its callers.
* `Globals`: top-level constants, type aliases, definitions, mechanisms.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from fractions import Fraction

from fuzzpy.checker.costs import Cost, CostCtx
from fuzzpy.checker.result import RunLength, VectorLength
from fuzzpy.checker.terms import fresh_name
from fuzzpy.checker.usage import Ctx
from fuzzpy.language import syntax as S
from fuzzpy.language import types as T
from fuzzpy.language.sensitivity import Sens
from fuzzpy.language.source import Span
from fuzzpy.language.symbolic import Poly


@dataclass
class Judgment:
    type: T.Type
    ctx: Ctx = field(default_factory=dict)
    cost: CostCtx | None = None  # set exactly when type is `fuzzy A`
    static: Fraction | None = None  # the value, when the expression is a static number
    length: int | None = None  # statically known length of a list (a vector's is in its type)

    @property
    def is_fuzzy(self) -> bool:
        return isinstance(self.type, T.TFuzzy)


@dataclass
class Binding:
    type: T.Type
    static: Fraction | None = None
    length: int | None = None
    cost: CostCtx | None = None  # a `let`-bound distribution: what each use of it costs
    is_param: bool = False
    #: A `def`'s numeric parameter as a static index (DFuzz's index
    #: variables): the polynomial it stands for where a noise scale names it
    #: -- itself while the definition is checked once for all calls, the
    #: call's numbers (or the caller's polynomial) when a call is checked
    #: (`Inferencer.symbolic_value`); None for every other variable.
    symbolic: Poly | None = None
    #: A numeric parameter of a `def rec` (never static: named in a static
    #: position, it is refused with that reason).
    rec_param: bool = False
    #: A `def`'s own parameter (not a lambda's, not `let`-bound): the only
    #: bag `local` / `shuffle` may randomise (`local_model._row_preserving`).
    def_param: bool = False
    #: The name its uses are recorded under in contexts and costs: the
    #: variable's own name, or a fresh one (`db#3`) when it shadows another
    #: variable, so that a context or cost made in an outer scope (a
    #: `let`-bound distribution's cost, replayed at each `sample` of it)
    #: never confuses the two (Barendregt's convention).
    key: str = ""


class Env:
    """Variables in scope. `bind` returns what it shadowed; `unbind` restores it."""

    def __init__(self) -> None:
        self._vars: dict[str, Binding] = {}
        self._keys: dict[str, Binding] = {}

    def lookup(self, name: str) -> Binding | None:
        return self._vars.get(name)

    def by_key(self, key: str) -> Binding | None:
        """The binding whose uses are recorded under ``key``."""
        return self._keys.get(key)

    def bind(self, name: str, binding: Binding) -> Binding | None:
        previous = self._vars.get(name)
        binding.key = name if previous is None and name not in self._keys else fresh_name(name, set(self._keys))
        self._vars[name] = binding
        self._keys[binding.key] = binding
        return previous

    def unbind(self, name: str, previous: Binding | None) -> None:
        current = self._vars.get(name)
        if current is not None:
            self._keys.pop(current.key, None)
        if previous is None:
            self._vars.pop(name, None)
        else:
            self._vars[name] = previous


@dataclass
class DefSig:
    """A definition's interface: per parameter its type and either its
    sensitivity (plain result) or its privacy cost (result `fuzzy A`)."""

    name: str
    params: tuple[tuple[str, T.Type], ...]
    result: T.Type
    sens: tuple[Sens, ...]
    costs: tuple[Cost | None, ...] = ()
    recursive_stub: bool = False  # the declared signature of a `def rec` being checked
    length: int | None = None  # the result's static length (a list), if known
    #: The length variables of the signature whose values its body needs at run time.
    needs: frozenset[T.LenVar] = frozenset()
    #: The parameters that stand in a noise scale (static parameters): every
    #: call gives them static numbers and is checked at those numbers.
    symbolic: tuple[str, ...] = ()
    #: what a static parameter is, where the body said (`k`: "the number of rows kept per
    #: key by `join`"), for the messages of a call that gives it no static number
    roles: tuple[tuple[str, str], ...] = ()

    @property
    def is_fuzzy(self) -> bool:
        return isinstance(self.result, T.TFuzzy)

    def curried(self, start: int = 0) -> T.Type:
        result = self.result
        for (_, ty), sens in zip(reversed(self.params[start:]), reversed(self.sens[start:]), strict=True):
            result = T.TFun(ty, sens, result)
        return result


@dataclass
class Globals:
    constants: dict[str, Fraction] = field(default_factory=dict)
    categories: dict[str, tuple[str, ...]] = field(default_factory=dict)  # `let regions = ["a", "b"];`
    aliases: dict[str, T.Type] = field(default_factory=dict)
    defs: dict[str, S.DefDecl] = field(default_factory=dict)
    mechanisms: dict[str, S.MechanismDecl] = field(default_factory=dict)
    sigs: dict[str, DefSig] = field(default_factory=dict)
    broken: set[str] = field(default_factory=set)
    program: S.Program | None = None
    verdicts: dict[str, tuple[str, str]] = field(default_factory=dict)  # mechanism -> (status, reason)
    vector_lengths: dict[Span, VectorLength] = field(default_factory=dict)  # see `CheckedProgram`
    zero_products: dict[Span, RunLength | None] = field(default_factory=dict)  # see `CheckedProgram`
    call_lengths: dict[Span, dict[T.LenVar, RunLength]] = field(default_factory=dict)  # see `CheckedProgram`
    length_reads: dict[Span, RunLength] = field(default_factory=dict)  # see `CheckedProgram`
