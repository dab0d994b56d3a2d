"""The hand-written adversarial programs, each on its neighbour pairs.

A case passes when check rejects it with a diagnostic (unless it must be
accepted), or when every definition it names ends the same way on both
neighbours of every pair and releases within what the checker derived. Each
case runs in a forked child with a time limit (a hang is a failure too).

`FAILING` lists the cases that fail on the current code, with the class of
bug they show; they are strict xfails, so a fix turns them red here and the
marker is then removed.
"""

from __future__ import annotations

import pytest

from .adversarial import all_cases
from .harness import Case, examine
from .runner import Outcome, isolated

ZERO_TIMES_INF = "0 * e evaluated at run time (0 * inf = NaN), though the checker scaled e by 0"
UNUSED_EVALUATED = "code the checker scales by 0 or drops is evaluated (data-dependent failure)"
FLOAT_SCALARS = "private scalars computed in doubles, not exactly"
FLOAT_SUMS = "clamped sums computed in doubles (rounding, overflow to inf)"
INT64 = "int64 wrap-around or overflow in sums and bounds"
NOISE_RANGE = "noise scale beyond the exact sampler's range: internal error (after charging)"

FAILING: dict[str, str] = {
    "checker_loop_eta_capture": "loop eta-expansion captures a local named `state`",
    "checker_subsample_eta_capture": "subsample eta-expansion captures a local named `state`",
    "checker_mechanism_parameter_shadows_constant": "mechanism precondition read in the wrong scope",
    "checker_vector_length_not_in_type": "vector lengths not in the type",
    "checker_strict_precondition": "strict precondition read as <=",
    "runtime_huge_literal_hangs_check": "unbounded literals evaluated by check",
    "runtime_huge_static_constant": "static values beyond a double: internal error",
    "runtime_zero_times_log": ZERO_TIMES_INF,
    "runtime_zero_times_division": ZERO_TIMES_INF,
    "runtime_zero_dot": ZERO_TIMES_INF,
    "runtime_zero_times_exp": ZERO_TIMES_INF,
    "runtime_zero_times_sqrt": ZERO_TIMES_INF,
    "runtime_zero_scaled_nan_into_noise": ZERO_TIMES_INF,
    "runtime_overflow_then_zero": ZERO_TIMES_INF,
    "runtime_unused_let_recursion": UNUSED_EVALUATED,
    "runtime_zero_scaled_recursion": UNUSED_EVALUATED,
    "runtime_per_row_divergence": UNUSED_EVALUATED,
    "runtime_float_cancellation": FLOAT_SCALARS,
    "runtime_float_scaling": FLOAT_SCALARS,
    "runtime_decimal_literal_rounding": "decimal literals rounded to doubles at run time",
    "runtime_float_sum_rounding": FLOAT_SUMS,
    "runtime_sum_overflow": FLOAT_SUMS,
    "runtime_overflow_in_row_function": FLOAT_SUMS,
    "runtime_int64_sum_wraps": INT64,
    "runtime_int64_sum_wraps_small": INT64,
    "runtime_big_integer_constant_in_rows": "whole-number constants beyond int64 crash column arithmetic",
    "runtime_nan_row_escapes_vector_clipping": "NaN / infinite row vectors escape vsum and clip2",
    "runtime_vector_clipping_rounding": "L2 clipping in doubles overshoots the norm bound",
    "runtime_release_overflows_to_infinity": "a noisy release beyond the double range is released as inf",
    "runtime_noise_scale_out_of_range": NOISE_RANGE,
    "runtime_zero_cost_noise_scale_out_of_range": NOISE_RANGE,
}

CASES = all_cases()


def _param(case: Case) -> object:
    marks = []
    if case.name in FAILING:
        marks.append(pytest.mark.xfail(strict=True, reason=f"issue 9: {FAILING[case.name]}"))
    return pytest.param(case, id=case.name, marks=marks)


@pytest.mark.parametrize("case", [_param(c) for c in CASES])
def test_adversarial_program(case: Case) -> None:
    report = isolated(lambda: examine(case), case.seconds)
    if isinstance(report, Outcome):
        pytest.fail(f"{case.name}: examining it {report.describe()}")
    assert report.violations == [], "\n".join(report.violations)
    assert report.checked or case.expect != "accepted"


def test_every_failing_marker_names_a_case() -> None:
    assert set(FAILING) <= {c.name for c in CASES}
