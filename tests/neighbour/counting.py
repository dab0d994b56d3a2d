"""Generated counting programs: integer-valued queries with integer constants.

Counts, clamped sums of the `int` column, histograms and their integer
combinations are exact in any arithmetic (doubles included), so on these
programs every violation is a broken rule, never rounding: the counting
test must pass today, and it catches a rule broken on purpose.
"""

from __future__ import annotations

from hypothesis import strategies as st

from .programs import CONSTANTS, ROW_TYPE, Draw, Generated, Release, Writer

SMALL_INTS = ("0", "1", "2", "3", "10", "zero")
INT_BOUNDS = (("0", "1"), ("-1", "1"), ("0", "10"), ("-3", "5"))


class CountingWriter(Writer):
    """The `Writer` restricted to counting queries."""

    def count_query(self, db: str, depth: int) -> str:
        """Integer-valued queries with integer constants: counts, clamped sums
        of the int column, histograms. Exact in any arithmetic, so any
        violation is a broken rule, not rounding."""
        sub = lambda: self.count_query(db, depth - 1)  # noqa: E731
        choice = self.draw(st.integers(0, 12 if depth > 0 else 2))
        if choice == 0:
            return f"size {self.bag(db, 2)}"
        if choice == 1:
            lo, hi = self.pick(INT_BOUNDS)
            r = self.name("r")
            return f"sum[{lo}, {hi}] (map (fun {r} -> {r}.k {self.pick(['+', '-'])} {self.pick(SMALL_INTS)}) {self.bag(db, 1)})"
        if choice == 2:
            return self.pick(SMALL_INTS)
        if choice == 3:
            return f"({sub()} {self.pick(['+', '-'])} {sub()})"
        if choice == 4:
            return f"({self.pick(SMALL_INTS)} * {sub()})"
        if choice == 5:
            lo, hi = self.pick(INT_BOUNDS)
            return f"clip[{lo}, {hi}] ({sub()})"
        if choice == 6:
            return f"{self.pick(['abs', '-'])} ({sub()})"
        if choice == 7:
            return f"{self.pick(['min', 'max'])} ({sub()}) ({sub()})"
        if choice == 8:
            x = self.name("x")
            return f"(let {x} = {sub()} in {self.pick([x, f'{x} + {x}', f'{x} - {x}', '3'])} + {sub()})"
        if choice == 9:
            return f"(if {self.public_bool()} then {sub()} else {sub()})"
        if choice == 10:
            return f"{self.pick(['fst', 'snd'])} (<{sub()}, {sub()}>)"
        if choice == 11:
            x, y = self.name("p"), self.name("q")
            pred = self.row_fun(self.row_bool, 1)
            return f"(let ({x}, {y}) = split {pred} {self.bag(db, 1)} in {self.count_query(x, depth - 1)} + {self.count_query(y, depth - 1)})"
        k = self.pick(["1", "3", "7"])
        weights = ", ".join(self.pick(["0", "1", "-1", "2"]) for _ in range(int(k)))
        return f"dot [{weights}] (counts (group[{k}] {self.row_fun(self.row_int, 1)} {self.bag(db, 1)}))"

    def int_query(self, db: str, depth: int) -> str:
        """Queries of type `int`: counts, clamped sums of the int column with
        whole bounds, and their sums and differences (for `geometric` and
        `dgauss`, which take an `int`)."""
        choice = self.draw(st.integers(0, 3 if depth > 0 else 1))
        if choice == 0:
            return f"size {self.bag(db, 2)}"
        if choice == 1:
            lo, hi = self.pick(INT_BOUNDS)
            r = self.name("r")
            return f"sum[{lo}, {hi}] (map (fun {r} -> {r}.k) {self.bag(db, 1)})"
        sub = lambda: self.int_query(db, depth - 1)  # noqa: E731
        if choice == 2:
            return f"({sub()} {self.pick(['+', '-'])} {sub()})"
        return f"{self.pick(['1', '2', '3'])} * ({sub()})"

    def program(self) -> Generated:
        depth = self.draw(st.integers(1, 3))
        eps = self.pick(["1", "0.5", "2"])
        choice = self.draw(st.integers(0, 7))
        if choice == 0:
            query_type, release = "num", Release(f"def m (db : bag R) : fuzzy num = laplace[{eps}] (q db);", "laplace")
            body = self.count_query("db", depth)
        elif choice == 1:
            query_type, body = "(num, num)", f"({self.count_query('db', depth - 1)}, {self.count_query('db', depth - 1)})"
            release = Release(
                f"def m (db : bag R) : fuzzy (num, num) = {{\n  let (x, y) = q db;\n  sample a = laplace[{eps}] x;\n"
                f"  sample b = laplace[{eps}] (y + size db);\n  return (a, b)\n}};",
                "laplace",
            )
        elif choice == 2:
            query_type, body = "num", self.count_query("db", depth)
            release = Release(
                f"def m (db : bag R) : fuzzy num =\n  loop[{self.pick(['1', '3'])}] 0 (fun t -> {{ sample x = laplace[{eps}] (q db); return t - x }});",
                "laplace",
            )
        elif choice == 3:
            k = self.pick(["2", "5"])
            query_type, body = "vec[1] num", f"counts (group[{k}] {self.row_fun(self.row_int, 1)} {self.bag('db', depth - 1)})"
            release = Release(f"def m (db : bag R) : fuzzy (vec[1] num) = laplace[{eps}] (q db);", "laplace")
        elif choice in (5, 6):  # integer releases (issue 29): the same noise on both neighbours
            query_type, body = "int", self.int_query("db", depth)
            if choice == 5:
                release = Release(f"def m (db : bag R) : fuzzy int = geometric[{eps}] (q db);", "geometric")
            else:
                sigma = self.pick(["1", "0.5", "3 / 7", "40"])
                release = Release(f"def m (db : bag R) : fuzzy int = dgauss[{sigma}] (q db);", "dgauss")
        elif choice == 7:  # the staircase (issue 29): the same noise on both neighbours
            gamma = self.pick(["", ", 0.25", ", 1", ", 0"])
            query_type, body = "num", self.count_query("db", depth)
            release = Release(f"def m (db : bag R) : fuzzy num = staircase[{eps}{gamma}] (q db);", "staircase")
        else:
            query_type, body = "num", self.count_query("db", depth)
            c = self.name("c")
            release = Release(
                f"def m (db : bag R) : fuzzy num =\n  expmech[{eps}] [0, 1, 2] (fun {c} d -> q d + {c}) db;",
                "outcome",
            )
        lines = [ROW_TYPE, CONSTANTS, f"def q (db : bag R) : {query_type} =\n  {body};", release.text]
        return Generated("\n".join(lines) + "\n", {"q": "deterministic", "m": release.model})


@st.composite
def counting_programs(draw: Draw) -> Generated:
    """Programs whose queries are integer-valued with integer constants."""
    return CountingWriter(draw).program()
