"""Issue 9 after the merges: the checker and the runtime agree on the value
of zero-scaled vectors, on vector lengths at the boundary of a run, on
nested loops, on scoping, and every exact value prints (codes and numbers)."""

from __future__ import annotations

from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest

from fuzzpy.cli import main
from fuzzpy.frontend.parser import parse_program
from fuzzpy.language.diagnostics import FuzzError
from fuzzpy.language.types import LenVar
from fuzzpy.release.pipeline import check, run
from fuzzpy.runtime.bag import Bag
from fuzzpy.runtime.noise import laplace_release
from fuzzpy.runtime.randomness import SeededSource
from fuzzpy.runtime.values import Record, render, to_json

ROW = "type R = { a : num, b : num };\nlet zero = 0;\n"


def checked(text: str):  # type: ignore[no-untyped-def]
    return check(parse_program(ROW + text, "t.fz"))


def table(a: list[float]) -> Bag:
    return Bag(Record({"a": np.array(a, dtype=np.float64), "b": np.ones(len(a))}))


def codes(text: str) -> list[str]:
    with pytest.raises(FuzzError) as info:
        checked(text)
    return [d.code for d in info.value.diagnostics]


# ---------------------------------------------------------------- zero-scaled vectors


@pytest.mark.parametrize("rows", [[], [1.0], [1.0, 5.0, -3.0]])
def test_zero_times_a_vector_is_the_zero_vector_of_its_length(rows: list[float]) -> None:
    program = checked(
        "def q (db : bag R) : vec[2] num = zero * clip2[1] (vsum[10] (map (fun r -> [r.a, r.b, 1]) db));\n"
        "def m (db : bag R) : fuzzy (vec[2] num) = gauss[100] (q db);\n"
    )
    assert list(program.zero_products.values()) == [3]
    assert [Fraction(x) for x in run(program, "q", {"db": table(rows)})] == [0, 0, 0]
    assert len(run(program, "m", {"db": table(rows)}, seed=1)) == 3


def test_the_length_of_a_zero_scaled_parameter_is_passed_by_each_call() -> None:
    program = checked(
        "def scale0 (u : vec[2] num) : vec[2] num = zero * u;\n"
        "def twice (u : vec[2] num) : vec[2] num = scale0 u + scale0 (u + u);\n"
        "def q (db : bag R) : vec[2] num = twice [size db, 1, 2, 3] + zero * [size db, 0, 0, 0];\n"
        "def p (v : vec[2] num) : vec[2] num = twice v;\n"
    )
    (site,) = [length for length in program.zero_products.values() if isinstance(length, LenVar)]
    assert isinstance(site, LenVar)
    assert [Fraction(x) for x in run(program, "q", {"db": table([1.0, 2.0])})] == [0, 0, 0, 0]
    assert len(run(program, "p", {"v": [Fraction(1)] * 5})) == 5


def test_a_zero_scaled_number_is_zero_and_not_evaluated() -> None:
    program = checked(
        "def rec down (n : num) : num = if n <= 0 then 0 else 1 + down (n - 1);\n"
        "def m (db : bag R) : fuzzy num = laplace[1] (size db + zero * down (size db * 100000));\n"
    )
    assert list(program.zero_products.values()) == [None]
    assert run(program, "m", {"db": table([1.0] * 3)}, seed=1) == run(program, "m", {"db": table([1.0] * 3)}, seed=1)


def test_a_zero_scaled_vector_of_a_length_not_known_before_the_data_is_refused() -> None:
    """A vector whose length is neither static nor a parameter's (here a
    lambda's parameter that nothing fixes): `run` could not build its zero."""
    text = "def m (db : bag R) : num = { let f = fun (v : vec[2] num) -> zero * v; size db };\n"
    assert codes(text) == ["FZ214"]


# ---------------------------------------------------------------- lengths at the boundary


PUBLIC = ROW + (
    "def pub (u : vec[2] num) (w : vec[2] num) (db : bag R) : fuzzy (vec[2] num) =\n"
    "  gauss[1] (u + w + zero * vsum[1] (map (fun r -> u) db));\n"
    "def two (u : vec[2] num) (db : bag R) : fuzzy (vec[2] num) = gauss[1] (u + [1, 2] + zero * [size db, 0]);\n"
    "def rows (db : bag (vec[2] num)) : fuzzy (vec[2] num) = gauss[1] (vsum[1] db + [1, 2]);\n"
)


def _releases(tmp_path: Path) -> int:
    """How many releases the ledger records (0 when there is no ledger)."""
    import sqlite3

    path = tmp_path / "l.sqlite"
    if not path.exists():
        return 0
    with sqlite3.connect(path) as db:
        return int(db.execute("select count(*) from releases").fetchone()[0])


def _run(tmp_path: Path, definition: str, data: str, *args: str) -> tuple[int, list[str]]:
    program = tmp_path / "p.fz"
    program.write_text(PUBLIC)
    ledger = tmp_path / "l.sqlite"
    argv = ["run", str(program), definition, "--data", f"db={data}", "--budget", "10,1e-3",
            "--ledger", str(ledger), "--seed", "1", "--json", *args]
    code = main(argv)
    return code, []


@pytest.mark.parametrize(
    ("definition", "args", "exit_code"),
    [
        ("pub", ["--arg", "u=[1,2,3]", "--arg", "w=[1,2,3]"], 0),
        ("pub", ["--arg", "u=[1,2,3]", "--arg", "w=[1,2]"], 2),  # one length variable, two values
        ("two", ["--arg", "u=[1,2]"], 0),
        ("two", ["--arg", "u=[1,2,3]"], 2),  # the type requires 2
    ],
)
def test_argument_lengths_are_checked_before_anything_is_charged(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], definition: str, args: list[str], exit_code: int
) -> None:
    data = tmp_path / "d.csv"
    data.write_text("a,b\n1,2\n")
    code, _ = _run(tmp_path, definition, str(data), *args)
    out = capsys.readouterr()
    assert code == exit_code, out
    if exit_code:
        assert "FZ525" in out.err + out.out
        assert _releases(tmp_path) == 0
    else:
        assert _releases(tmp_path) == 1


def test_argument_lengths_are_checked_before_the_data_is_named_or_read(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A file that does not exist is not even looked for: the wrong length is
    refused first (FZ525), and with the right length the file is (FZ501)."""
    missing = str(tmp_path / "absent.csv")
    code, _ = _run(tmp_path, "two", missing, "--arg", "u=[1,2,3]")
    wrong_length = capsys.readouterr().out  # --json: the failure is a document on stdout
    assert code == 2 and "FZ525" in wrong_length and "FZ501" not in wrong_length
    code, _ = _run(tmp_path, "two", missing, "--arg", "u=[1,2]")
    right_length = capsys.readouterr().out
    assert code == 2 and "FZ501" in right_length and "FZ525" not in right_length
    assert _releases(tmp_path) == 0


@pytest.mark.parametrize(("header", "exit_code"), [("x,y", 0), ("x,y,z", 2)])
def test_a_bag_of_vectors_is_as_wide_as_its_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], header: str, exit_code: int
) -> None:
    data = tmp_path / "v.csv"
    width = len(header.split(","))
    data.write_text(header + "\n" + ",".join(["1"] * width) + "\n")
    code, _ = _run(tmp_path, "rows", str(data))
    out = capsys.readouterr()
    assert code == exit_code, out
    if exit_code:
        assert "FZ525" in out.err + out.out
    assert _releases(tmp_path) == (0 if exit_code else 1)


# ---------------------------------------------------------------- nested loops


def test_nested_loops_cannot_describe_more_than_a_million_releases() -> None:
    deep = "loop[1000] 0 (fun s -> loop[1001] s (fun t -> gauss[1] (size db)))"
    assert codes(f"def m (db : bag R) : fuzzy num = {deep};\n") == ["FZ217"]
    through_call = (
        "def inner (db : bag R) : fuzzy num = loop[2000] 0 (fun t -> laplace[1] (size db));\n"
        "def m (db : bag R) : fuzzy num = loop[1000] 0 (fun s -> inner db);\n"
    )
    assert codes(through_call) == ["FZ217"]
    fits = "def m (db : bag R) : fuzzy num = loop[1000] 0 (fun s -> loop[1000] s (fun t -> gauss[1] (size db)));\n"
    assert checked(fits).definitions["m"].privacy["db"]


# ---------------------------------------------------------------- scoping


def test_a_later_let_does_not_change_what_an_earlier_one_captured() -> None:
    program = checked(
        "def m (db : bag R) : num = { let x = 5; let w = x + 0; let g = fun (y : num) -> x + y; "
        "let x = size db * 1000; w + g 0 + 0 * x };\n"
    )
    assert run(program, "m", {"db": table([1.0, 2.0])}) == 10


# ---------------------------------------------------------------- every exact value prints


def test_a_release_beyond_the_double_range_is_exact_and_prints_saturated() -> None:
    huge = Fraction(10) ** 400
    released = laplace_release(np.array([huge, Fraction(1, 3)], dtype=object), Fraction(1), SeededSource(3))
    assert abs(Fraction(released[0]) - huge) < 10**10 and abs(float(released[1])) < 100
    assert to_json(Fraction(released[0])) == 1.7976931348623157e308
    assert render(10**5000) == "1.7976931348623157e+308" and to_json(-(10**400)) == -1.7976931348623157e308
    assert render(12) == "12"


def test_a_laplace_release_of_a_count_beyond_doubles_runs() -> None:
    program = checked(
        "def q (db : bag R) : num = (dot [zero, 0.5] [size db, size db] + 1e308) * 1e10;\n"
        "def m (db : bag R) : fuzzy num = laplace[1] (q db);\n"
    )
    assert Fraction(run(program, "m", {"db": table([1.0])}, seed=1)) > Fraction(10) ** 317
