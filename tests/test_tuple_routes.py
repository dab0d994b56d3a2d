"""A tuple written out and taken apart at once (`let (x, y) = (db, db);`) is
two names for what its components read: draws behind x and y are charged as
draws of one database read by two routes (issue 28, reviewer F: 6.76 where
the exact figure is 3.18), never by the pair's metric for every draw."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from fuzzpy.cli import main
from tests.test_one_draw_routes import gaussian_eps, tight

DELTA = 1e-6


def _privacy(tmp_path: Path, capsys: pytest.CaptureFixture[str], text: str) -> dict[str, dict]:
    src = tmp_path / "prog.fz"
    src.write_text(text)
    code = main(["check", "--json", "--delta", repr(DELTA), str(src)])
    out = capsys.readouterr().out
    assert code == 0, out
    return {d["name"]: d.get("privacy", {}) for d in json.loads(out)["definitions"]}


PROGRAMS = """
type Visit = { age : num, ward : string };
def twins (db : bag Visit) : fuzzy (num, num) = {
  let (first, second) = (db, db);
  sample a = gauss[2] (size first);
  sample b = gauss[2] (size second);
  return (a, b)
};
def three_ways (db : bag Visit) : fuzzy (num, num, num) = {
  let (everyone, old, ages) = (db, filter (fun v -> v.age >= 65) db, map (fun v -> clip[0, 1] (v.age / 100)) db);
  sample n = gauss[3] (size everyone);
  sample m = gauss[3] (size old);
  sample s = gauss[3] (sum[0, 1] ages);
  return (n, m, s)
};
def outer_name (db : bag Visit) (other : bag Visit) : fuzzy num = {
  let mine = other;
  let (mine, theirs) = (db, mine);
  gauss[2] (size theirs)
};
"""


def test_two_gaussians_through_a_written_out_pair_compose_as_two_draws(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    privacy = _privacy(tmp_path, capsys, PROGRAMS)
    tight(float(privacy["twins"]["db"]["epsilon"]), gaussian_eps(math.sqrt(2 * 0.25), DELTA))
    tight(float(privacy["three_ways"]["db"]["epsilon"]), gaussian_eps(math.sqrt(3 / 9), DELTA))


def test_a_component_reading_a_name_the_pair_rebinds_reads_the_outer_one(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # `theirs` is the enclosing `mine`, i.e. `other`: spreading the pair into
    # two lets would read `db` instead; the pair keeps its rule there
    privacy = _privacy(tmp_path, capsys, PROGRAMS)["outer_name"]
    assert float(privacy["other"]["epsilon"]) >= gaussian_eps(0.5, DELTA) * (1 - 1e-12)


ALIASES = """
type Visit = { age : num, ward : string };
def three_lets (db : bag Visit) : fuzzy (num, num, num) = {
  let everyone = db;
  let old = filter (fun v -> v.age >= 65) db;
  let ages = map (fun v -> clip[0, 1] (v.age / 100)) db;
  sample n = gauss[3] (size everyone);
  sample m = gauss[3] (size old);
  sample s = gauss[3] (sum[0, 1] ages);
  return (n, m, s)
};
def one_draw_two_routes (db : bag Visit) : fuzzy (num, num, num) = {
  let x = db;
  let y = db;
  let z = x;
  sample a = gauss[2] (size x + size db);
  sample b = gauss[2] (size y);
  sample c = gauss[2] (size z);
  return (a, b, c)
};
def both_kinds (db : bag Visit) : fuzzy (num, num, num) = {
  let x = db;
  let y = filter (fun v -> v.ward == "north") x;
  sample a = laplace[1] (size x);
  sample b = gauss[2] (size y);
  sample c = gauss[2] (size db);
  return (a, b, c)
};
def both_kinds_direct (db : bag Visit) : fuzzy (num, num, num) = {
  sample a = laplace[1] (size db);
  sample b = gauss[2] (size (filter (fun v -> v.ward == "north") db));
  sample c = gauss[2] (size db);
  return (a, b, c)
};
"""


def test_three_aliases_into_three_draws_compose_exactly(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    privacy = _privacy(tmp_path, capsys, ALIASES)
    tight(float(privacy["three_lets"]["db"]["epsilon"]), gaussian_eps(math.sqrt(3 / 9), DELTA))
    assert privacy["both_kinds"]["db"]["epsilon"] == privacy["both_kinds_direct"]["db"]["epsilon"]


def test_a_draw_read_by_two_routes_is_one_draw_at_their_sum_beside_the_others(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # a: one draw at sensitivity 2; b and c: 1 each -> mu^2 = (4 + 1 + 1) / 4;
    # counting a as two independent draws of 1 would give the smaller 4 / 4
    privacy = _privacy(tmp_path, capsys, ALIASES)
    tight(float(privacy["one_draw_two_routes"]["db"]["epsilon"]), gaussian_eps(math.sqrt(6 / 4), DELTA))
