"""Review s27 (refdelta item 3): shuffled reports without --delta say that the
amplification needs delta > 0 and show the figure at the default delta, and
`--delta 0` is refused in words that agree with the help."""

from __future__ import annotations

import json

import pytest

from fuzzpy.cli import main


def _out(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    seen = capsys.readouterr()
    return code, seen.out, seen.err


def test_shuffled_reports_without_delta_name_the_amplified_figure(capsys: pytest.CaptureFixture[str]) -> None:
    code, pure_text, _ = _out(capsys, "budget", "--shuffle", "5000", "--rr", "1.5")
    assert code == 0
    _, at_default, _ = _out(capsys, "budget", "--rr", "1.5", "--shuffle", "5000", "--delta", "0.000001")
    tightest = next(line for line in at_default.splitlines() if line.endswith("<- tightest"))
    figure = tightest.split("eps =")[1].split()[0]
    note = next(line for line in pure_text.splitlines() if "note:" in line)
    assert "amplifies only at delta > 0" in note
    assert f"eps = {figure}" in note and "1e-06" in note
    assert float(figure) < 1.5


def test_the_json_carries_the_figure_at_the_default_delta(capsys: pytest.CaptureFixture[str]) -> None:
    _, text, _ = _out(capsys, "budget", "--rr", "1.5", "--shuffle", "5000", "--json")
    doc = json.loads(text)
    assert doc["delta"] == 0
    extra = doc["shuffled_at_default_delta"]
    assert extra["delta"] == 1e-6 and extra["epsilon"] < 1.5


def test_unshuffled_or_explicit_delta_prints_no_note(capsys: pytest.CaptureFixture[str]) -> None:
    for argv in (("budget", "--rr", "1.5"), ("budget", "--rr", "1.5", "--shuffle", "5000", "--delta", "1e-5")):
        _, text, _ = _out(capsys, *argv)
        assert "note:" not in text


@pytest.mark.parametrize("command", ["check", "budget"])
def test_help_and_a_delta_of_zero_agree(capsys: pytest.CaptureFixture[str], command: str) -> None:
    _, out, _ = _out(capsys, command, "--help")
    help_text = " ".join(out.split())
    assert "strictly between 0 and 1" in help_text
    assert "0 for pure ones)" not in help_text  # not offered as a value to type
    argv = [command, "--delta", "0", "examples/clamped_mean.fz"]
    code, _, err = _out(capsys, *argv)
    assert code != 0 and "FZ703" in err and "leave --delta out" in err
