"""The layers of fuzzpy/ (docs/architecture.md) are checked by import-linter's
contracts in pyproject.toml: they hold on this tree, and an import that runs
up (the interpreter reaching for an engine, a reader for the release
protocol) breaks them. Each case copies the package, injects one import, and
runs `lint-imports` on the copy."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("importlinter")

ROOT = Path(__file__).resolve().parent.parent


def lint(tree: Path) -> subprocess.CompletedProcess[str]:
    code = ("import sys; from importlinter.cli import lint_imports; "
            "sys.exit(lint_imports(config_filename='pyproject.toml', no_cache=True, no_logo=True))")
    return subprocess.run([sys.executable, "-c", code], cwd=tree, capture_output=True, text=True,
                          env={"PYTHONPATH": str(tree), "PATH": "/usr/bin:/bin"}, timeout=300)


@pytest.fixture(scope="module")
def copy(tmp_path_factory: pytest.TempPathFactory) -> Path:
    tree = tmp_path_factory.mktemp("layers")
    shutil.copytree(ROOT / "fuzzpy", tree / "fuzzpy", ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(ROOT / "pyproject.toml", tree / "pyproject.toml")
    return tree


def test_the_tree_keeps_its_layers(copy: Path) -> None:
    done = lint(copy)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "2 kept, 0 broken" in done.stdout


@pytest.mark.parametrize(("module", "injected", "complaint"), [
    ("runtime/values.py", "from fuzzpy.engines.engine import engine_for",
     "fuzzpy.runtime is not allowed to import fuzzpy.engines"),
    ("data/loader.py", "import fuzzpy.release.run", "fuzzpy.data is not allowed to import fuzzpy.release"),
    ("language/syntax.py", "from fuzzpy.checker import check_program",
     "fuzzpy.language is not allowed to import fuzzpy.checker"),
    ("accounting/events.py", "from fuzzpy.verifier import verify_mechanism",
     "fuzzpy.accounting is not allowed to import fuzzpy.verifier"),
])
def test_an_import_that_runs_up_breaks_the_contracts(copy: Path, module: str, injected: str,
                                                      complaint: str) -> None:
    path = copy / "fuzzpy" / module
    original = path.read_text()
    try:
        path.write_text(original + f"\n\ndef _injected() -> None:\n    {injected}  # noqa\n")
        done = lint(copy)
    finally:
        path.write_text(original)
    assert done.returncode == 1, done.stdout + done.stderr
    assert complaint in " ".join(done.stdout.split())


def test_the_top_of_fuzzpy_holds_only_the_entry_points() -> None:
    assert sorted(p.name for p in (ROOT / "fuzzpy").glob("*.py")) == ["__init__.py", "__main__.py", "cli.py"]


def test_each_layer_says_what_it_owns_and_what_it_may_import() -> None:
    """The first two lines of each package's docstring (docs/architecture.md)."""
    import ast

    for init in sorted((ROOT / "fuzzpy").glob("*/__init__.py")):
        doc = ast.get_docstring(ast.parse(init.read_text())) or ""
        owns, may = (doc.splitlines() + ["", ""])[:2]
        assert owns.strip() and may.startswith("May import"), init
