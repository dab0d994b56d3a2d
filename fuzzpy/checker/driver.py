"""`check_program`: the checker's driver.

1. Collect the top-level declarations: static constants (evaluated exactly),
   type aliases, definitions, mechanisms.
2. Check every definition, each at most once and callees first (lazily, when
   a call needs the callee's signature): infer its body, read off each
   parameter's sensitivity (plain result) or privacy cost (result `fuzzy A`),
   compare with declared bounds, and reject infinite costs in databases.
3. Report every error found, or return the `CheckedProgram`.
"""

from __future__ import annotations

import contextvars
import dataclasses
import gc
from collections.abc import Mapping
from fractions import Fraction

from fuzzpy.checker import assumed, obligations
from fuzzpy.checker import costs as C
from fuzzpy.checker import usage as U
from fuzzpy.checker.assumed import Assumption
from fuzzpy.checker.context import Binding, DefSig, Globals, Judgment
from fuzzpy.checker.elaborate import (
    elaborate,
    static_sens,
    static_value,
    with_alias,
)
from fuzzpy.checker.errors import ZERO_STATIC_HINT, CheckError, SilentAbort
from fuzzpy.checker.explain import Tracer
from fuzzpy.checker.infer import Inferencer
from fuzzpy.checker.result import (
    CheckedDef,
    CheckedProgram,
    Instance,
    LengthOf,
    ParamInfo,
    RunLength,
)
from fuzzpy.language import syntax as S
from fuzzpy.language import types as T
from fuzzpy.language.categories import category_constant
from fuzzpy.language.diagnostics import Diagnostic, FuzzError, Label
from fuzzpy.language.limits import MAX_STATIC_BITS, in_static_range
from fuzzpy.language.sensitivity import INF, ZERO, Sens
from fuzzpy.language.source import Span
from fuzzpy.language.symbolic import Poly


def check_program(program: S.Program) -> CheckedProgram:
    """Type-check a program; raise `FuzzError` with every error found.

    The cyclic garbage collector is paused meanwhile: the checker builds only
    acyclic data (freed by reference counting), and full collections that
    walk a large syntax tree again and again would make checking superlinear.
    """
    paused = gc.isenabled()
    gc.disable()
    try:
        return ProgramChecker(program).run()
    finally:
        if paused:
            gc.enable()


def explain_definition(program: S.Program, name: str, source_text: str | None = None) -> str:
    """The derivation of one definition, rule by rule (`check --explain`)."""
    checker = ProgramChecker(program)
    checker.collect()
    if name not in checker.globals.defs:
        known = ", ".join(checker.globals.defs) or "none"
        raise FuzzError((Diagnostic("FZ702", f"no definition named `{name}` in {program.file} (definitions: {known})", Span("<command line>", 1, 1, 1, 1)),))
    for other, decl in checker.globals.defs.items():
        if other != name and other not in checker.checked and other not in checker.globals.broken:
            checker.check_def(decl)
    tracer = Tracer(source_text)
    checker.ck.tracer = tracer
    before = len(checker.errors)
    checker.globals.broken.discard(name)
    checker.check_def(checker.globals.defs[name])
    checker.ck.tracer = None
    own_errors = checker.errors[before:]
    if own_errors or name not in checker.checked:
        codes = ", ".join(sorted({d.code for d in own_errors})) or "see the errors"
        return tracer.render(f"Derivation of `{name}`, up to where it is rejected") + (
            f"\n\nThe definition is rejected ({codes}); the diagnostics below say why."
        )
    from fuzzpy.checker.report import figures_for, signature

    checked = checker.checked[name]
    figures = figures_for(checked, None)
    title = f"Derivation of `{name}` : {signature(checked, figures)}"
    if checked.deferred:  # the derivation shown is the generic pass's, at placeholders
        names = ", ".join(f"`{n}`" for n, _ in checked.deferred)
        title += (f"\n(the generic pass, which checks the types only: {names} read as the placeholder 1; "
                  "each call is derived again at its own numbers, and its cost is the one reported)")
    return tracer.render(title) + "\n\n" + _conclusion(checked, figures)


def instantiate_definition(program: S.Program, name: str, values: dict[str, Fraction]) -> CheckedDef:
    """A definition with static parameters at given numbers (`run --arg
    eps=0.1`, the Python API's keyword arguments): its body checked at
    those numbers, as a call with them is; FuzzError when the program or the
    definition there is refused. The result's ``privacy`` is the events
    `run` charges; the interpreter reads the same numbers from the call."""
    checker = ProgramChecker(program)
    checked = checker.run()
    definition = checked.definitions[name]
    where = Span("<command line>", 1, 1, 1, 1)
    poly_values: list[Poly] = []
    try:
        for pname in definition.static_params:
            value = Fraction(values[pname])
            if value <= 0:
                raise CheckError("FZ202", f"`{pname}` of `{name}` is a static parameter, and a definition's static "
                                 f"parameters must be positive (its cost is checked for positive values only), got {value}",
                                 where, hint=ZERO_STATIC_HINT if value == 0 else None)
            if not in_static_range(value):  # within the static range, as a literal is (FZ217)
                raise CheckError(
                    "FZ217",
                    f"the value given for `{pname}` of `{name}` is out of range: a static number lies between 2.2e-308 "
                    f"and 1.8e308 in magnitude, with a numerator and denominator of at most {MAX_STATIC_BITS} bits",
                    where,
                    hint="`run` computes with doubles, which cannot carry such a number",
                )
            poly_values.append(Poly.const(value))
        sig = checker.instance(name, tuple(poly_values), where)
    except CheckError as err:
        raise FuzzError((err.diagnostic,)) from None
    privacy = {
        pname: (() if cost is None else cost.events())
        for (pname, ty), cost in zip(sig.params, sig.costs, strict=False)
        if isinstance(ty, T.TBag)
    }
    params = tuple(
        ParamInfo(p.name, p.type, p.sensitivity if p.name in definition.static_params else sens)
        for p, sens in zip(definition.params, sig.sens, strict=True)
    )
    draws = C.draw_numbers({p: c for (p, ty), c in zip(sig.params, sig.costs, strict=False) if isinstance(ty, T.TBag)})
    # the figure at these numbers rests on the unchecked `assume def`s the definition's does (FZ318,
    # review s30c: `run f --arg eps=1` lost them, and with them the warning and the ledger's record)
    return CheckedDef(name, definition.decl, params, definition.result, privacy, draws=draws,
                      rests_on=definition.rests_on)


class ProgramChecker:
    def __init__(self, program: S.Program) -> None:
        self.program = program
        self.globals = Globals(program=program)
        self.ck = Inferencer(self.globals, self.signature_of)
        self.ck.instance_of = self.instance
        #: each definition with static parameters, at each tuple of values a call gave
        self._instances: dict[tuple[str, tuple[Poly, ...]], DefSig] = {}
        self.errors: list[Diagnostic] = []
        self.warnings: list[Diagnostic] = []
        self.checked: dict[str, CheckedDef] = {}
        self._in_progress: list[str] = []
        self._collected = False
        #: per definition with static parameters, its signature at each call's values
        self.instances_of: dict[str, dict[tuple[Poly, ...], DefSig]] = {}
        self._bound_scope: dict[str, Fraction] = {}
        #: the instances at symbols whose check was deferred (see `Inferencer.deferred`)
        self._deferred_keys: set[tuple[str, tuple[Poly, ...]]] = set()
        #: definitions with `nat` indices whose symbolic check failed: checked
        #: at each call's numbers instead, with the reason the symbolic one gave
        self._per_call: dict[str, str] = {}
        #: a declared bound over `nat` indices was refuted or left undecided
        #: (no fallback to the per-call check then: the claim is wrong or unproved)
        self._bound_refused = False
        #: the `nat` indices of the definition that called the one being instantiated
        self._caller_nats: frozenset[str] = frozenset()
        #: the values of the static parameters the definition is checked at (None: symbols)
        self._values: dict[str, Poly] | None = None

    # ------------------------------------------------------------ phase 1

    def collect(self) -> None:
        if self._collected:
            return
        self._collected = True
        seen: dict[str, Span] = {}
        for decl in self.program.decls:
            name = decl.name
            if name in seen and not isinstance(decl, S.TypeDecl):
                self.errors.append(
                    Diagnostic("FZ210", f"`{name}` is defined twice", _name_span(decl), labels=(Label(seen[name], "first defined here"),))
                )
                continue
            seen[name] = _name_span(decl)
            try:
                self._collect_one(decl)
            except CheckError as err:
                self.errors.append(err.diagnostic)

    def _collect_one(self, decl: S.Decl) -> None:
        g = self.globals
        if isinstance(decl, S.LetDecl):
            categories = category_constant(decl.expr)
            if categories is not None:  # a public list of categories for `group[...]`
                g.categories[decl.name] = categories
                return
            value = static_value(decl.expr, g.constants)
            if value is None:
                raise CheckError(
                    "FZ212",
                    f"the top-level `let {decl.name}` must be a static number (a literal or arithmetic over constants) "
                    "or a non-empty list of string literals (categories for `group[...]`)",
                    decl.expr.span,
                )
            g.constants[decl.name] = value
        elif isinstance(decl, S.TypeDecl):
            g.aliases[decl.name] = with_alias(elaborate(decl.type, g.aliases, g.constants), decl.name)
        elif isinstance(decl, S.DefDecl):
            g.defs[decl.name] = decl
        else:
            g.mechanisms[decl.name] = decl

    # ------------------------------------------------------------ phase 2

    def mechanism_form_errors(self) -> list[Diagnostic]:
        """A mechanism's statements are checked for form (names, sorts, declarations) as `verify`
        checks them before proving: `check` accepts no mechanism `verify` would reject unread."""
        from fuzzpy.verifier.model import analyse

        errors: list[Diagnostic] = []
        for decl in self.globals.mechanisms.values():
            try:
                analyse(decl, dict(self.globals.constants))
            except FuzzError as error:
                errors += [d for d in error.diagnostics if d.severity == "error"]
        return errors

    def run(self) -> CheckedProgram:
        self.collect()
        for name, decl in self.globals.defs.items():
            if name not in self.globals.broken and name not in self.checked:
                self.check_def(decl)
        self.errors += self.mechanism_form_errors()
        if self.errors:
            raise FuzzError(tuple(_dedupe(self.errors)))
        resting = rests_on(self.checked)
        if any(resting.values()) and not _WEAKENED.get():
            resting = self._where_bounds_are_used(resting)
        definitions = {n: (dataclasses.replace(d, rests_on=resting[n]) if resting[n] else d) for n, d in self.checked.items()}
        return CheckedProgram(
            program=self.program,
            definitions=definitions,
            warnings=tuple(self.warnings),
            mechanisms=dict(self.globals.mechanisms),
            constants=dict(self.globals.constants),
            vector_lengths=dict(self.globals.vector_lengths),
            zero_products=dict(self.globals.zero_products),
            call_lengths=dict(self.globals.call_lengths),
            length_reads=dict(self.globals.length_reads),
            captures=dict(self.ck.captures),
            zero_captures=dict(self.ck.zero_captures),
            instances=self._concrete_instances(),
        )

    def _where_bounds_are_used(self, resting: dict[str, tuple[str, ...]]) -> dict[str, tuple[str, ...]]:
        """Keep an unchecked `assume def` in a definition's list only where
        its declared bound is used: the definition and what it calls are
        checked again with that `assume def` an ordinary `def` (its
        sensitivities inferred by the rules: no assumption); a definition
        whose signature and events come out the same does not rest on it (a
        per-row function under `map`, review s29e U1). One that no longer
        checks, or has static parameters (its instances are its callers'),
        keeps the mark."""
        kept = {name: set(names) for name, names in resting.items()}
        for name, names in kept.items():
            if self.checked[name].static_params:
                continue
            for assumption in sorted(names - {name}):
                other = _checked_without(self.program, name, assumption, set(self.checked))
                if other is not None and _figures(self.checked[name]) == _figures(other.definitions[name]):
                    names.discard(assumption)
        return {name: tuple(sorted(names)) for name, names in kept.items()}

    def _concrete_instances(self) -> dict[str, tuple[Instance, ...]]:
        """The calls' instances at numbers (not those at a caller's symbols)."""
        found: dict[str, tuple[Instance, ...]] = {}
        for name, table in self.instances_of.items():
            rows = []
            for values, sig in table.items():
                if not all(v.is_const for v in values):
                    continue
                privacy = {
                    pname: (() if cost is None else cost.events())
                    for (pname, ty), cost in zip(sig.params, sig.costs, strict=False)
                    if isinstance(ty, T.TBag) and (cost is None or not cost.is_infinite)
                }
                sens = tuple((p, s) for (p, _), s in zip(sig.params, sig.sens, strict=True) if p not in sig.symbolic)
                rows.append(Instance(tuple((p, v.value) for p, v in zip(sig.symbolic, values, strict=True)), privacy, sens))
            if rows:
                found[name] = tuple(rows)
        return found

    def signature_of(self, name: str, span: Span) -> DefSig:
        g = self.globals
        if name in g.broken:
            raise SilentAbort()
        if name in g.sigs:
            return g.sigs[name]
        if name in self._in_progress:
            raise CheckError(
                "FZ211",
                f"`{name}` is used before its own definition is checked (mutual recursion is not supported)",
                span,
                hint="declare a self-recursive function with `def rec` and full type annotations",
            )
        self.check_def(g.defs[name])
        if name in g.broken:
            raise SilentAbort()
        return g.sigs[name]

    def instance(self, name: str, values: tuple[Poly, ...], use: Span) -> DefSig:
        """``name``'s signature at one call: its body checked again with
        each static parameter standing for the call's value (a number, or a
        polynomial over the caller's own static parameters) -- the check
        of the program written with those values (DFuzz's instantiation of
        index variables, Gaboardi et al. POPL 2013). Cached per values."""
        key = (name, values)
        if key in self._instances:
            self._propagate_deferral(name, key)
            return self._instances[key]
        generic = self.signature_of(name, use)
        decl = self.globals.defs[name]
        ck = self.ck
        saved = (ck.env, ck.tracer, ck.symbolic_used, ck.static_params, self.errors, len(ck.soft_errors))
        deferred_saved = ck.deferred, ck.index_params, self._bound_scope, ck.placeholder_length
        sites_saved = ck.vector_sites, ck.zero_sites, ck.call_sites, ck.len_sites
        from fuzzpy.checker.context import Env

        caller_nats_saved, self._caller_nats = self._caller_nats, frozenset(ck.index_params)
        refused_saved = self._bound_refused
        ck.env, ck.tracer, self.errors = Env(), None, []
        ck.vector_sites, ck.zero_sites, ck.call_sites, ck.len_sites = {}, {}, {}, {}
        at = ", ".join(f"{p} = {_compact(v)}" for p, v in zip(generic.symbolic, values, strict=True))
        self._in_progress.append(name)
        try:
            sig = self._check_def(decl, dict(zip(generic.symbolic, values, strict=True)))
            found = self.errors + ck.soft_errors[saved[5]:]
        except CheckError as err:
            found = [err.diagnostic]
        finally:
            self._in_progress.pop()
            inner_deferred = bool(ck.deferred)
            ck.env, ck.tracer, ck.symbolic_used, ck.static_params, self.errors = saved[:5]
            ck.deferred, ck.index_params, self._bound_scope, ck.placeholder_length = deferred_saved
            del ck.soft_errors[saved[5]:]
            ck.vector_sites, ck.zero_sites, ck.call_sites, ck.len_sites = sites_saved
            self._caller_nats = caller_nats_saved
            self._bound_refused = refused_saved
        if found:
            first = found[0]
            raise CheckError(
                first.code,
                f"`{name}` at {at} is refused: {first.message}",
                use,
                labels=(Label(first.span, "in the definition, at these values"),),
                hint=first.hint,
            )
        assert sig is not None
        if inner_deferred:
            self._deferred_keys.add(key)
        self._propagate_deferral(name, key)
        self._instances[key] = sig
        self.instances_of.setdefault(name, {})[values] = sig
        return sig

    def _propagate_deferral(self, name: str, key: tuple[str, tuple[Poly, ...]]) -> None:
        """A call at the caller's own symbols of a definition checked at
        each call's numbers: the caller is too (its cost is not one
        expression either)."""
        if key not in self._deferred_keys:
            return
        for value in key[1]:
            if not value.is_const:
                self.ck.defer(value.symbols(), f"passed to `{name}`, which is checked at each call's numbers")

    def check_def(self, decl: S.DefDecl) -> None:
        """Check a definition once for all calls. One with `nat` indices is
        checked with them as symbols first (DFuzz, Gaboardi et al. POPL
        2013: sensitivities and costs are index terms over them); if that
        check fails for a reason other than a refuted or undecided bound, the
        definition is checked at each call's numbers instead (the reason is
        kept, and `check` prints it), which is today's check of the program
        written with those numbers."""
        if decl.recursive or not any(_is_nat(p.type) for p in decl.params):
            self._check_def_once(decl)
            return
        first_error, outer, self._bound_refused = len(self.errors), self._bound_refused, False
        trace = self.ck.tracer.mark() if self.ck.tracer is not None else None
        self._check_def_once(decl)
        refused, self._bound_refused = self._bound_refused, outer
        if len(self.errors) == first_error or refused:
            return
        reason = self.errors[first_error].message
        del self.errors[first_error:]
        if self.ck.tracer is not None and trace is not None:
            self.ck.tracer.reset(trace)  # `check --explain` shows the pass that counts
        self.globals.broken.discard(decl.name)
        self.checked.pop(decl.name, None)
        self.globals.sigs.pop(decl.name, None)
        self._per_call[decl.name] = reason
        self._check_def_once(decl)

    def _check_def_once(self, decl: S.DefDecl) -> None:
        # checked for all calls: no caller's indices are in scope (a caller's `nat` may share
        # a name with this definition's `num` parameter, which is no whole number)
        caller_nats, self._caller_nats = self._caller_nats, frozenset()
        try:
            self._check_def_for_all(decl)
        finally:
            self._caller_nats = caller_nats

    def _check_def_for_all(self, decl: S.DefDecl) -> None:
        self._in_progress.append(decl.name)
        env_saved = self.ck.env
        symbolic_saved = self.ck.symbolic_used, self.ck.static_params, self.ck.deferred, self.ck.index_params
        placeholder_saved = self.ck.placeholder_length
        from fuzzpy.checker.context import Env

        self.ck.env = Env()  # a definition sees only globals and its parameters
        sites_saved = self.ck.vector_sites, self.ck.zero_sites, self.ck.call_sites, self.ck.len_sites
        self.ck.vector_sites, self.ck.zero_sites, self.ck.call_sites, self.ck.len_sites = {}, {}, {}, {}
        first_soft = len(self.ck.soft_errors)
        first_error = len(self.errors)
        try:
            self._check_def(decl)
        except CheckError as err:
            self.errors.append(err.diagnostic)
            self.globals.broken.add(decl.name)
        except SilentAbort:
            self.globals.broken.add(decl.name)
        except RecursionError:
            self.errors.append(Diagnostic("FZ218", f"`{decl.name}` is nested too deeply to check", decl.name_span))
            self.globals.broken.add(decl.name)
        finally:
            self.ck.env = env_saved
            self.ck.symbolic_used, self.ck.static_params, self.ck.deferred, self.ck.index_params = symbolic_saved
            self.ck.placeholder_length = placeholder_saved
            self.ck.vector_sites, self.ck.zero_sites, self.ck.call_sites, self.ck.len_sites = sites_saved
            self._in_progress.pop()
            soft = self.ck.soft_errors[first_soft:]
            del self.ck.soft_errors[first_soft:]
            if soft:  # errors found while inferring come before the conclusions drawn from them
                self.errors[first_error:first_error] = soft

    def _check_def(self, decl: S.DefDecl, values: dict[str, Poly] | None = None) -> DefSig | None:
        """Check a definition: once for all calls (``values`` None: every
        numeric parameter may be named by a noise scale, and those that are
        become its static parameters), or at one call's ``values`` of its
        static parameters (`instance`), returning that signature."""
        ck, g = self.ck, self.globals
        names = [p.name for p in decl.params]
        for param in decl.params:
            if names.count(param.name) > 1:
                raise CheckError("FZ210", f"`{decl.name}` has two parameters named `{param.name}`", param.span)
        indices = () if decl.recursive else tuple(p.name for p in decl.params if _is_nat(p.type))
        # a `nat` index in a bound or a type (`vec[n]`, `[n * e]`): its number
        # at a call, the placeholder 1 in the generic pass (checked at each call)
        self._bound_scope = {n: (values[n].value if values is not None and n in values and values[n].is_const else Fraction(1))
                             for n in indices}
        scope = self._signature_scope(decl)
        params = [(p.name, ck.elaborate(p.type, constants=scope)) for p in decl.params]
        for param, (_, ty) in zip(decl.params, params, strict=True):
            if isinstance(ty, T.TFuzzy):
                raise CheckError("FZ213", f"the parameter `{param.name}` cannot be a distribution: pass data and sample inside", param.span)
        declared_result = ck.elaborate(decl.result, constants=scope) if decl.result is not None else None
        if decl.recursive:
            g.sigs[decl.name] = self._recursive_stub(decl, params, declared_result)
        ck.symbolic_used, ck.static_params, ck.deferred, ck.index_params = set(), {}, {}, set(indices)
        ck.placeholder_length = None
        for name in indices:
            value = None if values is None else values.get(name)
            if value is None or not value.is_const:
                ck.symbolic_used.add(name)
                why = self._not_symbolic(decl, name, value)
                if why is not None:
                    ck.deferred.setdefault(name, why)
            elif value.value.denominator != 1:
                where = next(p.span for p in decl.params if p.name == name)
                raise CheckError("FZ202", f"`{name}` is a `nat` and must be a whole number, got {value.value}", where)
        for name, ty in params:
            binding = Binding(ty, is_param=True, rec_param=decl.recursive, def_param=True)
            if isinstance(ty, (T.TNum, T.TInt)) and not decl.recursive:
                binding.symbolic = Poly.var(name) if values is None else values.get(name)
                if binding.symbolic is not None:
                    ck.static_params[name] = binding
            ck.bind(name, binding)
        try:
            if declared_result is not None:
                body = ck.check(decl.body, declared_result, f"`{decl.name}` is declared to return `{declared_result}`")
            else:
                body = ck.infer(decl.body)
        finally:
            if values is None:  # a `def rec`'s stub; an instance keeps the checked signature
                g.sigs.pop(decl.name, None)
        if declared_result is not None:
            body.type = declared_result  # the declared type is the interface
        symbolic = tuple(name for name, _ in params if name in ck.symbolic_used) if values is None else tuple(values)
        # a declared bound may name a static parameter given a number
        self._bound_scope = {n: Fraction(1) for n in indices} | {n: v.value for n, v in (values or {}).items() if v.is_const}
        self._values = values
        try:
            return self._conclude(decl, params, body, symbolic, register=values is None)
        finally:
            self._bound_scope = {}
            self._values = None

    def _not_symbolic(self, decl: S.DefDecl, name: str, value: Poly | None) -> str | None:
        """Why the `nat` index ``name`` (its value here ``value``: None for
        the symbol itself, or a caller's index term) cannot be a symbol of
        the definition's check, which is then checked at each call's
        numbers; None when it can."""
        if decl.name in self._per_call:
            return f"a `nat` index, and the check over it as a symbol failed: {self._per_call[decl.name]}"
        typed = [p.type for p in decl.params] + ([decl.result] if decl.result is not None else [])
        if any(isinstance(node, S.Var) and node.name == name for ty in typed for node in _walk_syntax(ty)):
            arrows = [n.sens for ty in typed for n in _walk_syntax(ty) if isinstance(n, S.TyFun) and n.sens is not None]
            if any(isinstance(node, S.Var) and node.name == name for sens in arrows for node in _walk_syntax(sens)):
                # review s30c: `(f : num -[n]-> num)` is a function's sensitivity, not a vector's length
                return "a `nat` index named in a type (a function's sensitivity, `-[..]->`), which is not yet written over a symbol"
            return "a `nat` index named in a type (a vector's length), which is not yet written over a symbol"
        if value is not None and not (
            value.symbols() <= self._caller_nats and not value.divides
            and all(c > 0 and c.denominator == 1 for _, c in value.terms)
        ):
            return f"a `nat` index given `{value}`, which is not shown to be a whole number at every call"
        return None

    def _recursive_stub(self, decl: S.DefDecl, params: list[tuple[str, T.Type]], result: T.Type | None) -> DefSig:
        if result is None:
            raise CheckError(
                "FZ211",
                f"`def rec {decl.name}` needs its result type: recursion is checked against its declared signature",
                decl.name_span,
            )
        scope = self._signature_scope(decl)
        sens = tuple(static_sens(p.sens, scope, "a sensitivity bound") if p.sens is not None else INF for p in decl.params)
        costs: tuple[C.Cost | None, ...] = tuple(None for _ in params)
        return DefSig(decl.name, tuple(params), result, sens, costs, recursive_stub=True)

    # ------------------------------------------------------------ phase 2b: conclusions

    def _conclude(
        self, decl: S.DefDecl, params: list[tuple[str, T.Type]], body: Judgment, symbolic: tuple[str, ...], register: bool
    ) -> DefSig:
        lengths = self.ck.lengths
        params = [(name, lengths.zonk(ty)) for name, ty in params]  # the signature, generalised
        body.type = lengths.zonk(body.type)
        self._resolve_vector_lengths(params)
        needs = self._resolve_run_lengths(decl, params)
        infos: list[ParamInfo] = []
        sens_list: list[Sens] = []
        costs: list[C.Cost | None] = []
        privacy: dict[str, tuple] = {}
        arguments: dict[str, tuple] = {}
        symbolic_costs: dict[str, Poly | None] = {}
        symbolic_deltas: dict[str, Poly] = {}  # the (eps, delta) costs' deltas (`gauss_dp` over parameters)
        # checked at each call: the generic pass, or an instance at a caller's
        # symbols (whose caller is then checked at each call too)
        deferred = dict(self.ck.deferred)
        if deferred and self.ck.placeholder_length is not None and (self.ck.len_sites or self.ck.vector_sites):
            # `run` reads these lengths from the generic pass, where the count was a placeholder
            raise CheckError(
                "FZ202",
                f"`{decl.name}` counts buckets with a parameter and also reads a vector's length (`len`, `vsum`, `map`): "
                "not supported yet, since that length would be read at the placeholder",
                self.ck.placeholder_length,
                hint="give the number of buckets as a literal or a top-level constant",
            )
        # a definition over `nat` indices checked as symbols: its bounds are index terms (DFuzz)
        nats = frozenset() if deferred or decl.recursive else frozenset(p.name for p in decl.params if _is_nat(p.type))
        shown: Sens | None = None  # what the type prints for a parameter, when not its sensitivity
        claims: list[tuple[str, Sens, Sens]] = []
        if decl.assumed or decl.measure is not None:
            self._check_forms(decl, body, symbolic, nats, deferred)
        for param, (name, ty) in zip(decl.params, params, strict=True):
            if deferred and name not in symbolic:
                # checked at each call's numbers: the generic pass read its
                # static parameters as placeholders, so it states no cost and
                # checks no declared bound (each call's check does both)
                cost = None if body.cost is None else body.cost.get(name)
                costs.append(cost)
                symbolic_costs[name] = None  # printed "at each call", never a bare `inf`
                if body.cost is not None and isinstance(ty, T.TBag):
                    self._check_private(decl, name, cost)  # as for an epsilon parameter's generic check
                # at the placeholders: what a caller checked at each call reads (its results are discarded too)
                usage = body.ctx.get(name)
                if body.cost is not None:  # a caller reads the events; the number only for a pure cost
                    sens_list.append(INF if _is_symbolic(cost) else _cost_as_sens(cost, integral=C.integral_metric(ty)))
                else:
                    sens_list.append(ZERO if usage is None else usage.sens)
                infos.append(ParamInfo(name, ty, INF))
                continue
            if deferred:  # a static parameter
                costs.append(None)
                sens_list.append(ZERO)
                infos.append(ParamInfo(name, ty, ZERO))
                continue
            if body.cost is not None and _is_symbolic(body.cost.get(name)):
                cost = body.cost.get(name)
                assert cost is not None
                costs.append(cost)
                found, found_delta = _symbolic_pair(cost)
                if register and name not in symbolic:  # a static parameter's own cost is nothing at a call
                    symbolic_costs[name] = found
                    if found is not None and found_delta:
                        symbolic_deltas[name] = found_delta
                    if not nats:  # a declared bound is pure: an (eps, delta) cost is not shown within it
                        self._check_declared_symbolic(decl, param, None if found_delta else found, symbolic)
                if nats and name not in symbolic:
                    self._check_bound_poly(decl, param, None if found_delta else found, "DP")
                sens = INF  # not a number: the cost is symbolic_costs[name]
            elif body.cost is not None:
                cost = body.cost.get(name)
                costs.append(cost)
                sens = _cost_as_sens(cost, integral=C.integral_metric(ty))
                shown = _cost_as_sens(cost, linear=False)  # a staircase's cost at distance 1, as printed
                if register and symbolic and isinstance(ty, T.TBag) and (cost is None or not cost.is_infinite):
                    symbolic_costs[name] = Poly() if cost is None else C.symbolic_epsilon(cost.events())
                if isinstance(ty, T.TBag):
                    self._check_private(decl, name, cost)
                    if cost is not None and not cost.is_infinite:
                        privacy[name] = cost.events()
                    elif cost is None:
                        privacy[name] = ()
                elif _approximate(cost):  # (eps, delta) in an argument, as in a bag (Duet's Gaussian rule)
                    assert cost is not None
                    arguments[name] = cost.events()
                if not nats:
                    self._check_declared_cost(decl, param, cost)
                elif name not in symbolic and (cost is None or not cost.is_infinite):
                    self._check_bound_poly(decl, param, Poly() if cost is None else C.symbolic_epsilon(cost.events()), "DP")
            else:
                usage = body.ctx.get(name)
                sens = ZERO if usage is None else usage.sens
                declared = self._declared(decl, param) if decl.assumed else None
                if declared is not None and sens > declared and declared.is_zero:
                    # `run` never forces what the checker says is used at 0 (`CheckedProgram.captures`), but
                    # the body still reads it: a binding could then be forced only on the rows that reach it
                    raise CheckError("FZ317", f"`assume def {decl.name}` declares `{name}` 0-sensitive, but its body "
                                     f"reads it: a bound of 0 is not assumed (`run` would evaluate what the checker "
                                     "says is unused)", param.span, hint="declare a positive bound, or drop the parameter")
                if declared is not None and sens > declared:
                    # `assume def`: the declaration is the interface; z3 checks it below (`assumed`)
                    claims.append((name, declared, sens))
                    sens = declared
                elif not nats:
                    self._check_declared(decl, param, usage)
                elif name not in symbolic:
                    self._check_bound_poly(decl, param, sens.as_poly(), "sensitive")
            sens_list.append(sens)
            infos.append(ParamInfo(name, ty, sens if shown is None else shown))
            shown = None
        sig = DefSig(
            decl.name, tuple(params), body.type, tuple(sens_list), tuple(costs), length=body.length, needs=needs, symbolic=symbolic,
            roles=tuple(deferred.items()),
        )
        if register:
            self.globals.sigs[decl.name] = sig
            if symbolic:  # its cost is an expression: no event list the accountant could read
                privacy = {}
            assumption = self._assumption(decl, params, sens_list, body.type, claims) if decl.assumed else None
            zcdp_delta = self._zcdp_measure(decl, privacy) if decl.measure is not None else None
            local_reports = _local_reports(params, body.cost) if symbolic else {}
            for name in local_reports:  # replace-one, not the add/remove expression (review s30c, loc2.fz)
                symbolic_costs[name] = None
            self.checked[decl.name] = CheckedDef(
                decl.name, decl, tuple(infos), body.type, privacy, static_params=symbolic, symbolic_privacy=symbolic_costs,
                symbolic_delta=symbolic_deltas,
                local_reports=local_reports,
                argument_privacy={} if symbolic else arguments, deferred=tuple(deferred.items()),
                draws={} if symbolic else C.draw_numbers(
                    {n: c for (n, t), c in zip(params, costs, strict=False) if isinstance(t, T.TBag)}),
                assumption=assumption, zcdp_delta=zcdp_delta,
            )
        return sig

    def _check_bound_poly(self, decl: S.DefDecl, param: S.Param, found: Poly | None, kind: str) -> None:
        """A declared bound `[..]` of a definition over `nat` indices: an
        index term over its static parameters (each a symbol, or the call's
        value), which the found sensitivity or cost (``found``; None:
        infinite or not pure) must be below for every value of them -- term
        by term, else by z3 over the naturals >= 1 and positive reals
        (DFuzz's subtyping on index terms, Gaboardi et al. POPL 2013). A
        refuted or undecided bound is a located error (FZ305/FZ312), never
        accepted."""
        if param.sens is None:
            return
        names = {p.name for p in decl.params}
        scope = {n: Poly.const(v) for n, v in self.globals.constants.items() if n not in names}
        values = self._values or {}
        for p in decl.params:
            if p.name in self.ck.static_params or _is_nat(p.type):
                scope[p.name] = values.get(p.name, Poly.var(p.name))
        naturals = frozenset(p.name for p in decl.params if _is_nat(p.type)) | self._caller_nats
        index_symbols = frozenset(s for n in naturals if n in scope for s in scope[n].symbols()) & naturals
        declared = _poly_of(param.sens, scope, index_symbols)
        code = "FZ312" if kind == "DP" else "FZ305"
        if declared is None:  # the check at each call's numbers reads it there
            self.errors.append(Diagnostic("FZ202", "a bound must be a static number or a polynomial over the definition's "
                                          "`nat` and static parameters", param.sens.span))
            return
        verdict = None if found is None else obligations.at_most(found, declared, naturals)
        if verdict is not None and verdict.status == "proved":
            return
        # a finite index term refuted or undecided: the claim is wrong or unproved, and no
        # per-call check replaces it; an infinite one may come from a rule that reads an
        # index term as infinite, which the check at each call's numbers may still pass
        self._bound_refused = self._bound_refused or found is not None
        if found is not None:
            shown = f"({found})-{kind}" if " " in str(found) else f"{found}-{kind}"
        else:
            shown = "infinitely sensitive" if kind == "sensitive" else "not purely private (or infinitely)"
        why = ""
        if verdict is not None and verdict.status == "refuted" and verdict.witness:
            why = f" (it is above it at {verdict.witness})"
        elif verdict is not None and verdict.status == "unknown":
            why = " (z3 could not decide it: undecided is refused)"
        self.errors.append(Diagnostic(
            code,
            f"`{decl.name}` is {shown} in `{param.name}`, which is not shown to be at most the declared {declared} "
            f"for every value of its `nat` and static parameters{why}",
            param.span,
        ))

    def _check_declared_symbolic(self, decl: S.DefDecl, param: S.Param, cost: Poly | None, symbolic: tuple[str, ...]) -> None:
        """A declared bound on a parameter whose cost names static
        parameters: `(db :[eps] bag R)` may name them (DFuzz's index terms);
        the cost must be below the bound for every positive value of them,
        shown term by term (`Poly.at_most`; an undecided bound is refused)."""
        if param.sens is None:
            return
        scope = {n: Poly.const(v) for n, v in self._signature_scope(decl).items()}
        scope.update({n: Poly.var(n) for n in symbolic})
        declared = _poly_of(param.sens, scope)
        if declared is None:
            self.errors.append(Diagnostic("FZ202", "a bound must be a static number or a polynomial over static parameters", param.sens.span))
            return
        verdict = None if cost is None else obligations.at_most(cost, declared)  # term by term, else z3
        if verdict is not None and verdict.status == "proved":
            return
        shown = "an approximate (eps, delta) cost" if cost is None else f"{cost}-DP"
        why = ""
        if verdict is not None and verdict.status == "refuted" and verdict.witness:
            why = f" (it is above it at {verdict.witness})"
        elif verdict is not None and verdict.status == "unknown":
            why = " (z3 could not decide it: undecided is refused)"
        self.errors.append(
            Diagnostic(
                "FZ312",
                f"`{decl.name}` is {shown} in `{param.name}`, which is not shown to be at most {declared} "
                f"for every positive value of its parameters{why}",
                param.span,
            )
        )

    def _resolve_vector_lengths(self, params: list[tuple[str, T.Type]]) -> None:
        """Each `vsum` and vector-valued `map` of the definition with its
        vectors' length: a number, or read off a parameter (a length variable
        of the signature); FZ214 when neither is known, since `run` could not
        tell the length for an empty bag."""
        for span, length in self.ck.vector_sites.items():
            found = self.ck.lengths.resolve(length)
            if isinstance(found, int):
                self.globals.vector_lengths[span] = found
                continue
            witness = next((w for name, ty in params if (w := length_witness(name, ty, found)) is not None), None)
            if witness is None:
                raise CheckError(
                    "FZ214",
                    "the length of these vectors is not known before the data is read: it is neither static "
                    "nor the length of a parameter's vectors, so it is unknown when the bag is empty",
                    span,
                    hint="build the rows with a list literal, or take the vectors' length from a parameter (`vec[2] num`)",
                )
            self.globals.vector_lengths[span] = witness

    def _resolve_run_lengths(self, decl: S.DefDecl, params: list[tuple[str, T.Type]]) -> frozenset[T.LenVar]:
        """The lengths `run` needs inside this definition (its zero-scaled
        vectors, and what the definitions it uses need) as numbers or as
        variables of its signature, which its callers pass in turn; the
        variables it needs. A length that is neither is unknown before the
        data is read: FZ214."""
        own = {n for _, ty in params for n in T.vector_lengths(ty) if isinstance(n, T.LenVar)}
        needs: set[T.LenVar] = set()

        def run_length(n: T.Length | None, span: Span, what: str) -> RunLength:
            found = self.ck.lengths.resolve(n)
            if isinstance(found, int) or (isinstance(found, T.LenVar) and found in own):
                if isinstance(found, T.LenVar):
                    needs.add(found)
                return found
            raise CheckError(
                "FZ214",
                f"the length of {what} is not known before the data is read: it is neither static nor "
                f"the length of a parameter's vectors",
                span,
                hint="build the vector with a list literal, or take its length from a parameter (`vec[2] num`)",
            )

        for span, length in self.ck.zero_sites.items():
            if length is None:
                self.globals.zero_products[span] = None
            else:
                self.globals.zero_products[span] = run_length(length, span, "the vector multiplied by 0 (which is not evaluated)")
        for span, length in self.ck.len_sites.items():
            self.globals.length_reads[span] = run_length(length, span, "the vector `len` measures (which is not evaluated)")
        recursive: list[Span] = []
        for span, (callee, mapping) in self.ck.call_sites.items():
            if callee == decl.name:
                recursive.append(span)  # a `def rec` calls itself at its own lengths
                continue
            sig = self.globals.sigs.get(callee)
            passed = {
                var: run_length(mapping[var], span, f"the vectors whose length `{callee}` needs")
                for var in (sig.needs if sig is not None else ()) if var in mapping
            }
            if passed:
                self.globals.call_lengths[span] = passed
        for span in recursive:
            if needs:
                self.globals.call_lengths[span] = {var: var for var in needs}
        return frozenset(needs)

    # ------------------------------------------------------------ `assume def` and `privacy zcdp[..]`

    def _check_forms(self, decl: S.DefDecl, body: Judgment, symbolic: tuple[str, ...], nats: frozenset[str],
                     deferred: dict[str, str]) -> None:
        """Where the two declarations apply: an `assume def` is a deterministic
        function of numbers given at the call (Fuzz's trusted primitives); a
        measure is that of a release (a `fuzzy` result)."""
        if decl.assumed:
            if body.cost is not None:
                raise CheckError("FZ317", f"`assume def {decl.name}` returns a distribution: only a deterministic "
                                 "function's sensitivity may be declared and assumed (a privacy cost never is)",
                                 decl.name_span, hint="drop `assume`, or move the noise to a caller")
            if symbolic or nats or deferred:
                raise CheckError("FZ317", f"`assume def {decl.name}` has static parameters or `nat` indices: its declared "
                                 "sensitivities must be numbers", decl.name_span)
            if not any(p.sens is not None for p in decl.params):
                raise CheckError("FZ317", f"`assume def {decl.name}` declares no sensitivity: write the bound it assumes, "
                                 "`(p :[1] (num, num))`", decl.name_span)
        measure = decl.measure
        if measure is not None:
            if measure.kind != "zcdp":  # pragma: no cover - the grammar admits only zcdp
                raise CheckError("FZ317", f"unknown measure `{measure.kind}`", measure.span)
            if body.cost is None:
                raise CheckError("FZ317", f"`{decl.name}` declares `privacy zcdp[..]` but returns no distribution: a "
                                 "measure is that of a release", measure.span)
            if symbolic or deferred:
                raise CheckError("FZ317", f"`{decl.name}` declares `privacy zcdp[..]` and has static parameters: not "
                                 "supported yet (declare the measure in the caller that gives them numbers)",
                                 measure.span)

    def _assumption(self, decl: S.DefDecl, params: list[tuple[str, T.Type]], sens: list[Sens], result: T.Type,
                    claims: list[tuple[str, Sens, Sens]]) -> Assumption:
        """The declaration beyond the rules proved by z3, refused when refuted,
        and otherwise an assumption every report that uses it names."""
        if not claims:
            return Assumption(decl.name, (), "typed")
        bounds = {name: bound for (name, _), bound in zip(params, sens, strict=True)}
        verdict = assumed.prove(decl, params, bounds, result, self.globals.constants, self.globals.defs)
        if verdict.status == "refuted":
            claim = ", ".join(f"{declared}-sensitive in {name}" for name, declared, _ in claims)
            self.errors.append(Diagnostic(
                "FZ316", f"`{decl.name}` is not {claim}: z3 finds arguments where the declaration fails",
                decl.name_span, notes=(f"for example {verdict.detail}",),
                labels=tuple(Label(p.span, f"declared {p.name}") for p in decl.params
                             if any(p.name == c[0] for c in claims)),
                hint="raise the declared bound (the rules infer "
                     + ", ".join(f"{inferred} in {name}" for name, _, inferred in claims) + ")"))
            return Assumption(decl.name, tuple(claims), "refuted", verdict.detail)
        if verdict.status == "proved":
            return Assumption(decl.name, tuple(claims), "proved")
        found = Assumption(decl.name, tuple(claims), "unchecked", verdict.detail)
        self.warnings.append(Diagnostic(
            "FZ318", f"`{decl.name}` is taken to be {found.claim_text()} without proof: {verdict.detail}",
            decl.name_span, severity="warning",
            notes=("every figure that uses its declared bound rests on this assumption, and `check` and `run` say so",)))
        return found

    def _zcdp_measure(self, decl: S.DefDecl, privacy: dict[str, tuple]) -> Fraction | None:
        """`privacy zcdp[delta]`: the delta (0 < delta < 1), and every release
        with a zCDP bound (Bun & Steinke 2016), else a located refusal."""
        from fuzzpy.accounting.accountant import rho

        measure = decl.measure
        assert measure is not None
        delta = static_value(measure.delta, self.globals.constants)
        if not isinstance(delta, Fraction) or not 0 < delta < 1:
            self.errors.append(Diagnostic("FZ317", "the delta of `zcdp[..]` must be a static number in (0, 1)",
                                          measure.delta.span))
            return None
        # a callee whose own releases have no zCDP bound: the call is where it is written
        callees = {n for n, d in self.checked.items() if any(rho(evs) is None for evs in d.privacy.values())}
        for name, events in privacy.items():
            if rho(events) is None:
                where = _release_span(decl.body, events, callees) or measure.span
                self.errors.append(Diagnostic(
                    "FZ319", f"`{decl.name}` declares `privacy zcdp[..]`, but a release in `{name}` has no zCDP bound: "
                    f"{C.describe_events(tuple(e for e in events if rho((e,)) is None))}",
                    where, labels=(Label(measure.span, "the measure declared here"),),
                    hint="zCDP covers Gaussian and discrete Gaussian noise and pure-DP releases; a mechanism proved "
                         "only (eps, delta) with delta > 0, propose-test-release, smooth sensitivity or shuffling have none: drop the "
                         "measure to have it reported in (eps, delta)"))
        return delta

    def _check_private(self, decl: S.DefDecl, name: str, cost: C.Cost | None) -> None:
        if cost is None or cost.blame is None:
            return
        blame = cost.blame
        self.errors.append(
            Diagnostic(
                blame.code,
                f"`{decl.name}` is not differentially private in `{name}`: {blame.message}",
                blame.span,
                labels=blame.labels,
                hint=blame.hint,
            )
        )

    def _signature_scope(self, decl: S.DefDecl) -> dict[str, Fraction]:
        """The constants a definition's signature (its parameters' bounds and
        types) may name: a parameter's name means the parameter, so it hides
        the constant of that name (`(c : num) (db :[c] bag Row)` is refused,
        not read as the constant `c`)."""
        names = {p.name for p in decl.params}
        scope = {name: value for name, value in self.globals.constants.items() if name not in names}
        scope.update(self._bound_scope)
        return scope

    def _declared(self, decl: S.DefDecl, param: S.Param) -> Sens | None:
        if param.sens is None:
            return None
        try:
            return static_sens(param.sens, self._signature_scope(decl), "a sensitivity bound")
        except CheckError as err:
            self.errors.append(err.diagnostic)
            return None

    def _check_declared(self, decl: S.DefDecl, param: S.Param, usage: U.Usage | None) -> None:
        declared = self._declared(decl, param)
        if declared is None or usage is None or usage.sens <= declared:
            return
        uses = U.contributions(usage)
        phrase = " and ".join(f"here ({share})" for _, share in uses[:6]) + (" and elsewhere" if len(uses) > 6 else "")
        message = f"{param.name} is used {phrase}: {usage.sens} > declared {declared}" if uses else (
            f"{param.name} has sensitivity {usage.sens} > declared {declared}"
        )
        notes: list[str] = []
        source = U.infinity_source(usage)
        if source is not None:
            notes.append(f"it is scaled by infinity at {source.span}: {source.reason}")
        labels = tuple(Label(span, f"`{param.name}` used here ({share})") for span, share in uses[:8])
        if len(uses) > 8:
            notes.append(f"and {len(uses) - 8} more uses")
        self.errors.append(
            Diagnostic("FZ305", message, param.span, labels=labels, notes=tuple(notes), hint=_bound_hint(usage.sens))
        )

    def _check_declared_cost(self, decl: S.DefDecl, param: S.Param, cost: C.Cost | None) -> None:
        declared = self._declared(decl, param)
        if declared is None or cost is None or cost.is_infinite:
            return
        eps = C.pure_epsilon(cost.events())
        if eps is not None and Sens(eps) <= declared:
            return
        shown = "an approximate (eps, delta) cost" if eps is None else f"{Sens(eps)}-DP"
        self.errors.append(
            Diagnostic(
                "FZ312",
                f"`{decl.name}` is {shown} in `{param.name}`, but `{param.name}` is declared at most {declared}-DP",
                param.span,
                notes=(f"events: {C.describe_events(cost.events())}",),
            )
        )


def length_witness(name: str, ty: T.Type, length: object, path: tuple[str | int, ...] = ()) -> LengthOf | None:
    """Where a parameter of type ``ty`` shows a vector of ``length``: the
    parameter itself, a record field or tuple component of it, or the rows
    of a bag of vectors (not inside lists, sums or functions, which may hold
    no vector at run time)."""
    if isinstance(ty, T.TVec):
        return LengthOf(name, path) if ty.length == length else None
    if isinstance(ty, T.TBag) and isinstance(ty.elem, T.TVec):
        return LengthOf(name, (*path, "rows")) if ty.elem.length == length else None
    parts: list[tuple[str | int, T.Type]] = []
    if isinstance(ty, T.TRecord):
        parts = list(ty.fields)
    elif isinstance(ty, T.TTuple):
        parts = list(enumerate(ty.items))
    for step, part in parts:
        found = length_witness(name, part, length, (*path, step))
        if found is not None:
            return found
    return None


def _compact(value: Poly) -> str:
    """A call's value as a message shows it: a long number in scientific
    notation (marked approximate)."""
    text = str(value)
    if len(text) <= 40:
        return text
    if value.is_const:
        return f"~{float(value.value):.6g}"
    return text[:37] + "..."


def _symbolic_pair(cost: C.Cost) -> tuple[Poly | None, Poly | None]:
    """A symbolic cost as (eps, delta) polynomials: eps None when not
    expressible; delta None when not expressible or zero (pure)."""
    events = cost.events()
    eps, delta = C.symbolic_epsilon(events), C.symbolic_delta(events)
    if eps is None or delta is None:
        return (None, None) if delta is None and _has_approx(events) else (eps, None)
    return eps, (delta if delta.terms else None)


def _has_approx(events: tuple) -> bool:
    from fuzzpy.accounting.events import SymbolicApprox

    return any(isinstance(e, SymbolicApprox) or _has_approx(getattr(e, "body", ())) for e in events)


def _is_symbolic(cost: C.Cost | None) -> bool:
    return cost is not None and not cost.is_infinite and C.is_symbolic(cost.events())


def _poly_of(expr: S.Expr, scope: dict[str, Poly], divisors: frozenset[str] = frozenset()) -> Poly | None:
    """A bound written over static parameters and constants, as a
    polynomial; dividing by a one-term index over ``divisors`` (the `nat`
    indices' symbols, each >= 1) gives a Laurent term (`1 / n`)."""
    if isinstance(expr, S.NumLit):
        return Poly.const(expr.value)
    if isinstance(expr, S.Var):
        return scope.get(expr.name)
    if isinstance(expr, S.Binary) and expr.op in ("+", "-", "*", "/"):
        left, right = _poly_of(expr.left, scope, divisors), _poly_of(expr.right, scope, divisors)
        if left is None or right is None:
            return None
        if expr.op == "+":
            return left + right
        if expr.op == "-":  # a bound that may be 0 or below somewhere: z3 decides against it
            return left - right
        if expr.op == "*":
            return left * right
        if not right.is_const:
            inverse = right.inverse() if right.symbols() <= divisors else None
            return None if inverse is None else left * inverse
        return left.scale(1 / right.value) if right.value > 0 else None
    return None


def _is_nat(ty: S.TypeExpr | None) -> bool:
    return isinstance(ty, S.TyName) and ty.name == "nat"


def _approximate(cost: C.Cost | None) -> bool:
    """A finite cost with a non-pure event (Gaussian, subsampled, approximate verified)."""
    return cost is not None and not cost.is_infinite and bool(cost.events()) and C.pure_epsilon(cost.events()) is None


def _cost_as_sens(cost: C.Cost | None, linear: bool = True, integral: bool = False) -> Sens:
    """A parameter's sensitivity in the max-divergence metric of `fuzzy`:
    its pure epsilon; infinite when the cost is infinite or not pure, or
    (``linear``: what a call through a function value scales) not linear in
    the distance (`costs.linear_epsilon`)."""
    if cost is None:
        return ZERO
    if cost.is_infinite:
        return INF
    eps = C.linear_epsilon(cost.events(), integral) if linear else C.pure_epsilon(cost.events())
    return INF if eps is None else Sens(eps)


def _bound_hint(found: Sens) -> str:
    if found.is_inf:
        return "the variable is scaled by infinity (see the note); restructure the computation or drop the bound"
    return f"raise the declared bound to {found} or use the variable less"


def _name_span(decl: S.Decl) -> Span:
    return getattr(decl, "name_span", None) or decl.span


def _dedupe(diagnostics: list[Diagnostic]) -> list[Diagnostic]:
    seen: set[tuple[str, str, int, int]] = set()
    out = []
    for d in diagnostics:
        key = (d.code, d.span.file, d.span.line, d.span.col)
        if key not in seen:
            seen.add(key)
            out.append(d)
    return out


def _conclusion(checked: CheckedDef, figures: dict) -> str:
    lines = ["Conclusion:"]
    for p in checked.params:
        if p.name in checked.static_params:
            nat = any(q.name == p.name and _is_nat(q.type) for q in checked.decl.params)
            lines.append(f"  `{p.name}`: a `nat` index (a whole number >= 1 at each call, a symbol here)" if nat else
                         f"  `{p.name}`: a static parameter (a positive number at each call, which is checked at it)")
            continue
        if p.name in checked.symbolic_privacy and checked.deferred:
            lines.append(f"  `{p.name}`: checked at each call's numbers ({', '.join(f'`{n}` is {why}' for n, why in checked.deferred)})")
            continue
        if p.name in checked.symbolic_privacy:
            cost = checked.symbolic_privacy[p.name]
            delta = checked.symbolic_delta.get(p.name)
            nats = {q.name for q in checked.decl.params if _is_nat(q.type)}
            what = ("local reports (replace-one neighbours, each call's numbers give it)" if p.name in checked.local_reports
                    else "not pure" if cost is None else f"({cost}, {delta})-DP" if delta is not None else f"({cost})-DP")
            lines.append(f"  privacy in `{p.name}`: {what} for every value of "
                         + ", ".join(f"whole {n} >= 1" if n in nats else f"{n} > 0" for n in checked.static_params))
            continue
        if p.name in figures:
            continue
        lines.append(f"  `{p.name}`: sensitivity {p.sensitivity}")
    for name, events in (checked.privacy | checked.argument_privacy).items():
        figure = figures[name]
        how = _rule_name(events) if figure.delta == 0 else figure.method
        if figure.delta != 0 and len(events) == 1 and _rule_name(events).startswith("the Gaussian"):
            how = f"{_rule_name(events)} ({figure.method})"
        lines.append(f"  privacy in `{name}`: [{C.describe_events(events)}]")
        lines.append(f"    = {figure.text()} by {how}")
    splits = [e for e in _walk_syntax(checked.decl) if isinstance(e, S.LetTuple) and _is_split(e.expr)]
    for stmt in splits:
        lines.append(f"  parallel composition at the `split` of line {stmt.span.line}: its halves hold disjoint rows, "
                     "so their costs are not added (McSherry, PINQ 2009)")
    return "\n".join(lines)


def _rule_name(events: tuple) -> str:
    """How the events make the figure, in the lecture's words."""
    from fuzzpy.accounting.events import DiscreteGaussian, Gaussian, Geometric, Laplace, Staircase

    if len(events) == 1 and isinstance(events[0], Laplace):
        lap = events[0]
        return (f"the Laplace mechanism: sensitivity {Sens.of(lap.sensitivity)} / scale {Sens.of(lap.scale)} "
                "(Dwork, McSherry, Nissim & Smith 2006)")
    if len(events) == 1 and isinstance(events[0], Gaussian):
        gauss = events[0]
        return f"the Gaussian mechanism: sensitivity {Sens.of(gauss.sensitivity)}, sigma {Sens.of(gauss.sigma)}"
    if len(events) == 1 and isinstance(events[0], Geometric):
        geo = events[0]
        return (f"the geometric mechanism: sensitivity {Sens.of(geo.sensitivity)} x eps {Sens.of(1 / geo.scale)} "
                "(Ghosh, Roughgarden & Sundararajan 2009)")
    if len(events) == 1 and isinstance(events[0], Staircase):
        st = events[0]
        return (f"the staircase mechanism: eps {Sens.of(st.step_epsilon)} x ceil(sensitivity {Sens.of(st.sensitivity)}) "
                "steps (Geng & Viswanath 2016)")
    if len(events) == 1 and isinstance(events[0], DiscreteGaussian):
        dg = events[0]
        return (f"the discrete Gaussian mechanism: sensitivity {Sens.of(dg.sensitivity)}, sigma {Sens.of(dg.sigma)} "
                "(Canonne, Kamath & Steinke 2020)")
    return "basic (sequential) composition: the events' costs add (Dwork & Roth 2014, Thm 3.16)"


def _walk_syntax(node: object) -> list[object]:
    import dataclasses

    found: list[object] = []
    stack = [node]
    while stack:
        item = stack.pop()
        if isinstance(item, tuple):
            stack.extend(item)
        elif dataclasses.is_dataclass(item) and not isinstance(item, type):
            found.append(item)
            stack.extend(getattr(item, f.name) for f in dataclasses.fields(item) if f.name != "span")
    return found


#: the primitives and calls that release with no zCDP bound (`_release_span`)
_NO_ZCDP_PRIMS = frozenset({"ptr_median", "ptr_quantile", "smooth_median", "smooth_quantile", "wishart", "shuffle", "subsample"})


def _release_span(body: S.Expr, events: tuple, callees: set[str] | frozenset[str] = frozenset()) -> Span | None:
    """Where the release without a zCDP bound is written: the first
    `ptr_median`, `shuffle` or `subsample`, call of a mechanism proved
    (eps, delta), or call of a definition (``callees``) with such a release,
    in the body (None: not found, the measure is pointed at)."""
    from fuzzpy.accounting.events import Verified

    approx = {e.name for e in events if isinstance(e, Verified)} | set(callees)
    nodes = sorted((n for n in _walk_syntax(body) if hasattr(n, "span")), key=lambda n: (n.span.line, n.span.col))
    for node in nodes:
        if isinstance(node, S.Prim) and node.name in _NO_ZCDP_PRIMS:
            return node.span
        if isinstance(node, S.Var) and node.name in approx:
            return node.span
    return None


def rests_on(definitions: dict[str, CheckedDef]) -> dict[str, tuple[str, ...]]:
    """Each definition's unchecked `assume def`s, itself and those it calls, transitively."""
    unchecked = {n for n, d in definitions.items() if d.assumption is not None and not d.assumption.checked}
    calls = {n: {v.name for v in _walk_syntax(d.decl.body) if isinstance(v, S.Var) and v.name in definitions}
             for n, d in definitions.items()}
    found: dict[str, tuple[str, ...]] = {}
    for name in definitions:
        seen, stack = {name}, [name]
        while stack:
            for callee in calls.get(stack.pop(), ()):
                if callee not in seen:
                    seen.add(callee)
                    stack.append(callee)
        found[name] = tuple(sorted(seen & unchecked))
    return found


#: set while a program is checked again without one assumption (`_where_bounds_are_used`)
_WEAKENED: contextvars.ContextVar[bool] = contextvars.ContextVar("weakened", default=False)


def _checked_without(program: S.Program, name: str, assumption: str, known: set[str]) -> CheckedProgram | None:
    """`name` and the definitions it uses, checked with `assume def
    assumption` an ordinary `def` whose parameter sensitivities the rules
    infer; None when that does not check."""
    defs = {d.name: d for d in program.decls if isinstance(d, S.DefDecl)}
    used, stack = {name}, [name]
    while stack:
        for v in _walk_syntax(defs[stack.pop()].body):
            if isinstance(v, S.Var) and v.name in defs and v.name in known and v.name not in used:
                used.add(v.name)
                stack.append(v.name)

    def plain(decl: S.Decl) -> S.Decl:
        if not isinstance(decl, S.DefDecl) or decl.name != assumption:
            return decl
        return dataclasses.replace(decl, assumed=False, params=tuple(dataclasses.replace(p, sens=None) for p in decl.params))

    decls = tuple(plain(d) for d in program.decls if not isinstance(d, S.DefDecl) or d.name in used)
    token = _WEAKENED.set(True)
    try:
        return ProgramChecker(dataclasses.replace(program, decls=decls)).run()
    except FuzzError:
        return None
    finally:
        _WEAKENED.reset(token)


def _figures(d: CheckedDef) -> tuple[object, ...]:
    """What a definition reports and `run` charges: its signature and events."""
    return (d.params, d.result, d.privacy, d.symbolic_privacy, d.argument_privacy, d.draws)


def _is_split(expr: object) -> bool:
    from fuzzpy.checker.blocks import is_split

    return is_split(expr)  # type: ignore[arg-type]


__all__ = ["ProgramChecker", "check_program", "explain_definition"]


def _local_reports(params: list[tuple[str, T.Type]], cost: Mapping[str, C.Cost] | None) -> dict[str, Fraction | None]:
    """The bags whose events release local reports, each with its local
    epsilon when that is a number (a symbolic `rr[eps]` is not)."""
    from fuzzpy.accounting.local import has_local, local_epsilon_of

    out: dict[str, Fraction | None] = {}
    for name, ty in params:
        found = None if cost is None else cost.get(name)
        events = None if found is None else found.events()
        if isinstance(ty, T.TBag) and events is not None and has_local(events):
            try:
                out[name] = local_epsilon_of(events)
            except (TypeError, ValueError):
                out[name] = None
    return out
