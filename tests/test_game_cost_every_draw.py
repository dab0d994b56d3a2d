"""`verify --explain`: every draw's cost appears in the game's cost arithmetic
(issue 29). It missed a draw in a loop guard (no rule was shown for it
either) and a draw whose shift has no constant bound, such as NumericSparse's
comparison `q[i] + lap(...) >= tt` with the threshold redrawn in the loop
(Dwork & Roth 2014, Alg. 3): the statement walk said "bounded (see the cost)"
and the cost said nothing of it."""

from __future__ import annotations

import io
import re
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path

import pytest

from fuzzpy.cli import main

pytestmark = pytest.mark.slow  # each proves and minimises a mechanism: seconds to a minute

ROOT = Path(__file__).resolve().parent.parent

GUARD = """mechanism first_above (q : vec[inf] num, t : num, eps : num) : int
  requires eps > 0
  privacy eps
{
  var tt = t + lap(2 / eps);
  var i = 0;
  while (i < len(q) && q[i] + lap(4 / eps) < tt) {
    i = i + 1;
  }
  return i;
}
"""


def _explain(path: Path) -> str:
    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        code = main(["verify", "--explain", str(path)])
    assert code == 0, out.getvalue() + err.getvalue()
    return out.getvalue()


def _draw_lines(text: str) -> set[int]:
    return {k for k, line in enumerate(text.splitlines(), 1)
            if re.search(r"\blap(plus)?\(", line.split("//", 1)[0])}


def _costed(game: str) -> set[int]:
    cost = game[game.index("    cost:"):]
    return {int(n) for n in re.findall(r"the draw at line (\d+)", cost)}


def test_a_draw_in_a_loop_guard_has_its_rule_and_its_cost(tmp_path: Path) -> None:
    (tmp_path / "g.fz").write_text(GUARD)
    game = _explain(tmp_path / "g.fz")
    guard = game[game.index("      line 7   while"):game.index("      line 8 ")]
    assert "Laplace rule (shift the noise), shift dist(tt) - dist(q[i])" in guard
    assert _costed(game) == {5, 7}


def test_numeric_sparses_comparison_is_in_the_cost() -> None:
    path = ROOT / "tests" / "mechanism_suite" / "dwork_roth" / "numeric_sparse.fz"
    game = _explain(path)
    assert _costed(game) == _draw_lines(path.read_text()) == {16, 20, 21, 23}
    line = next(x for x in game.splitlines() if "the draw at line 20" in x)
    assert "|dist(tt) - dist(q[i])| / (9 * N / (2 * eps)) when shifted" in line and "0 in the other case" in line


@pytest.mark.parametrize("name", ["num_svt", "above_threshold", "gap_svt", "sparse_vector_redraw"])
def test_every_draw_of_an_example_is_costed(name: str) -> None:
    path = ROOT / "examples" / "mechanisms" / f"{name}.fz"
    assert _costed(_explain(path)) == _draw_lines(path.read_text())
