"""The shipped examples through the harness: every definition of
`examples/*.fz` that takes one database runs on the catalogue of adversarial
neighbour pairs for its row type (language design: what `check` accepts,
`run` must honour on any data, not only on the sample files)."""

from __future__ import annotations

from pathlib import Path

import pytest

from .harness import Case, examine
from .runner import Outcome, isolated

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"

#: How far each release may move (compare.py); other fuzzy definitions are
#: compared by their endings only, deterministic ones by their sensitivity.
MODELS = {
    "noisy_count": {"noisy_count": "laplace"},
    "clamped_mean": {"total_income": "laplace", "mean_income": "outcome", "incomes": ""},
    "parallel_split": {"young_and_old": "laplace"},
    "ward_histogram": {"ward_histogram": "laplace", "ward_counts": "", "by_ward": ""},
    "pension_sums": {"total_score": "laplace"},
    "gaussian_centroid": {"noisy_sum": "gauss", "noisy_count": "gauss", "centroid": "gauss"},
    "calibrated_gaussian": {"count_strict": "gauss", "count_usual": "gauss", "count_loose": "gauss",
                            "total_usual": "gauss"},
    "census_report": {"report": "outcome", "married_count": "", "hours_total": ""},
    "visit_summary": {"summary": "laplace", "mean_cost": "outcome"},
    "subsampled_count": {"sampled_count": "unsynced"},
    "matrix_gradient": {"noisy_class_sums": "gauss", "laplace_class_sums": "laplace"},
    "trusted_primitives": {"busier_ward": "laplace", "capped_count": "laplace", "smooth_count": "laplace"},
    "zcdp_measure": {"visits": "gauss", "mixed": "outcome", "count": "dgauss", "rounds": "outcome"},
    "staircase_counts": {"noisy_older": "staircase", "older_sum": "staircase", "half_step": "staircase",
                         "quarter_steps": "staircase"},
}
#: Long-running trainings: a few small pairs instead of the catalogue.
SMALL = {"gradient_descent", "dpsgd", "dpsgd_fixed_batches", "matrix_gradient"}

#: Examples whose catalogue takes more than ~2 s (the `slow` job runs them).
SLOW_CATALOGUE = {"busiest_age_bracket", "calibrated_gaussian", "robust_median", "salary_quantiles", "smooth_median", "matrix_gradient", "trusted_primitives",
                  "zcdp_measure", "private_covariance"}

#: Examples that fail on the current code, with the class of bug (issue 9).
FAILING: dict[str, str] = {}


def _cases() -> list[object]:
    params = []
    for path in sorted(EXAMPLES.glob("*.fz")):
        case = Case(
            path.stem, path.read_text(encoding="utf-8"), models=MODELS.get(path.stem, {}), expect="accepted",
            use_catalogue=path.stem not in SMALL, sizes=(0, 3) if path.stem in SMALL else (),
        )
        marks = [pytest.mark.xfail(strict=True, reason=f"issue 9: {FAILING[path.stem]}")] if path.stem in FAILING else []
        marks += [pytest.mark.slow] if path.stem in SLOW_CATALOGUE else []
        params.append(pytest.param(case, id=path.stem, marks=marks))
    return params


@pytest.mark.parametrize("case", _cases())
def test_example_keeps_its_claims_on_adversarial_data(case: Case) -> None:
    report = isolated(lambda: examine(case), case.seconds)
    if isinstance(report, Outcome):
        pytest.fail(f"{case.name}: examining it {report.describe()}")
    assert report.checked, report.rejection
    assert report.violations == [], "\n".join(report.violations)
