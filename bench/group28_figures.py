"""Issue 28's last loose figures, printed for the branch at hand (run it on
another checkout with its PYTHONPATH for the 'before' column):

1. a person's k rows over a subsampled pure body (geometric, staircase, two draws);
2. a sample of a derived bag under `--group 2`;
3. one dataset behind two parameters (`run`'s joining of the events) under both relations;
4. `let b = db` read beside `db`.

    PYTHONPATH=$PWD FUZZPY_CACHE=off /work/venv/bin/python bench/group28_figures.py
"""

from __future__ import annotations

from fractions import Fraction as F

from fuzzpy.accounting import accountant
from fuzzpy.accounting.events import Geometric, Group, Laplace, Repeat, Staircase, Subsample
from fuzzpy.accounting.neighbours import Neighbours
from fuzzpy.api import loads
from fuzzpy.checker.driver import check_program
from fuzzpy.frontend.parser import parse_program
from fuzzpy.release.run import _events_by_dataset


def pure_bodies() -> None:
    bodies = {"geometric": (Geometric(F(1), F(1)),), "staircase": (Staircase(F(1), F(1)),),
              "two laplace": (Laplace(F(1), F(2)), Laplace(F(1), F(2)))}
    for name, body in bodies.items():
        for replace in (False, True):
            step = Subsample(F(1, 20), body, direct=True, replace=replace)
            g = accountant.tightest((Group(F(2), (Repeat(50, (step,)),), rows=True),), 1e-6)
            print(f"1. {name}, q 0.05, k 2, 50 rounds, {'replace-one' if replace else 'add/remove'}: "
                  f"{g.epsilon:.6f} ({g.method})")


def derived() -> None:
    body = {"laplace": "laplace[0.5] (size b)", "gauss": "gauss[2] (size b)"}
    for noise, release in body.items():
        for bag in ("db", "filter (fun x -> x > 0) db", "map (fun x -> x + 1) db"):
            src = f"def c (db : bag num) : fuzzy num =\n  loop[50] 0 (fun t -> subsample[0.05] (fun b -> {release}) ({bag}));\n"
            eps = float(loads(src).check(1e-6, None, None, group=2)["c"].parameters[0].cost.epsilon)
            print(f"2. {noise} of {bag}, --group 2: {eps:.6f}")


TWO = """def two (a : bag num) (b : bag num) : fuzzy (num, num) = {
  sample u = gauss[2] (sum[0, 1] a);
  sample v = gauss[3] (size (filter (fun x -> x > 0) b));
  return (u, v)
};
def sub (a : bag num) (b : bag num) : fuzzy (num, num) = {
  sample u = subsample[0.1] (fun s -> gauss[1] (size s)) a;
  sample v = subsample[0.1] (fun s -> gauss[1] (size s)) b;
  return (u, v)
};
"""


def two_parameters() -> None:
    checked = check_program(parse_program(TWO, "x.fz"))
    for name in ("two", "sub"):
        d = checked.definitions[name]
        for rel in ("add-remove-one", "replace-one"):
            events = {p: Neighbours.of(rel, None).resolve(d.privacy[p]) for p in ("a", "b")}
            by = _events_by_dataset(events, {"a": "x", "b": "x"}, dict(d.draws))  # `run`'s `_one_draw` (after)
            g = accountant.tightest(by["x"], 1e-6)
            print(f"3. {name}, one dataset for a and b, {rel}: {g.epsilon:.6f} ({g.method})")


ALIAS = """
def counts (db : bag num) : fuzzy (num, num) = { let b = db; sample u = gauss[2] (size b); sample v = gauss[3] (size db); return (u, v) };
def subs (db : bag num) : fuzzy (num, num) = { let b = db;
  sample u = subsample[0.1] (fun s -> gauss[1] (size s)) b; sample v = subsample[0.1] (fun s -> gauss[1] (size s)) db; return (u, v) };
def both (db : bag num) : fuzzy num = { let b = db; gauss[2] (sum[0, 1] b + sum[0, 1] db) };
"""


def aliases() -> None:
    for rel in ("add-remove-one", "replace-one"):
        report = loads(ALIAS).check(1e-6, rel, None)
        for name in ("counts", "subs", "both"):
            print(f"4. {name}, {rel}: {float(report[name].parameters[0].cost.epsilon):.6f}")


if __name__ == "__main__":
    pure_bodies()
    derived()
    two_parameters()
    aliases()
