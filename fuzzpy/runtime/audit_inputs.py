"""Neighbouring inputs for `fuzzpy audit` (issue 30 item 6): where a leak shows.

* A `mechanism`: inputs at the edge of its `requires`, as StatDP chooses them
  (Ding et al., CCS 2018, section 5): vectors at 0 (public numbers, thresholds
  included, at 0 as well, so that every SVT answer is a coin flip and every noisy
  max a tie) against vectors moved as far as the norm allows, every entry by
  +/-1 in several sign patterns for `vec[inf]` (all up, one up and the rest
  down, halves, alternating, all but the first, only the last), one entry for
  `vec[1]`/`vec[2]`; private scalars by the largest of +/-2, 1, 1/2 their
  `requires` admit; lengths 2, 4 and 8; the claim's numbers at 1 and (at
  length 4) at 1/2, where a scale written `eps` for `1 / eps` shows, and (at
  length 8) at 3, where a loss that adds up over the coordinates clears the
  claim by a margin the test can see; there, each free public number (a
  threshold, a margin) also at 2 and 8, one at a time (docs/audit.md derives
  both for an SVT that releases its noisy query). `fuzzpy audit --arg` fixes
  public numbers and the length instead. Only
  pairs the claim speaks about are kept (the verifier's reading of
  `requires`, `fuzzpy.verifier.relation.neighbours`).
* A definition over a bag (add-remove-one neighbours, language.md): small
  adversarial datasets, an empty bag or a few default rows, against the same
  bag with one row added whose numbers sit at 0, +/-1, the program's literals
  and one past them (a row just over a filter's threshold), or far out
  (+/-10^6: a clamp's edge).
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from fractions import Fraction

import numpy as np

from fuzzpy.language import syntax as S
from fuzzpy.runtime.bag import Bag, column_from_rows
from fuzzpy.runtime.defaults import row_default
from fuzzpy.runtime.values import Record, WithPair
from fuzzpy.verifier.model import MechanismInfo
from fuzzpy.verifier.prover import private_scalars
from fuzzpy.verifier.public_lists import standing_vectors
from fuzzpy.verifier.relation import evaluate, mentions_distance, neighbours
from fuzzpy.verifier.walk import sub_expressions

LENGTHS = (2, 4, 8)
SCALAR_MOVES = tuple(Fraction(d) for d in (2, -2, 1, -1, Fraction(1, 2), Fraction(-1, 2)))
SCALE_PAIRS = 6  # pairs with the claim's numbers at 1/2
HIGH_BUDGET = Fraction(3)  # the claim's numbers high too: a loss that adds up over coordinates (docs/audit.md)
FAR_PUBLIC = (Fraction(2), Fraction(8))  # a public threshold or margin away from 0
MAX_VECTOR_MOVES = 16
MAX_BAG_PAIRS = 20
FAR = 10**6


class NoInputs(Exception):
    """No neighbouring inputs meet the `requires` (or the parameters are not auditable)."""


@dataclass(frozen=True)
class Pair:
    """Two neighbouring inputs: each side's arguments by parameter name, and a label to print."""

    first: dict[str, object]
    second: dict[str, object]
    label: str
    claim_env: dict[str, Fraction | bool]  # the public parameters the claim is evaluated at


# ---------------------------------------------------------------- mechanisms


def mechanism_pairs(info: MechanismInfo, lengths: tuple[int, ...] = LENGTHS,
                    fixed: dict[str, Fraction | bool] | None = None) -> list[Pair]:
    """Neighbouring inputs at the edge of ``info``'s `requires` (module docstring);
    ``fixed`` holds public scalars the user fixed (`fuzzpy audit --arg`)."""
    fixed = fixed or {}
    unknown = sorted(set(fixed) - set(info.scalars))
    if unknown:
        raise NoInputs(f"`{info.decl.name}` has no public parameter `{unknown[0]}`"
                       + (" (a private parameter cannot be fixed)" if unknown[0] in private_scalars(info) else ""))
    private = sorted(set(fixed) & private_scalars(info))
    if private:
        raise NoInputs(f"`{private[0]}` is private in `{info.decl.name}`: the audit moves it, it cannot be fixed")
    longest = lengths[-1]
    variants: list[tuple[int, Fraction, dict[str, Fraction]]] = [(n, Fraction(1), {}) for n in lengths]
    variants.append((lengths[len(lengths) // 2], Fraction(1, 2), {}))
    variants.append((longest, HIGH_BUDGET, {}))
    variants += [(longest, HIGH_BUDGET, {name: value}) for name in _free_numbers(info) for value in FAR_PUBLIC]
    found: list[Pair] = []
    for length, budget, moved in variants:
        params = _parameters(info, length, budget, {**moved, **fixed})
        if params is not None:
            found += _pairs_at(info, params, length)[: None if budget == 1 and not moved else SCALE_PAIRS * 2
                                                     if budget > 1 else SCALE_PAIRS]
    if not found:  # a `requires` on the length: the first length it admits
        for length in range(1, 13):
            params = _parameters(info, length, Fraction(1), fixed)
            if params is not None:
                found = _pairs_at(info, params, length)
                break
    if not found:
        raise NoInputs(f"no neighbouring inputs of `{info.decl.name}` meet its `requires`"
                       + (" at the fixed values" if fixed else ""))
    return list({p.label: p for p in found}.values())  # fixed values can make variants coincide


def _free_numbers(info: MechanismInfo) -> list[str]:
    """Public numbers that are not the claim's, not the file's constants and not integers
    (thresholds, margins): each is also tried far from 0, one at a time."""
    claim, private = _claim_names(info), private_scalars(info)
    return [name for name, sort in info.scalars.items()
            if sort == "num" and name not in claim and name not in private and name not in info.constants]


def _claim_names(info: MechanismInfo) -> set[str]:
    return {e.name for e in sub_expressions(info.decl.privacy) if isinstance(e, S.Var)}


def first_values(info: MechanismInfo, budget: Fraction) -> dict[str, Fraction | bool]:
    """The first guess at public scalars: the file's constants, bools true,
    private scalars 1/4, the claim's numbers at ``budget``, other integers 1
    and other numbers 0 (also the test suite's statistical net's guess)."""
    claim, private = _claim_names(info), private_scalars(info)
    values: dict[str, Fraction | bool] = dict(info.constants)
    for name, sort in info.scalars.items():
        if name in values:
            continue
        if sort == "bool":
            values[name] = True
        elif name in private:
            values[name] = Fraction(1, 4)
        elif name in claim:
            values[name] = Fraction(1) if sort == "int" else budget
        else:
            values[name] = Fraction(1) if sort == "int" else Fraction(0)
    return values


def _parameters(info: MechanismInfo, length: int, budget: Fraction,
                fixed: dict[str, Fraction | bool] | None = None) -> dict[str, Fraction | bool] | None:
    """Public values meeting the `requires` that mention no distance: the claim's
    numbers at ``budget``, integers at 1 (fewest answers, largest cost per answer),
    other numbers at 0, ``fixed`` ones as given; else the first of 1, 3, 2, 1/2 that
    fits, one name at a time."""
    fixed = fixed or {}
    values = {**first_values(info, budget), **fixed}
    vectors = {q: [Fraction(0)] * length for q in info.vectors}
    if _public_requires_hold(info, values, vectors):
        return values
    for name, sort in info.scalars.items():
        if name in info.constants or name in fixed or sort == "bool":
            continue
        for candidate in (Fraction(1), Fraction(3), Fraction(2), Fraction(1, 2)):
            trial = dict(values, **{name: candidate})
            if _public_requires_hold(info, trial, vectors):
                return trial
    return None


def _public_requires_hold(info: MechanismInfo, values: dict[str, Fraction | bool],
                          vectors: dict[str, list[Fraction]]) -> bool:
    try:
        return all(evaluate(r, values, {}, vectors, {}) for r in info.decl.requires if not mentions_distance(r))
    except (KeyError, TypeError, ZeroDivisionError):
        return False


def vector_moves(norm: str, length: int) -> list[list[int]]:
    """StatDP's sign patterns for `vec[inf]`; one entry (first or last) by +/-1 otherwise."""
    if norm != "inf":
        moves = [[d if k == at else 0 for k in range(length)] for at in (0, length - 1) for d in (1, -1)]
        return moves[: 4 if length > 1 else 2]
    half = length // 2
    patterns = [[1] * length, [1] + [-1] * (length - 1), [1] * half + [-1] * (length - half),
                [(-1) ** k for k in range(length)], [-1] * (length - 1) + [1],
                [0] + [1] * (length - 1), [0] * (length - 1) + [1]]
    signed = ([s * d for d in p] for s in (1, -1) for p in patterns)
    return [list(p) for p in dict.fromkeys(tuple(p) for p in signed)]


def _pairs_at(info: MechanismInfo, params: dict[str, Fraction | bool], length: int) -> list[Pair]:
    private = sorted(private_scalars(info))
    vectors = {q: [Fraction(0)] * length for q in info.vectors}
    scalar_moves = [dict(zip(private, m, strict=True)) for m in itertools.product(SCALAR_MOVES, repeat=len(private))]
    standing = standing_vectors(info.decl)  # public lists: the same in both runs
    choices = [[[0] * length] if q in standing else vector_moves(norm, length) for q, norm in info.vectors.items()]
    found: list[Pair] = []
    for vmove in itertools.islice(itertools.product(*choices), MAX_VECTOR_MOVES):
        moved = dict(zip(vectors, vmove, strict=True))
        other_vectors = {q: [a + d for a, d in zip(vectors[q], moved[q], strict=True)] for q in vectors}
        for smove in scalar_moves:
            other = {k: (v + smove[k] if k in smove and not isinstance(v, bool) else v) for k, v in params.items()}
            if neighbours(info, params, other, vectors, other_vectors):
                found.append(Pair({**params, **vectors}, {**other, **other_vectors},
                                  f"({_show({**params, **vectors})}) vs ({_show({**other, **other_vectors})})",
                                  params))
                break  # the largest scalar move that fits, for this vector move
    return found


def _show(values: dict[str, object]) -> str:
    def one(v: object) -> str:
        return "[" + " ".join(str(x) for x in v) + "]" if isinstance(v, list) else str(v)

    return ", ".join(f"{k}={one(v)}" for k, v in values.items())


# ---------------------------------------------------------------- definitions over a bag


def program_literals(node: object, found: set[Fraction] | None = None) -> set[Fraction]:
    """The numeric literals of a syntax tree (thresholds a row may sit beside)."""
    found = set() if found is None else found
    if isinstance(node, S.NumLit):
        found.add(Fraction(node.value))
    elif isinstance(node, tuple):
        for item in node:
            program_literals(item, found)
    elif hasattr(node, "__dataclass_fields__") and type(node).__module__ == S.__name__:
        for name in node.__dataclass_fields__:
            program_literals(getattr(node, name), found)
    return found


def row_values(program: S.Program, decl: S.DefDecl) -> list[Fraction]:
    """The numbers a candidate row's fields take (module docstring), in order of interest:
    0, one past and one short of each literal (the largest first: thresholds and clamp
    bounds before noise parameters), far out, +/-1."""
    literals = sorted(program_literals(decl.body) | program_literals(tuple(
        d for d in program.decls if isinstance(d, (S.DefDecl, S.LetDecl)))), key=abs, reverse=True)[:6]
    values = [Fraction(0)]
    for c in literals:
        values += [c + 1, c - 1]
    values += [Fraction(FAR), Fraction(-FAR), Fraction(1), Fraction(-1)]
    return list(dict.fromkeys(values))


def _fill(template: object, value: Fraction, flag: bool) -> object:
    """``template`` (a default row) with every number at ``value`` and every bool at ``flag``."""
    if isinstance(template, Record):
        return Record({k: _fill(v, value, flag) for k, v in template.fields.items()})
    if isinstance(template, tuple):
        return tuple(_fill(v, value, flag) for v in template)
    if isinstance(template, WithPair):
        return WithPair(_fill(template.left, value, flag), _fill(template.right, value, flag))
    if isinstance(template, (bool, np.bool_)):
        return np.bool_(flag)
    if isinstance(template, (np.integer, int)):
        return np.int64(int(value))
    if isinstance(template, (np.floating, float)):
        return np.float64(float(value))
    if isinstance(template, np.ndarray) and template.dtype.kind in "fi":
        return np.full(template.shape, float(value))
    return template  # strings, units: as they are


def bag_pairs(program: S.Program, decl: S.DefDecl, bag_param: str) -> list[Pair]:
    """(D, D + one row) for small D (module docstring)."""
    param = next(p for p in decl.params if p.name == bag_param)
    if not isinstance(param.type, S.TyBag):
        raise NoInputs(f"`{bag_param}` is not a bag")
    template = row_default(param.type.elem, program)
    rows = [_fill(template, v, k % 2 == 0) for k, v in enumerate(row_values(program, decl))]
    bases = [("{}", []), ("{2 rows at 0}", [_fill(template, Fraction(0), False)] * 2)]
    pairs: list[Pair] = []
    for (base_name, base), row in itertools.product(bases, rows[: MAX_BAG_PAIRS // len(bases)]):
        label = f"{bag_param} = {base_name} vs {base_name} + {_row_text(row)}"
        pairs.append(Pair({bag_param: _bag(base, template)}, {bag_param: _bag([*base, row], template)},
                          label, {}))
    return pairs


def _bag(rows: list[object], template: object) -> Bag:
    return Bag(column_from_rows(rows, template))


def _row_text(row: object) -> str:
    if isinstance(row, Record):
        return "{" + ", ".join(f"{k}: {_row_text(v)}" for k, v in row.fields.items()) + "}"
    if isinstance(row, tuple):
        return "(" + ", ".join(_row_text(v) for v in row) + ")"
    if isinstance(row, np.ndarray):
        return "[" + " ".join(f"{x:g}" for x in row) + "]"
    if isinstance(row, (np.bool_, bool)):
        return "true" if row else "false"
    if isinstance(row, (np.floating, float, np.integer, int)):
        return f"{float(row):g}"
    return repr(row)
