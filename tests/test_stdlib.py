"""The standard library (issue 31 item 4), as a new user would try it: each
name imported into a fresh program, other data forms, misspelt imports, a
program shadowing a library name, labels against indices, the proof cache,
and a library mechanism that does not verify."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

import fuzzpy
from fuzzpy.cli import main
from fuzzpy.frontend import imports
from fuzzpy.language import library
from fuzzpy.language.diagnostics import FuzzError
from fuzzpy.language.source import Source
from fuzzpy.release.pipeline import check, parse, run

ROOT = Path(__file__).resolve().parent.parent
RESIDENTS = ROOT / "examples" / "data" / "residents.csv"

HEAD = """type Resident = { region : string, age : num, income : num };
let regions = ["north", "south", "east", "west"];
def residents_in (c : string) (db : bag Resident) : num = size (filter (fun r -> r.region == c) db);
"""


def _check(text: str):  # noqa: ANN202 - the checker's result
    return check(parse(Source("fresh.fz", text)))


def _errors(text: str) -> list:
    with pytest.raises(FuzzError) as info:
        _check(text)
    return list(info.value.diagnostics)


def _signature(checked, name: str) -> str:  # noqa: ANN001
    from fuzzpy.checker.report import text_report

    line = next(ln for ln in text_report(checked, None).splitlines() if ln.startswith(name + " "))
    return " ".join(line.split())


# ---------------------------------------------------------------- each name, in a fresh program


@pytest.mark.parametrize(("imported", "body", "shown"), [
    ("std.noisy_max (report_noisy_max)",
     "report_noisy_max [residents_in \"north\" db, residents_in \"west\" db] 0.25", "fuzzy int 0.25-DP in db"),
    ("std.noisy_max (report_noisy_max_exp)",
     "report_noisy_max_exp (tabulate regions (fun c -> residents_in c db)) 0.25", "fuzzy int 0.25-DP in db"),
    ("std.sparse_vector (above_threshold)",
     "above_threshold (tabulate [30, 50, 70] (fun k -> size (filter (fun r -> r.age > k) db))) 50 0.3",
     "fuzzy int 0.3-DP in db"),
    ("std.sparse_vector (sparse_vector)",
     "sparse_vector (tabulate regions (fun c -> residents_in c db)) 100 2 0.4", "fuzzy (list bool) 0.4-DP in db"),
    ("std.stats (median)", "median [0, 25 .. 100] (map (fun r -> r.age) db) 0.2", "fuzzy num 0.2-DP in db"),
    ("std.stats (upper_quartile)", "upper_quartile [0, 25 .. 100] (map (fun r -> r.age) db) 1",
     "fuzzy num 0.75-DP in db"),
    ("std.stats (clamped_mean)", "clamped_mean 0.6 (map (fun r -> clip[0, 1] (r.income / 200000)) db)",
     "fuzzy num 0.6-DP in db"),
    ("std.stats (histogram)", "histogram (counts (group[4] (fun r -> if r.age < 30 then 0 else 1) db)) 0.1",
     "fuzzy (vec[1] num) 0.1-DP in db"),
])
def test_each_library_name_in_a_fresh_program(imported: str, body: str, shown: str) -> None:
    text = f"import {imported};\n{HEAD}def release (db : bag Resident) = {body};\n"
    checked = _check(text)
    assert _signature(checked, "release").endswith(shown)


def test_a_whole_module_import_brings_every_name() -> None:
    checked = _check("import std.noisy_max;\n" + HEAD + "def f (db : bag Resident) : fuzzy string =\n"
                     "  noisy_max_exp_label regions (tabulate regions (fun c -> residents_in c db)) 1;\n")
    assert {"report_noisy_max", "report_noisy_max_exp"} <= set(checked.mechanisms)
    assert _signature(checked, "f").endswith("fuzzy string 1-DP in db")


def test_check_lists_the_programs_own_definitions_only() -> None:
    checked = _check("import std.stats;\n" + HEAD + "def m (db : bag Resident) = median [1, 2] (map (fun r -> r.age) db) 1;\n")
    assert list(checked.own_definitions()) == ["residents_in", "m"]
    assert "clamped_mean" in checked.definitions  # checked all the same


def test_a_library_definition_at_a_static_parameter_from_the_caller() -> None:
    """The library's eps is a static parameter; the caller's may be too (DFuzz instantiation)."""
    checked = _check("import std.noisy_max (noisy_max_label);\n" + HEAD +
                     "def pick (eps : num) (db : bag Resident) : fuzzy string =\n"
                     "  noisy_max_label regions (tabulate regions (fun c -> residents_in c db)) (eps / 2);\n"
                     "def both (db : bag Resident) : fuzzy (string, string) = {\n"
                     "  sample a = pick 0.5 db; sample b = pick 1 db; return (a, b) };\n")
    assert _signature(checked, "both").endswith("0.75-DP in db")


def test_a_static_parameter_that_breaks_a_precondition_is_refused_at_the_call() -> None:
    diagnostics = _errors("import std.noisy_max (noisy_max_label);\n" + HEAD +
                          "def pick (eps : num) (db : bag Resident) : fuzzy string =\n"
                          "  noisy_max_label regions (tabulate regions (fun c -> residents_in c db)) (eps - 1);\n"
                          "def use (db : bag Resident) : fuzzy string = pick 0.5 db;\n")
    assert {d.code for d in diagnostics} & {"FZ309", "FZ202"}


# ---------------------------------------------------------------- other data forms


def test_noisy_max_over_a_list_literal_and_over_integer_buckets() -> None:
    text = ("import std.noisy_max;\n" + HEAD +
            "def two (db : bag Resident) : fuzzy string =\n"
            "  noisy_max_label [\"young\", \"old\"] [size (filter (fun r -> r.age < 40) db),"
            " size (filter (fun r -> r.age >= 40) db)] 0.5;\n"
            "def decade (db : bag Resident) : fuzzy int =\n"
            "  report_noisy_max (tabulate [2, 3, 4, 5, 6] (fun d -> size (filter (fun r -> floor (r.age / 10) == d) db))) 0.5;\n")
    checked = _check(text)
    # the literal's entries each move by 1 (L-inf joins them): eps, not 2 eps
    assert _signature(checked, "two").endswith("fuzzy string 0.5-DP in db")
    assert _signature(checked, "decade").endswith("fuzzy int 0.5-DP in db")
    released = run(checked, "two", {"db": _bag(checked, "two")}, seed=3)
    assert released in ("young", "old")


def test_first_above_value_releases_a_public_threshold_or_the_default() -> None:
    text = ("import std.sparse_vector (first_above_value);\n" + HEAD +
            "def age_at (db : bag Resident) : fuzzy num =\n"
            "  first_above_value [30, 50, 70] (-1) (tabulate [30, 50, 70] (fun t -> size (filter (fun r -> r.age > t) db)))"
            " 1000000 1;\n")
    checked = _check(text)
    assert run(checked, "age_at", {"db": _bag(checked, "age_at")}, seed=1) == -1  # nothing reaches a million


def _bag(checked, definition: str):  # noqa: ANN001, ANN202
    from fuzzpy.data.loader import load_bag

    (param,) = [p for p in checked.definitions[definition].params if "bag" in str(p.type)]
    return load_bag(str(RESIDENTS), param.type)


# ---------------------------------------------------------------- labels against indices


def test_the_label_is_the_entry_of_the_public_list_at_the_released_index() -> None:
    """With a large eps the noise is negligible: the label must be the true
    winner's, in the order of the list given (not of the data)."""
    text = ("import std.noisy_max;\nimport std.sparse_vector;\n" + HEAD +
            "let reversed = [\"west\", \"east\", \"south\", \"north\"];\n"
            "def q (db : bag Resident) : vec[inf] num = tabulate reversed (fun c -> residents_in c db);\n"
            "def index (db : bag Resident) : fuzzy int = report_noisy_max (q db) 1000;\n"
            "def label (db : bag Resident) : fuzzy string = noisy_max_label reversed (q db) 1000;\n"
            "def least (db : bag Resident) : fuzzy string =\n"
            "  noisy_max_exp_label reversed (tabulate reversed (fun c -> 0 - residents_in c db)) 1000;\n"
            "def first (db : bag Resident) : fuzzy int = above_threshold (q db) 400 1000;\n"
            "def first_label (db : bag Resident) : fuzzy string = first_above_label reversed (q db) 400 1000;\n"
            "def none_label (db : bag Resident) : fuzzy string = first_above_label reversed (q db) 100000 1000;\n")
    checked = _check(text)
    assert _signature(checked, "index").endswith("fuzzy int 1000-DP in db")
    assert _signature(checked, "label").endswith("fuzzy string 1000-DP in db")  # the same cost as the index
    bag = {"db": _bag(checked, "index")}
    counts = {"north": 571, "south": 436, "east": 313, "west": 154}  # residents.csv, about: far apart
    assert max(counts, key=counts.__getitem__) == "north"
    for seed in range(3):
        assert run(checked, "index", bag, seed=seed) == 3  # "north" is last in `reversed`
        assert run(checked, "label", bag, seed=seed) == "north"
        assert run(checked, "least", bag, seed=seed) == "west"
        assert run(checked, "first", bag, seed=seed) == 2  # west, east below 400; south above
        assert run(checked, "first_label", bag, seed=seed) == "south"
        assert run(checked, "none_label", bag, seed=seed) == ""


def test_a_labelled_histogram_keeps_its_labels(tmp_path: Path) -> None:
    program = tmp_path / "h.fz"
    program.write_text("import std.stats (histogram);\n" + HEAD +
                       "def h (db : bag Resident) : fuzzy (vec[1] num) =\n"
                       "  histogram (counts (group[regions] (fun r -> r.region) db)) 1;\n")
    code, out = _cli(["run", str(program), "h", "--data", f"db={RESIDENTS}", "--budget", "5", "--seed", "2",
                      "--ledger", str(tmp_path / "l.sqlite"), "--json"])
    assert code == 0
    assert list(json.loads(out)["released"]) == ["north", "south", "east", "west"]


# ---------------------------------------------------------------- misspelt imports and unknown names


def test_a_misspelt_module_is_fz120_with_did_you_mean() -> None:
    (d,) = _errors("import std.noisy_mx;\n" + HEAD)
    assert d.code == "FZ120" and d.hint == "did you mean `std.noisy_max`?"
    assert (d.span.file, d.span.line, d.span.col, d.span.end_col) == ("fresh.fz", 1, 8, 20)


def test_a_module_without_std_is_fz120_naming_the_right_path() -> None:
    (d,) = _errors("import sparse_vector (above_threshold);\n" + HEAD)
    assert d.code == "FZ120" and "`std.sparse_vector`" in (d.hint or "")


def test_an_unknown_module_lists_the_library() -> None:
    (d,) = _errors("import std.regression;\n" + HEAD)
    assert d.code == "FZ120" and all(f"std.{m}" in (d.hint or "") for m in library.modules())


def test_a_misspelt_name_is_fz121_at_the_name() -> None:
    diagnostics = _errors("import std.noisy_max (report_noisy_max, noisy_max_lable);\n" + HEAD)
    (d,) = diagnostics
    assert d.code == "FZ121" and d.hint == "did you mean `noisy_max_label`?"
    assert (d.span.line, d.span.col) == (1, 41)


def test_a_name_from_another_module_says_which() -> None:
    (d,) = _errors("import std.stats (above_threshold);\n" + HEAD)
    assert d.code == "FZ121" and d.hint == "`above_threshold` is in `std.sparse_vector`"


def test_a_name_not_imported_is_unknown_with_the_usual_error() -> None:
    diagnostics = _errors(HEAD + "def f (db : bag Resident) : fuzzy num = median [1, 2] (map (fun r -> r.age) db) 1;\n")
    assert diagnostics and all(d.code.startswith("FZ2") for d in diagnostics)


def test_an_import_after_a_declaration_is_a_syntax_error() -> None:
    with pytest.raises(FuzzError) as info:
        parse(Source("late.fz", HEAD + "import std.stats;\n"))
    assert info.value.diagnostics[0].code.startswith("FZ1")


def test_the_cli_renders_the_import_error_with_its_code_and_exit_1(tmp_path: Path) -> None:
    program = tmp_path / "typo.fz"
    program.write_text("import std.sparse_vectr (above_threshold);\n" + HEAD)
    code, _ = _cli(["check", str(program)])
    assert code == 1
    code, out = _cli(["check", "--json", str(program)])
    (d,) = json.loads(out)["diagnostics"]
    assert d["code"] == "FZ120" and d["span"]["line"] == 1 and d["hint"] == "did you mean `std.sparse_vector`?"


# ---------------------------------------------------------------- shadowing


def test_declaring_an_imported_name_is_fz122_at_the_declaration() -> None:
    text = "import std.noisy_max (report_noisy_max);\n" + HEAD + "def report_noisy_max (x : num) : num = x;\n"
    (d,) = _errors(text)
    assert d.code == "FZ122" and d.span.line == 5 and d.span.col == 5
    assert d.labels and d.labels[0].span.line == 1


def test_declaring_a_name_an_import_brings_along_is_fz122_too() -> None:
    """`noisy_max_label` uses `label_at` and `report_noisy_max`: they come with it."""
    text = "import std.noisy_max (noisy_max_label);\n" + HEAD + "def label_at (x : num) : num = x;\n"
    (d,) = _errors(text)
    assert d.code == "FZ122" and "brought in" in d.message


def test_a_program_may_write_its_own_mechanism_of_a_library_name_without_importing_it() -> None:
    own = (ROOT / "examples" / "mechanisms" / "report_noisy_max.fz").read_text()
    checked = _check("import std.stats (median);\n" + HEAD + own +
                     "def f (db : bag Resident) : fuzzy int = report_noisy_max [residents_in \"north\" db] 1;\n")
    mech = checked.mechanisms["report_noisy_max"]
    assert mech.span.file == "fresh.fz"  # the program's own, not the library's


# ---------------------------------------------------------------- verification, cached, never trusted


def test_imported_mechanisms_are_verified_in_their_modules_scope() -> None:
    """A constant of the importing program does not reach the library's proof
    (the cache key is the same whatever program imports it)."""
    from fuzzpy.checker.scope import verification_scope

    program = parse(Source("consts.fz", "import std.noisy_max;\nlet eps = 7;\nlet two = 2;\n"))
    mech = next(d for d in program.decls if getattr(d, "name", "") == "report_noisy_max")
    scope, constants = verification_scope(mech, program)
    assert scope is not program and constants == {}


def test_verify_reports_the_imported_mechanisms(tmp_path: Path) -> None:
    program = tmp_path / "v.fz"
    program.write_text("import std.sparse_vector (above_threshold);\n" + HEAD)
    code, out = _cli(["verify", "--json", str(program)])
    assert code == 0
    assert [(m["name"], m["verdict"]) for m in json.loads(out)["mechanisms"]] == [("above_threshold", "proved")]


def test_importing_twice_does_not_prove_twice(tmp_path: Path) -> None:
    """The second program (other constants, other definitions) reads the
    first one's proof from the cache: no prover, no z3 in that process."""
    first, second = tmp_path / "a.fz", tmp_path / "b.fz"
    first.write_text("import std.noisy_max;\n" + HEAD +
                     "def f (db : bag Resident) : fuzzy string = noisy_max_label regions (tabulate regions"
                     " (fun c -> residents_in c db)) 1;\n")
    second.write_text("import std.noisy_max (report_noisy_max);\nlet eps = 0.3;\n" + HEAD +
                      "def g (db : bag Resident) : fuzzy int = report_noisy_max [residents_in \"east\" db] eps;\n")
    env = {**os.environ, "FUZZPY_CACHE": str(tmp_path / "cache"), "PYTHONPATH": str(ROOT)}
    script = ("import sys\nfrom fuzzpy.cli import main\ncode = main(['check', sys.argv[1]])\n"
              "print(code, sorted(m for m in ('z3', 'fuzzpy.verifier.prover') if m in sys.modules))\n")
    ran = [subprocess.run([sys.executable, "-c", script, str(p)], env=env, capture_output=True, text=True,
                          timeout=300) for p in (first, second)]
    assert ran[0].stdout.splitlines()[-1] == "0 ['fuzzpy.verifier.prover', 'z3']", ran[0].stderr
    assert ran[1].stdout.splitlines()[-1] == "0 []", ran[1].stderr


def test_a_library_mechanism_that_fails_to_verify_is_an_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A library whose noisy max adds too little noise (Lap(1/eps) on an
    unrestricted vector) is refuted, and a program calling it is refused."""
    (tmp_path / "noisy_max.fz").write_text(
        library.module_file("noisy_max").read_text().replace("lap(2 / eps)", "lap(1 / (4 * eps))"))
    for name in ("labels", "sparse_vector", "stats"):
        (tmp_path / f"{name}.fz").write_text(library.module_file(name).read_text())
    monkeypatch.setattr(library, "STD_DIR", tmp_path)
    monkeypatch.setattr(library, "_PREFIX", str(tmp_path) + os.sep)
    imports._module.cache_clear()
    try:
        diagnostics = _errors("import std.noisy_max (report_noisy_max);\n" + HEAD +
                              "def f (db : bag Resident) : fuzzy int = report_noisy_max [residents_in \"east\" db] 1;\n")
    finally:
        imports._module.cache_clear()
    assert [d.code for d in diagnostics] == ["FZ310"]
    assert "report_noisy_max" in diagnostics[0].message


# ---------------------------------------------------------------- the package and a real run


def test_every_module_is_a_program_and_listed() -> None:
    assert library.modules() == ("labels", "noisy_max", "sparse_vector", "stats")
    for name in library.modules():
        program = imports._module(name)
        assert program.decls and all(library.is_library_file(d.span.file) for d in program.decls)


def test_the_wheel_ships_the_library_beside_the_code() -> None:
    """hatch ships every file of the `fuzzpy` package that git does not
    ignore; the modules are read from inside the package, not the repository."""
    import tomllib

    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    assert config["tool"]["hatch"]["build"]["targets"]["wheel"]["packages"] == ["fuzzpy"]
    assert library.STD_DIR == ROOT / "fuzzpy" / "std"
    ignored = subprocess.run(["git", "check-ignore", *(str(p) for p in library.STD_DIR.glob("*.fz"))],
                             cwd=ROOT, capture_output=True, text=True)
    assert ignored.stdout == ""


def test_python_m_fuzzpy_run_with_a_library_label(tmp_path: Path) -> None:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "FUZZPY_CACHE": "off"}
    argv = [sys.executable, "-m", "fuzzpy", "run", str(ROOT / "examples" / "region_library.fz"), "busiest_region",
            "--data", f"db={RESIDENTS}", "--budget", "1", "--seed", "5", "--ledger", str(tmp_path / "l.sqlite"),
            "--json"]
    done = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    document = json.loads(done.stdout)
    assert document["released"] in ("north", "south", "east", "west")
    assert document["charged"]["epsilon"] == 0.5


def test_the_api_loads_a_program_with_imports(tmp_path: Path) -> None:
    program = tmp_path / "api.fz"
    program.write_text("import std.stats (median);\n" + HEAD +
                       "def m (db : bag Resident) : fuzzy num = median [20 .. 90] (map (fun r -> r.age) db) 1;\n")
    report = fuzzpy.load(program).check()
    assert [d.name for d in report.definitions] == ["residents_in", "m"]


def _cli(argv: list[str]) -> tuple[int, str]:
    import io
    from contextlib import redirect_stderr, redirect_stdout

    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        code = main(argv)
    return code, out.getvalue()
