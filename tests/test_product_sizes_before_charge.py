"""A mechanism's exact arithmetic that may outgrow its bound is refused before
the charge, on every dataset alike (issue 29, validity).

The old runtime refused (FZ519) a product of two expanded forms above 2^17
pairs of monomials *while running*, after the ledger was charged; how many
monomials a value has depends on the rows (a coefficient that is 0 drops its
monomials), so a neighbour whose count was 0 released and the one whose count
was 1 failed, charged. Now `runtime.product_sizes` decides it from the text.
"""

from __future__ import annotations

import glob
from fractions import Fraction
from pathlib import Path

import pytest

from fuzzpy.cli import main
from fuzzpy.frontend.parser import parse_program
from fuzzpy.language.syntax import MechanismDecl
from fuzzpy.runtime import lazy_reals as R
from fuzzpy.runtime.interpreter import Interpreter
from fuzzpy.runtime.mechanisms import run_mechanism
from fuzzpy.runtime.product_sizes import oversized_product
from fuzzpy.runtime.randomness import SeededSource
from fuzzpy.runtime.values import RuntimeFailure

ROOT = Path(__file__).resolve().parent.parent

# a proved Gaussian mechanism: w's third monomial is there only when the count is not 0
BLOWUP = """type Row = { v : num };

mechanism blowup (q : vec[inf] num, sigma : num) : num
  requires sigma >= 8
  requires len(q) <= 1
  privacy (1, 0.001)
{
  var a = gauss(sigma) align 0;
  var b = gauss(sigma) align 0;
  var c = gauss(sigma) align 0;
  var w = a + q[0] * b + c;
""" + "  w = w * w;\n" * 8 + """  return q[0] + gauss(sigma) align -dist(q[0]);
}

def count (db : bag Row) : num = size (filter (fun r -> r.v > 0) db);

def f (db : bag Row) : fuzzy num = blowup (tabulate [0] (fun t -> count db)) 8;
"""


def _run(root: Path, rows: str, tag: str, capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    (root / f"{tag}.csv").write_text("v\n" + rows)
    ledger = root / f"{tag}.sqlite"
    code = main(["run", str(root / "p.fz"), "f", "--data", f"db={root / f'{tag}.csv'}", "--ledger", str(ledger),
                 "--budget", "4,0.01", "--delta", "0.002", "--seed", "1"])
    out = capsys.readouterr()
    return code, out.out + out.err


@pytest.mark.slow  # two runs of the CLI (the old code charged the second and failed)
def test_neighbours_are_refused_alike_and_before_the_charge(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "p.fz").write_text(BLOWUP)
    zero = _run(tmp_path, "0\n0\n", "zero", capsys)  # count 0: the old code released
    one = _run(tmp_path, "0\n0\n1\n", "one", capsys)  # count 1: the old code charged, then FZ519
    for code, out in (zero, one):
        assert code != 0 and "FZ519" in out and "before anything is charged" in out, out
        assert "charged:" not in out
    assert zero[0] == one[0]


def _mechanism(text: str) -> MechanismDecl:
    return next(d for d in parse_program(text, "m.fz").decls if isinstance(d, MechanismDecl))


SQUARES = """mechanism squares (x : num) : num privacy 1 {
  var w = 3 + lap(1) align 0;
  var i = 0;
  while (i < %s) { w = w * w; i = i + 1; }
  return x + lap(1) align -dist(x);
}"""


@pytest.mark.slow  # w^512 of an exact draw, released: seconds
def test_a_power_over_one_draw_is_kept_and_the_runtime_agrees() -> None:
    decl = _mechanism(SQUARES % "9")  # w^512 over one draw: 257 x 257 pairs at the last product
    assert oversized_product(decl, {}) is None
    interp = Interpreter(parse_program(SQUARES % "9", "m.fz"), SeededSource(4))
    assert isinstance(run_mechanism(decl, (Fraction(1),), interp), float)


def test_a_power_over_one_draw_in_a_counted_loop_passes() -> None:
    assert oversized_product(_mechanism(SQUARES % "9"), {}) is None
    assert oversized_product(_mechanism(SQUARES % "10"), {}) is not None  # 513 x 513 pairs


def test_a_loop_of_squares_with_no_trip_bound_is_refused() -> None:
    unbounded = _mechanism(SQUARES.replace("(x : num)", "(x : num, k : num)") % "k")
    found = oversized_product(unbounded, {})
    assert found is not None and found.left > 1 and found.right > 1
    bounded = _mechanism(SQUARES.replace("(x : num)", "(x : num, k : num)").replace("privacy 1", "requires k <= 9\n"
                                                                                    "  privacy 1") % "k")
    assert oversized_product(bounded, {}) is None  # `requires k <= 9`: at most nine squarings


def test_three_draws_squared_eight_times_is_refused_whatever_the_data() -> None:
    found = oversized_product(_mechanism(BLOWUP.split("def count")[0].split("type Row = { v : num };")[1]), {})
    assert found is not None and found.span.line == 16  # the sixth squaring: (X+Y+Z)^32 by itself


def test_a_counter_reassigned_in_a_branch_has_no_known_start() -> None:
    text = """mechanism m (x : num, c : bool) : num privacy 1 {
  var w = 3 + lap(1) align 0 + lap(1) align 0;
  var i = 0;
  if (c) { i = -100; }
  while (i < 2) { w = w * w; i = i + 1; }
  return x + lap(1) align -dist(x);
}"""
    assert oversized_product(_mechanism(text), {}) is not None  # 102 squarings when c holds
    assert oversized_product(_mechanism(text.replace("  if (c) { i = -100; }\n", "")), {}) is None


@pytest.mark.slow  # 140,000 monomials: seconds
def test_a_constant_times_a_long_sum_is_linear_work_not_refused() -> None:
    # 2 x (a sum of 140,000 draws) multiplies 140,000 pairs: the old bound refused it
    long = {(k,): Fraction(1) for k in range(140_000)}
    assert len(R._mul_terms({(): Fraction(2)}, long)) == 140_000
    with pytest.raises(RuntimeFailure) as refused:
        R._mul_terms({(): Fraction(1), (0,): Fraction(1)}, long)  # two monomials: 280,000 pairs
    assert refused.value.code == "FZ519"


QUOTIENT = """mechanism m (x : num) : num privacy 1 {
  var a = lap(1) align 0;
  var b = lap(1) align 0;
  var r = (a + b + x) / (a - b + 2);
  var s = r + 1 / (a + 3);
%s  if (s > 5) { return 1; }
  return x + lap(1) align -dist(x);
}"""


def test_a_quotient_is_bounded_through_its_denominators_as_the_runtime_computes_it() -> None:
    # a sum of quotients multiplies numerators by denominators: four squarings fit, five do not
    text = QUOTIENT % ("  s = s * s;\n" * 4)
    assert oversized_product(_mechanism(text), {}) is None
    assert run_mechanism(_mechanism(text), (Fraction(1),), Interpreter(parse_program(text, "m.fz"), SeededSource(1))) \
        is not None  # it runs: no FZ519
    found = oversized_product(_mechanism(QUOTIENT % ("  s = s * s;\n" * 5)), {})
    assert found is not None and found.span.line == 10


def test_no_mechanism_of_the_examples_is_refused() -> None:
    files = sorted(glob.glob(str(ROOT / "examples" / "**" / "*.fz"), recursive=True))
    seen = 0
    for name in files:
        for decl in parse_program(Path(name).read_text(), name).decls:
            if isinstance(decl, MechanismDecl):
                seen += 1
                assert oversized_product(decl, {}) is None, (name, decl.name)
    assert seen >= 30
