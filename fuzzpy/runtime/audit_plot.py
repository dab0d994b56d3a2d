"""The plot of `fuzzpy audit --plot` and of `Program.audit(...).figure()` (matplotlib,
the optional extra `fuzzpy[plot]`)."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from matplotlib.figure import Figure

    from fuzzpy.runtime.audit import AuditResult


def figure(result: AuditResult) -> Figure:
    """The tested events: each one's lower bound and point estimate against the claim, and
    its two probabilities with their Clopper-Pearson intervals."""
    import matplotlib.pyplot as plt

    tested = result.tested
    labels = [f"E{k + 1}" for k in range(len(tested))]
    fig, (left, right) = plt.subplots(1, 2, figsize=(11, 4))
    left.bar(labels, [e.bound for e in tested], color="tab:blue", label=f"lower bound ({result.confidence:g})")
    left.scatter(labels, [min(e.estimate, 50) for e in tested], color="black", zorder=3, label="point estimate")
    left.axhline(result.best.claim, color="tab:red", linestyle="--", label=f"claim eps = {result.best.claim:g}")
    left.set_ylabel("epsilon")
    left.set_title(f"audit of `{result.name}`")
    left.legend(fontsize=8)
    for k, e in enumerate(tested):
        for side, (lo, up), shift, colour in ((1, e.intervals[0], -0.1, "tab:green"),
                                             (2, e.intervals[1], 0.1, "tab:orange")):
            p = (e.k1 if side == 1 else e.k2) / e.n
            right.errorbar(k + shift, p, yerr=[[p - lo], [up - p]], fmt="o", color=colour,
                           label=("P[E | first]" if side == 1 else "P[E | second]") if k == 0 else None)
    right.set_xticks(range(len(tested)), labels)
    right.set_ylabel("probability (Clopper-Pearson)")
    right.set_title("the tested events")
    right.legend(fontsize=8)
    caption = "\n".join(f"{label}: {e.event}  on  {e.pair}"[:150] for label, e in zip(labels, tested, strict=True))
    fig.text(0.01, 0.01, caption, fontsize=6, va="bottom")
    fig.tight_layout(rect=(0, 0.05 * len(tested) / 2, 1, 1))
    return fig
