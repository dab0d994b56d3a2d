"""Matrices `mat[p] num` (issue 27, item 3; Duet's M_Lp[m, n], Near et al.
OOPSLA 2019): every rule's sensitivity against a brute force over small
neighbouring inputs. The matrix metric is the sum over rows of the rows' Lp
distances; each test measures the outputs' distance in the output type's
metric, divides by the inputs' distance, and asks that the ratio never
exceed what `check` derived -- and, where the rule is tight, that some pair
reaches it."""

from __future__ import annotations

import math
import random
from fractions import Fraction

import numpy as np
import pytest

from fuzzpy.checker import check_program
from fuzzpy.frontend.parser import parse_program
from fuzzpy.language.diagnostics import FuzzError
from fuzzpy.release.pipeline import run
from fuzzpy.runtime.bag import Bag
from fuzzpy.runtime.values import Record


def checked(text: str):
    return check_program(parse_program(text, "<matrices>"))


def sensitivity(prog, name: str, param: str) -> float:
    (found,) = [p.sensitivity for p in prog.definitions[name].params if p.name == param]
    return math.inf if found.is_inf else float(found.value)


def refused(text: str) -> list[tuple[str, int, int]]:
    with pytest.raises(FuzzError) as info:
        checked(text)
    return [(d.code, d.span.line, d.span.col) for d in info.value.diagnostics]


# ---------------------------------------------------------------- metrics (written here, not imported)


def vnorm(v: list[float], p: str) -> float:
    if p == "1":
        return sum(abs(x) for x in v)
    if p == "2":
        return math.sqrt(sum(x * x for x in v))
    return max((abs(x) for x in v), default=0.0)


def mdist(a: list[list[float]], b: list[list[float]], p: str) -> float:
    """Duet's M_Lp distance: the rows' Lp distances, added."""
    assert len(a) == len(b)
    return sum(vnorm([x - y for x, y in zip(r, s, strict=True)], p) for r, s in zip(a, b, strict=True))


def floats(value) -> list:
    if isinstance(value, (list, tuple)) or hasattr(value, "tolist"):
        items = value.tolist() if hasattr(value, "tolist") else value
        return [floats(x) for x in items]
    return float(Fraction(value))


def neighbours(rng: random.Random, rows: int, cols: int) -> tuple[list[list[Fraction]], list[list[Fraction]]]:
    """A matrix and another that differs in a few entries (often one row,
    sometimes one column, sometimes everywhere)."""
    a = [[Fraction(rng.randrange(-12, 13), 4) for _ in range(cols)] for _ in range(rows)]
    b = [row[:] for row in a]
    shape = rng.choice(["entry", "row", "column", "all", "uniform row"])
    i, j = rng.randrange(rows), rng.randrange(cols)
    if shape == "entry":
        b[i][j] += Fraction(rng.randrange(1, 9), 2)
    elif shape == "row":
        b[i] = [x + Fraction(rng.randrange(-4, 5), 3) for x in b[i]]
    elif shape == "uniform row":
        b[i] = [x + 1 for x in b[i]]
    elif shape == "column":
        for row in b:
            row[j] -= Fraction(rng.randrange(1, 4), 2)
    else:
        b = [[x + Fraction(rng.randrange(-3, 4), 5) for x in row] for row in b]
    return a, b


def worst_ratio(prog, name: str, p_in: str, p_out: str, rows: int, cols: int, out_is_matrix: bool,
                seed: int, trials: int = 16) -> float:
    rng = random.Random(seed)
    worst = 0.0
    for _ in range(trials):
        a, b = neighbours(rng, rows, cols)
        d_in = mdist(floats(a), floats(b), p_in)
        if d_in == 0:
            continue
        fa, fb = floats(run(prog, name, {"m": a})), floats(run(prog, name, {"m": b}))
        if out_is_matrix:
            d_out = mdist(fa, fb, p_out)
        elif isinstance(fa, list):
            d_out = vnorm([x - y for x, y in zip(fa, fb, strict=True)], p_out)
        else:
            d_out = abs(fa - fb)
        worst = max(worst, d_out / d_in)
    return worst


# ---------------------------------------------------------------- rules against brute force


@pytest.mark.parametrize("p", ["1", "2", "inf"])
def test_a_row_and_an_entry_move_at_most_as_far_as_the_matrix(p: str) -> None:
    prog = checked(f"def r (m : mat[{p}] num) : vec[{p}] num = mrow m 2;\n"
                   f"def e (m : mat[{p}] num) : num = mentry m 1 3;")
    assert sensitivity(prog, "r", "m") == 1 and sensitivity(prog, "e", "m") == 1
    assert worst_ratio(prog, "r", p, p, 3, 4, False, seed=1) <= 1 + 1e-12
    assert worst_ratio(prog, "e", p, p, 3, 4, False, seed=2) <= 1 + 1e-12


@pytest.mark.parametrize(("body", "expected"), [
    ("fun x -> 3 * x", 3.0),
    ("fun x -> clip[-1, 1] x", 1.0),
    ("fun x -> x / 4 - 7", 0.25),
    ("sigmoid", 0.25),
])
@pytest.mark.parametrize("p", ["1", "2", "inf"])
def test_mmap_of_an_s_sensitive_function_is_s_sensitive_in_the_same_norm(body: str, expected: float, p: str) -> None:
    prog = checked(f"def f (m : mat[{p}] num) : mat[{p}] num = mmap ({body}) m;")
    assert sensitivity(prog, "f", "m") == pytest.approx(expected)
    ratio = worst_ratio(prog, "f", p, p, 2, 3, True, seed=len(body) + len(p))
    assert ratio <= expected * (1 + 1e-9)
    if body.startswith("fun x -> 3") or body.startswith("fun x -> x / 4"):
        assert ratio == pytest.approx(expected)  # linear: reached


def test_vmap_scales_a_vector_by_the_function_s_sensitivity() -> None:
    prog = checked("def f (v : vec[2] num) : vec[2] num = vmap (fun x -> 2 * x + 1) v;")
    assert sensitivity(prog, "f", "v") == 2
    a, b = [Fraction(1), Fraction(-2), Fraction(3)], [Fraction(2), Fraction(-2), Fraction(1)]
    out = [floats(run(prog, "f", {"v": x})) for x in (a, b)]
    assert out[0] == [3.0, -3.0, 7.0]
    assert vnorm([x - y for x, y in zip(*out, strict=True)], "2") == pytest.approx(2 * vnorm([1.0, 0.0, -2.0], "2"))


def test_transpose_keeps_the_entrywise_l1_distance() -> None:
    prog = checked("def t (m : mat[1] num) : mat[1] num = mtranspose m;\n"
                   "def u : mat[1] num = mtranspose [[1, 2, 3], [4, 5, 6]];")
    assert sensitivity(prog, "t", "m") == 1
    assert floats(run(prog, "u", {})) == [[1.0, 4.0], [2.0, 5.0], [3.0, 6.0]]
    assert worst_ratio(prog, "t", "1", "1", 3, 2, True, seed=5) == pytest.approx(1.0)


def _norm_of(weights: list[int], p: str) -> float:
    return vnorm([float(w) for w in weights], p)


@pytest.mark.parametrize(("p_in", "p_out", "factor"), [
    ("inf", "1", lambda n: n),             # ||x||_1 <= n ||x||_inf
    ("2", "1", math.sqrt),                 # ||x||_1 <= sqrt(n) ||x||_2
    ("inf", "2", math.sqrt),               # ||x||_2 <= sqrt(n) ||x||_inf
    ("1", "2", lambda n: 1),               # ||x||_2 <= ||x||_1
    ("2", "inf", lambda n: 1),             # ||x||_inf <= ||x||_2
    ("1", "inf", lambda n: 1),             # ||x||_inf <= ||x||_1
])
def test_each_norm_conversion_costs_its_inequality_and_is_sound(p_in: str, p_out: str, factor) -> None:
    """A matrix whose row is w * (size db), built in mat[p_in] and read in
    mat[p_out]: the checker claims ||w||_{p_in} x factor(n); one row added to
    db moves the result by ||w||_{p_out} exactly in mat[p_out]."""
    rng = random.Random(p_in + p_out)
    for trial in range(12):
        n = rng.randrange(1, 6)
        w = [rng.randrange(-3, 4) for _ in range(n)]
        if trial == 0:
            w = [2] * n  # equal entries: where inf -> 1, 2 -> 1 and inf -> 2 are tight
        if trial == 1:
            w = [0] * (n - 1) + [3]  # one entry: where 1 -> 2, 2 -> inf and 1 -> inf are tight
        if not any(w):
            continue
        row = ", ".join(f"{x} * size db" for x in w)
        prog = checked(f"def f (db : bag num) : mat[{p_out}] num = ([[{row}], [{row}]] : mat[{p_in}] num);")
        claimed = sensitivity(prog, "f", "db")
        assert claimed == pytest.approx(2 * _norm_of(w, p_in) * factor(n), rel=1e-5)
        small = floats(run(prog, "f", {"db": Bag(np.array([1.0] * 2))}))
        large = floats(run(prog, "f", {"db": Bag(np.array([1.0] * 3))}))
        moved = mdist(small, large, p_out)
        assert moved == pytest.approx(2 * _norm_of(w, p_out))
        assert moved <= claimed * (1 + 1e-9)
        if trial == 0 and p_in in ("inf", "2") and p_out != "inf" or trial == 1 and p_in in ("1", "2") and p_out != "1":
            assert moved == pytest.approx(claimed, rel=1e-5)  # the inequality is reached


def test_vsums_of_buckets_is_c_sensitive_in_the_bag() -> None:
    prog = checked("type R = { x : num, y : num, k : int };\n"
                   "def s (db : bag R) : mat[2] num = vsums[2] (fun r -> [r.x, r.y]) (group[3] (fun r -> r.k) db);")
    assert sensitivity(prog, "s", "db") == 2
    rng = random.Random(7)
    worst = 0.0
    for _ in range(30):
        n = rng.randrange(0, 6)
        rows = [(rng.uniform(-4, 4), rng.uniform(-4, 4), rng.randrange(0, 4)) for _ in range(n + 1)]

        def bag(items):
            return Bag(Record({"x": np.array([r[0] for r in items], dtype=float),
                               "y": np.array([r[1] for r in items], dtype=float),
                               "k": np.array([r[2] for r in items], dtype=np.int64)}))

        small, large = floats(run(prog, "s", {"db": bag(rows[:n])})), floats(run(prog, "s", {"db": bag(rows)}))
        assert len(small) == len(large) == 3
        worst = max(worst, mdist(small, large, "2"))
    assert worst <= 2 + 1e-9
    assert worst > 1.5  # a row of norm >= 2 landing in a bucket moves it by the clip norm


def test_noise_on_a_matrix_costs_its_entrywise_norm() -> None:
    prog = checked("def l (db : bag num) : fuzzy (mat[1] num) = laplace[0.5] [[size db, 0], [0, 2 * size db]];\n"
                   "def g (db : bag num) : fuzzy (mat[2] num) = gauss[4] ([[size db, size db], [0, 0]] : mat[2] num);")
    (lap,) = prog.definitions["l"].privacy.values()
    assert lap[0].epsilon == Fraction(3, 2)  # L1 sensitivity 1 + 2 = 3, times eps
    (gauss,) = prog.definitions["g"].privacy.values()
    assert gauss[0].sensitivity == pytest.approx(math.sqrt(2), rel=1e-6) and gauss[0].sigma == 4
    out = run(prog, "l", {"db": Bag(np.array([1.0, 2.0]))}, seed=3)
    assert len(out) == 2 and all(len(row) == 2 for row in out)


# ---------------------------------------------------------------- refusals, located


def test_transposing_an_l2_matrix_is_refused_where_it_is_written() -> None:
    assert refused("def t (m : mat[2] num) : mat[2] num =\n  mtranspose m;") == [("FZ222", 2, 14)]
    assert refused("def t (m : mat[inf] num) : mat[1] num = mtranspose m;") == [("FZ222", 1, 52)]


def test_a_conversion_that_needs_an_unknown_number_of_columns_is_refused() -> None:
    # a parameter's rows have a length not known before the run: to read
    # mat[2] as mat[1] would multiply by sqrt(columns)
    assert refused("def f (m : mat[2] num) : fuzzy (mat[1] num) =\n  laplace[1] m;") == [("FZ214", 2, 14)]
    # the free direction needs no length
    prog = checked("def f (m : mat[1] num) : mat[2] num = (m : mat[2] num);")
    assert sensitivity(prog, "f", "m") == 1


def test_a_matrix_is_not_a_vector_and_a_norm_is_checked() -> None:
    assert refused("def f (m : mat[2] num) : vec[2] num = m;")[0][0] == "FZ201"
    assert refused("def f (m : mat[3] num) : num = 0;")[0][0] == "FZ112"


def test_an_index_is_public_a_data_dependent_one_is_infinitely_sensitive() -> None:
    prog = checked("def f (db : bag num) : num = mentry [[1, 2], [3, 4]] (size db) 0;")
    assert sensitivity(prog, "f", "db") == math.inf


def test_an_index_outside_the_matrix_fails_the_same_on_every_dataset() -> None:
    prog = checked("def f (db : bag num) : fuzzy (vec[1] num) = laplace[1] (mrow [[size db, 1], [2, 3]] 2);")
    for rows in ([], [1.0, 2.0]):
        with pytest.raises(FuzzError) as info:
            run(prog, "f", {"db": Bag(np.array(rows))}, seed=1)
        assert [d.code for d in info.value.diagnostics] == ["FZ515"]


_PER_ROW = """
def grid : mat[inf] num = [[10, 20, 30], [40, 50, 60]];
def diag (db : bag int) : num = sum[0, 100] (map (fun i -> mentry grid (i - 1) (i + 1)) db);
def whole (db : bag int) : num = sum[0, 1000] (map (fun i -> dot [1, 1, 1] (mrow grid i)) db);
def kept (db : bag int) : num = size (filter (fun i -> mentry grid 0 i > 15) db);
def rows (i : int) : list (vec[1] num) = if i > 0 then [[1.5, 2]] else [];
def grown (db : bag int) : num = sum[0, 1000] (map (fun i -> mentry (mat_of_rows (rows i)) 0 1) db);
"""


@pytest.mark.parametrize(("name", "cells", "expected"), [
    ("diag", [1, 2, -5, 2**40], 30),        # (0, 2) in range; the others default to 0
    ("diag", [0, 1, 0, 1], 60),
    ("whole", [1, 7, -1], 150),             # an out-of-range row: the zero vector
    ("whole", [0, 1, 0, 1], 420),
    ("kept", [1, 2, 3, -9], 2),             # a filter's test sees the default 0, not a failure
    ("grown", [1, 2, 0, -3], 4),            # a per-row matrix with no rows on some rows
])
def test_a_per_row_index_outside_the_matrix_gives_the_default_on_every_row(name: str, cells: list[int],
                                                                          expected: int) -> None:
    """Inside a function run per row, an index (or a matrix's number of rows)
    may come from the row: out of range is the result type's default value
    (num 0, the zero vector), as for every per-row operation, never a failure
    that some datasets have and their neighbours do not (review s28d, F4)."""
    prog = checked(_PER_ROW)
    assert run(prog, name, {"db": Bag(np.array(cells, dtype=np.int64))}, seed=3) == expected


def test_a_per_row_index_in_a_join_key_never_fails_nor_names_the_cell() -> None:
    prog = checked("def g : mat[1] num = [[1, 5]];\n"
                   "def j (a : bag int) (b : bag int) : num =\n"
                   "  size (join[1] (fun i -> if mentry g 0 i > 2 then 1 else 0) (fun s -> s) a b);")
    secret = 987654321
    found = run(prog, "j", {"a": Bag(np.array([1, secret, 0], dtype=np.int64)),
                            "b": Bag(np.array([0, 1], dtype=np.int64))}, seed=2)
    assert found == 2  # 1 -> key 1 (5 > 2); the secret and 0 -> key 0; one row each side per key


def _before_the_charge(text: str, name: str, public: dict) -> list[tuple[str, int]]:
    from fuzzpy.release.feasible import refusals

    prog = checked(text)
    return [(d.code, d.span.col) for d in refusals(prog, prog.definitions[name], public)]


def test_a_public_index_outside_a_public_shape_is_refused_before_the_charge() -> None:
    """`run` checks these before the ledger (review s28d, F3): a `--arg`
    matrix, a literal, `mat_of_rows` of a literal; a static or `--arg` index."""
    text = ("def top (w : mat[2] num) (k : int) (db : bag num) : fuzzy num =\n"
            "  laplace[1] (mentry w k 0 + mentry (mat_of_rows [[1, size db], [0, 0], [2, 2]]) 1 k);")
    assert _before_the_charge(text, "top", {"w": [[1], [2]], "k": 1}) == []
    assert sorted(_before_the_charge(text, "top", {"w": [[1], [2]], "k": 2})) == [("FZ515", 24), ("FZ515", 84)]
    assert _before_the_charge(text, "top", {"w": [], "k": 0}) == [("FZ515", 24)]
    # a branch or a function need not run, and a shadowing binding is not the argument
    others = ("def g (w : mat[1] num) (on : bool) (db : bag num) : fuzzy num =\n"
              "  laplace[1] (if on then mentry w 0 0 else (fun (w : mat[1] num) -> mentry w 0 0) [[size db]]);")
    assert _before_the_charge(others, "g", {"w": [], "on": False}) == []


def test_the_type_prints_as_written() -> None:
    prog = checked("def f (m : mat[inf] num) : mat[inf] num = mmap (fun x -> x) m;")
    (param,) = prog.definitions["f"].params
    assert str(param.type) == "mat[inf] num" and str(prog.definitions["f"].result) == "mat[inf] num"


def test_a_constant_map_still_reads_the_shape_so_an_infinite_move_stays_infinite() -> None:
    """`mmap (fun x -> 0 * x) m` evaluates m at run time (its shape): scaled
    by 0, an index computed from the data inside m would cost nothing while
    the run fails on one neighbour and not the other."""
    assert refused("def f (db : bag num) : fuzzy (mat[1] num) =\n"
                   "  laplace[1] (mmap (fun x -> 0 * x) [[mentry [[5]] (size db) 0]]);")[0][0] == "FZ306"
    assert sensitivity(checked("def g (m : mat[2] num) : mat[2] num = mmap (fun x -> 0 * x) m;"), "g", "m") == 1


def test_a_matrix_type_without_its_norm_is_a_syntax_error_with_a_hint() -> None:
    with pytest.raises(FuzzError) as info:
        checked("def f (m : mat num) : num = 0;")
    (d,) = info.value.diagnostics
    assert d.code == "FZ102" and (d.span.line, d.span.col) == (1, 16) and "mat[2] num" in (d.hint or "")


# ---------------------------------------------------------------- through the command line


@pytest.mark.slow  # the whole command: ~2 s
def test_a_matrix_argument_from_the_command_line_and_a_json_release(tmp_path, capsys) -> None:
    import json

    from fuzzpy.cli import main

    program = tmp_path / "m.fz"
    program.write_text("def f (m : mat[1] num) (db : bag num) : fuzzy (mat[1] num) =\n"
                       "  laplace[1] (mtranspose (mat_of_rows [mrow m 1, [size db, 0]]));\n")
    data = tmp_path / "d.csv"
    data.write_text("x\n1\n2\n")
    base = ["run", str(program), "f", "--data", f"db={data}", "--budget", "5", "--ledger", str(tmp_path / "l.sqlite"),
            "--seed", "4", "--json"]
    assert main([*base, "--arg", "m=[[1, 2], [30, 40]]"]) == 0
    released = json.loads(capsys.readouterr().out)["released"]
    assert len(released) == 2 and all(len(row) == 2 for row in released)
    assert abs(released[0][0] - 30) < 40 and abs(released[1][0] - 40) < 40  # the transpose of [[30, 40], [2, 0]], noised
    # ragged rows: refused before anything is charged
    assert main([*base, "--arg", "m=[[1, 2], [3]]"]) == 2
    assert "FZ525" in capsys.readouterr().out


def test_a_public_index_outside_a_public_shape_is_refused_through_lets_and_calls() -> None:
    """Review s30c: a `let`-bound matrix (annotated or not), an `--arg` index
    passed through a `let`, and a matrix given to another definition were
    charged, then failed with FZ515; each is decidable before the run."""
    lets = ("def a (db : bag int) : fuzzy num = { let m = mat_of_rows [[1, 2]]; laplace[1] (mentry m 0 5 + size db) };\n"
            "def b (i : int) (db : bag int) : fuzzy num =\n"
            "  { let m : mat[1] num = mat_of_rows [[1, 2]]; let j = i - 1; laplace[1] (mentry m 0 j + size db) };\n"
            "def c (db : bag int) : fuzzy (vec[1] num) = { let (m, r) = (mat_of_rows [[size db], [2]], 2); laplace[1] (mrow m r) };")
    assert _before_the_charge(lets, "a", {}) == [("FZ515", 91)]
    assert _before_the_charge(lets, "b", {"i": 3}) == [("FZ515", 86)]
    assert _before_the_charge(lets, "b", {"i": 2}) == []
    assert _before_the_charge(lets, "c", {}) == [("FZ515", 114)]
    calls = ("def pick (w : mat[1] num) (k : int) : num = mentry w k 0;\n"
             "def top (n : int) (db : bag int) : fuzzy num =\n"
             "  { let t = mtranspose [[1, 2, 3]]; laplace[1] (pick t n + size db) };")
    assert _before_the_charge(calls, "top", {"n": 3}) == [("FZ515", 54)]
    assert _before_the_charge(calls, "top", {"n": 2}) == []
    # a name a block rebinds from the data, or a function's parameter, is not the argument
    unknown = ("def u (i : int) (db : bag int) : fuzzy num =\n"
               "  { let f = fun (i : int) -> mentry [[1]] 0 i; let i = 0 * size db; laplace[1] (mentry [[1]] 0 i + f 0) };")
    assert _before_the_charge(unknown, "u", {"i": 4}) == []
