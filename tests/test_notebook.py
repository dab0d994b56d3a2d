"""The `%%fuzzpy` cell magic (`fuzzpy.api.notebook`), and examples/notebook.ipynb
executed in a real kernel with nbclient."""

from __future__ import annotations

import base64
import json
import sys
from pathlib import Path

import pytest

import fuzzpy
from fuzzpy.api.notebook import CellReport, Failure, fuzzpy_cell, load_ipython_extension

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOK = ROOT / "examples" / "notebook.ipynb"
TEACHING = ROOT / "examples" / "teaching.ipynb"
EXAMPLES = ROOT / "examples"

CELL = """\
type Row = { age : num };
def older (db : bag Row) : fuzzy num = laplace[0.25] (size (filter (fun r -> r.age > 40) db));
def twice (x : num) : num = x + x;
"""

LEAKY = "def h (db : bag num) : num = size (map (fun x -> x + size db) db);\n"


class _Shell:
    """What the magic needs of an IPython shell."""

    def __init__(self) -> None:
        self.user_ns: dict[str, object] = {}
        self.magics: dict[str, object] = {}

    def register_magic_function(self, function, magic_kind: str, magic_name: str) -> None:  # type: ignore[no-untyped-def]
        assert magic_kind == "cell"
        self.magics[magic_name] = function


def test_an_accepted_cell_shows_the_table() -> None:
    shown, program, name = fuzzpy_cell("", CELL)
    assert isinstance(shown, CellReport) and isinstance(program, fuzzpy.Program) and name is None
    page = shown._repr_html_()
    assert "<table" in page and "<code>older</code>" in page and "0.25-DP" in page
    assert "pure (basic composition)" in page  # the method
    assert "<details><summary>derivation</summary>" in page and "Derivation of `older`" in page
    assert "<code>x</code>: 2" in page  # the sensitivity of each parameter
    assert repr(shown).startswith("older : (db :[0.25] bag Row) -> fuzzy num")


def test_a_rejected_cell_shows_the_cli_diagnostics(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    shown, program, _ = fuzzpy_cell("", LEAKY)
    assert isinstance(shown, Failure) and program is None
    path = tmp_path / "<cell>"  # the CLI's rendering of the same text under the cell's name
    path.write_text(LEAKY)
    from fuzzpy.cli import main

    assert main(["check", str(path)]) == 1
    rendered = capsys.readouterr().err
    assert repr(shown).replace("<cell>", str(path)) + "\n" == rendered
    assert "error[FZ303]" in repr(shown) and "^" in repr(shown)
    assert "&lt;cell&gt;" in shown._repr_html_() and "Traceback" not in repr(shown)


def test_name_binds_the_program_for_later_cells(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    shell = _Shell()
    load_ipython_extension(shell)
    shell.magics["fuzzpy"]("--name survey", CELL)
    program = shell.user_ns["survey"]
    assert isinstance(program, fuzzpy.Program) and program.definitions == ["older", "twice"]
    data = tmp_path / "rows.csv"
    data.write_text("age\n30\n50\n70\n")
    release = program.run("older", data={"db": str(data)}, ledger=tmp_path / "l.sqlite", budget=1)
    assert release.charges["rows"].epsilon == pytest.approx(0.25)
    shell.magics["fuzzpy"]("--name broken", LEAKY)  # a rejected cell binds nothing
    assert "broken" not in shell.user_ns
    assert "FZ303" in capsys.readouterr().out  # displayed, not raised


@pytest.mark.parametrize("line", ["--nme x", "--name", "--name 1x", "--delta 2"])
def test_bad_magic_options_are_reported(line: str) -> None:
    shown, program, _ = fuzzpy_cell(line, CELL)
    assert isinstance(shown, Failure) and program is None
    assert "error" in repr(shown)


def test_delta_option_reports_approximate_costs_there() -> None:
    cell = "def g (db : bag num) : fuzzy num = gauss[2.0] (size db);\n"
    default, _, _ = fuzzpy_cell("", cell)
    wide, _, _ = fuzzpy_cell("--delta 1e-3", cell)
    assert default.report["g"].costs["db"].epsilon > wide.report["g"].costs["db"].epsilon


def test_mechanisms_are_verified_in_the_cell() -> None:
    text = (EXAMPLES / "age_brackets_svt.fz").read_text()
    shown, _, _ = fuzzpy_cell("", text)
    assert isinstance(shown, CellReport)
    assert [v.status for v in shown.verdicts] == ["proved"]
    page = shown._repr_html_()
    assert "<code>above_threshold</code>" in page and "proved" in page


def test_check_report_has_html_and_text() -> None:
    report = fuzzpy.load(EXAMPLES / "noisy_count.fz").check()
    assert "<code>noisy_count</code>" in report._repr_html_() and "0.1-DP" in report._repr_html_()
    assert repr(report) == report.text


# ---------------------------------------------------------------- the example notebook


def _kernel(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    """A kernel spec for this Python (the one fuzzpy is installed in); skip
    if a kernel cannot start here."""
    pytest.importorskip("nbclient")
    pytest.importorskip("ipykernel")
    from jupyter_client.manager import start_new_kernel

    spec = tmp_path / "jupyter" / "kernels" / "fuzzpy-test"
    spec.mkdir(parents=True)
    (spec / "kernel.json").write_text(json.dumps({
        "argv": [sys.executable, "-m", "ipykernel_launcher", "-f", "{connection_file}"],
        "display_name": "fuzzpy test", "language": "python"}))
    monkeypatch.setenv("JUPYTER_PATH", str(tmp_path / "jupyter"))
    monkeypatch.setenv("MPLBACKEND", "Agg")
    try:
        manager, client = start_new_kernel(kernel_name="fuzzpy-test", startup_timeout=120)
    except Exception as exc:  # noqa: BLE001 - whatever stops a kernel from starting
        pytest.skip(f"a Jupyter kernel cannot start on this machine: {exc}")
    client.stop_channels()
    manager.shutdown_kernel(now=True)
    return "fuzzpy-test"


def test_the_example_notebook_runs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import nbformat
    from nbclient import NotebookClient

    kernel = _kernel(tmp_path, monkeypatch)
    notebook = nbformat.read(NOTEBOOK, as_version=4)
    assert all(not c.get("outputs") for c in notebook.cells if c.cell_type == "code")  # committed without outputs
    NotebookClient(notebook, timeout=600, kernel_name=kernel,
                   resources={"metadata": {"path": str(tmp_path)}}).execute()
    code = [c for c in notebook.cells if c.cell_type == "code"]
    assert all(c.execution_count for c in code)  # every cell ran
    outputs = [o for c in code for o in c.outputs]
    assert not [o for o in outputs if o.output_type == "error"]

    magic = next(c for c in code if c.source.startswith("%%fuzzpy"))
    (table,) = [o.data["text/html"] for o in magic.outputs if "text/html" in o.get("data", {})]
    assert "<code>region_histogram</code>" in table and "0.5-DP" in table and "<details>" in table
    assert "<code>mean_income</code>" in table and "1-DP" in table

    text = "".join(o.get("text", "") for o in outputs if o.output_type == "stream")
    assert "would charge eps=0.5, leaving eps=1.5" in text  # the quote
    # a library function checked once over its epsilon, run at three (its own ledger)
    assert "noisy_mean at eps=0.05:" in text and "charged eps=0.1, remaining eps=1.85" in text
    assert "remaining eps=1.65" in text

    images = [o.data["image/png"] for o in outputs if "image/png" in o.get("data", {})]
    assert images and base64.b64decode(images[0]).startswith(b"\x89PNG")

    budget = json.loads(text.strip().splitlines()[-1])
    assert budget["remaining_after"] < budget["remaining_before"]
    assert budget == {"remaining_before": 1.5, "remaining_after": 0.5, "ledger": 0.5}


@pytest.mark.slow  # tens of seconds (the default suite's budget)
def test_the_teaching_notebook_runs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """examples/teaching.ipynb (issue 30 item 7): Laplace and composition, noisy max and
    AboveThreshold proved, a buggy SVT refuted and audited; its cells assert what they show."""
    import nbformat
    from nbclient import NotebookClient

    kernel = _kernel(tmp_path, monkeypatch)
    notebook = nbformat.read(TEACHING, as_version=4)
    assert all(not c.get("outputs") for c in notebook.cells if c.cell_type == "code")  # committed without outputs
    NotebookClient(notebook, timeout=600, kernel_name=kernel,
                   resources={"metadata": {"path": str(tmp_path)}}).execute()
    code = [c for c in notebook.cells if c.cell_type == "code"]
    assert all(c.execution_count for c in code)
    outputs = [o for c in code for o in c.outputs]
    assert not [o for o in outputs if o.output_type == "error"]
    text = "".join(o.get("text", "") for o in outputs if o.output_type == "stream")
    assert "rosnm: proved" in text and "above_threshold: proved" in text
    assert "svt_lee_clifton: refuted" in text and "LEAK: the runs prove eps >=" in text
    assert any("image/png" in o.get("data", {}) for o in outputs)  # the audit's plot
