"""A mechanism reads a local only where every path has declared it; `check`
and `verify` both say so (a black-box review found `check` accepting a read
of a `var` declared in one branch, and `verify` answering unknown)."""

import pytest

from fuzzpy.api import loads
from fuzzpy.api.errors import Rejected

HEAD = """mechanism m (xs : vec[inf] num, e : num) : num
  requires e > 0
  privacy e
{
"""


def _codes(body: str) -> list[str]:
    try:
        loads(HEAD + body + "}\n").check()
    except Rejected as error:
        return [d.code for d in error.diagnostics]
    return []


@pytest.mark.parametrize("body", [
    "  if (xs[0] > 0) { var y = 1; }\n  return y + lap(1 / e);\n",
    "  var k = 0;\n  while (k < len(xs)) { var t = xs[k]; k = k + 1; }\n  return t + lap(1 / e);\n",
    "  if (xs[0] > 0) { var y = 1; } else { var z = 2; }\n  return y + lap(1 / e);\n",
])
def test_a_read_some_path_never_declares_is_refused(body: str) -> None:
    assert "FZ401" in _codes(body)


@pytest.mark.parametrize("body", [
    "  if (xs[0] > 0) { var y = 1; } else { var y = 2; }\n  return y + lap(1 / e);\n",
    "  if (xs[0] > 0) { return 0; } else { var y = 2; }\n  return y + lap(1 / e);\n",
    "  var y = 0;\n  if (xs[0] > 0) { y = 1; }\n  return y + lap(1 / e);\n",
])
def test_every_path_declaring_is_accepted(body: str) -> None:
    assert _codes(body) == []

