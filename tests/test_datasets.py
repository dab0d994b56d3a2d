"""Datasets as registered things: one name, one file, one budget.

Registration and validation by the owner, runs by name or by file, a changed
file refused (never a fresh budget), seeded runs and released values in the
ledger, and the migration of a ledger written before registration existed.
"""

from __future__ import annotations

import json
import shutil
import sqlite3
from pathlib import Path

import pyarrow.csv as pacsv
import pyarrow.parquet as pq
import pytest

from fuzzpy.cli import main
from fuzzpy.ledger.book import Ledger
from fuzzpy.ledger.store import FORMAT_VERSION

PROGRAM = """
type Row = { age : int, income : num };
def count (db : bag Row) : fuzzy num = laplace[0.25] (size (filter (fun r -> r.age > -1) db));
"""
PEOPLE = "age,income\n30,100\n50,200\n60,300\n"
V1 = Path(__file__).parent / "data" / "ledger_v1"


@pytest.fixture
def setup(tmp_path: Path) -> dict[str, str]:
    (tmp_path / "p.fz").write_text(PROGRAM)
    (tmp_path / "people.csv").write_text(PEOPLE)
    return {"program": str(tmp_path / "p.fz"), "data": str(tmp_path / "people.csv"),
            "ledger": str(tmp_path / "l.sqlite"), "dir": str(tmp_path)}


def call(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def run(capsys: pytest.CaptureFixture[str], s: dict[str, str], data: str, *extra: str) -> tuple[int, str, str]:
    return call(capsys, "run", s["program"], "count", "--data", f"db={data}", "--ledger", s["ledger"], *extra)


def codes(err: str) -> list[str]:
    return [part.split("]")[0] for part in err.split("error[")[1:]]


def test_register_then_run_by_name_and_by_file(capsys: pytest.CaptureFixture[str], setup: dict[str, str]) -> None:
    code, out, _ = call(capsys, "dataset", "register", "people", setup["data"], "--budget", "1",
                        "--ledger", setup["ledger"], "--json")
    assert code == 0
    document = json.loads(out)
    assert document["status"] == "registered"
    assert [(c["name"], c["type"], c["policy"]) for c in document["dataset"]["columns"]] == [
        ("age", "int", "drop"), ("income", "int", "drop")]  # inferred, and shown to the owner
    assert document["inferred"] == ["age", "income"]
    assert run(capsys, setup, "people", "--json")[0] == 0
    code, out, _ = run(capsys, setup, setup["data"], "--json")
    assert code == 0 and json.loads(out)["remaining"]["epsilon"] == pytest.approx(0.5)
    copy = Path(setup["dir"]) / "copy.csv"
    shutil.copy(setup["data"], copy)  # a copy of the bytes is the same data
    code, out, _ = run(capsys, setup, str(copy), "--json")
    assert code == 0 and json.loads(out)["datasets"][0]["dataset"] == "people"
    code, out, _ = call(capsys, "dataset", "list", "--ledger", setup["ledger"], "--json")
    (listed,) = json.loads(out)["datasets"]
    assert (listed["name"], listed["file_status"], listed["registered_by"]) == ("people", "unchanged", "owner")


def test_a_changed_file_is_refused_before_reading_and_never_a_new_dataset(
    capsys: pytest.CaptureFixture[str], setup: dict[str, str]
) -> None:
    assert call(capsys, "dataset", "register", "people", setup["data"], "--budget", "1",
                "--ledger", setup["ledger"])[0] == 0
    assert run(capsys, setup, setup["data"])[0] == 0
    with open(setup["data"], "a") as handle:
        handle.write("\n")  # one more newline used to give a fresh budget
    ledger = Path(setup["ledger"])
    before = ledger.read_bytes()
    for given in (setup["data"], "people"):
        code, out, err = run(capsys, setup, given)
        assert (code, out, codes(err)) == (2, "", ["FZ541"])
        shown = err.replace(str(Path(setup["data"]).parent), "DIR")  # the temporary path may hold "30"
        assert "30" not in shown and "income" not in shown  # nothing read from the file
    assert ledger.read_bytes() == before
    code, out, _ = call(capsys, "dataset", "check", "people", "--ledger", setup["ledger"], "--json")
    assert code == 1 and json.loads(out)["status"] == "changed since it was validated"
    assert call(capsys, "dataset", "list", "--ledger", setup["ledger"], "--json")[1].count('"changed"') == 1
    assert call(capsys, "dataset", "update", "people", "--ledger", setup["ledger"])[0] == 0
    code, out, _ = run(capsys, setup, setup["data"], "--json")
    assert code == 0 and json.loads(out)["remaining"]["epsilon"] == pytest.approx(0.5)  # the same budget
    code, out, _ = call(capsys, "dataset", "show", "people", "--ledger", setup["ledger"], "--json")
    shown = json.loads(out)
    assert [event["action"] for event in shown["log"]] == ["registered", "updated"]
    assert len({release["data_sha256"] for release in shown["releases"]}) == 2


def test_dataset_name_with_another_file_is_refused(capsys: pytest.CaptureFixture[str], setup: dict[str, str]) -> None:
    """`--dataset NAME` used to accept any file: the name's budget then paid for other data."""
    assert call(capsys, "dataset", "register", "people", setup["data"], "--budget", "1",
                "--ledger", setup["ledger"])[0] == 0
    other = Path(setup["dir"]) / "other.csv"
    other.write_text("age,income\n1,2\n")
    before = Path(setup["ledger"]).read_bytes()
    code, out, err = run(capsys, setup, str(other), "--dataset", "people")
    assert (code, out, codes(err)) == (2, "", ["FZ541"])
    assert Path(setup["ledger"]).read_bytes() == before


def test_the_unregistered_flow_registers_on_the_first_budget(
    capsys: pytest.CaptureFixture[str], setup: dict[str, str]
) -> None:
    code, _, err = run(capsys, setup, setup["data"])
    assert code == 2 and codes(err) == ["FZ715"]  # no budget yet
    assert run(capsys, setup, setup["data"], "--budget", "1")[0] == 0
    with Ledger(setup["ledger"]) as ledger:
        registration = ledger.registration("people")
    assert registration is not None and not registration.explicit
    assert registration.file == str(Path(setup["data"]).resolve())
    parquet = Path(setup["dir"]) / "people.parquet"
    pq.write_table(pacsv.read_csv(setup["data"]), parquet)  # the same data converted
    code, out, err = run(capsys, setup, str(parquet), "--budget", "1")
    assert (code, out, codes(err)) == (2, "", ["FZ541"])  # not a fresh budget: the same name, another file
    code, out, err = run(capsys, setup, setup["data"], "--dataset", "again", "--budget", "1")
    assert (code, codes(err)) == (2, ["FZ545"])  # nor under another name


def test_an_earlier_file_and_the_same_rows_stay_the_datasets(
    capsys: pytest.CaptureFixture[str], setup: dict[str, str]
) -> None:
    """a16 F2: after `dataset update`, a copy of the earlier file got a fresh
    budget; a16 F6: the owner's `register` of the same rows as Parquet did."""
    assert call(capsys, "dataset", "register", "people", setup["data"], "--budget", "1",
                "--ledger", setup["ledger"])[0] == 0
    folder = Path(setup["dir"])
    shutil.copy(setup["data"], folder / "old_people.csv")
    parquet = folder / "people_copy.parquet"
    pq.write_table(pacsv.read_csv(setup["data"]), parquet)
    code, _, err = call(capsys, "dataset", "register", "again", str(parquet), "--budget", "1",
                        "--ledger", setup["ledger"])
    assert (code, codes(err)) == (2, ["FZ545"])
    Path(setup["data"]).write_text(PEOPLE + "70,400\n")
    assert call(capsys, "dataset", "update", "people", "--ledger", setup["ledger"])[0] == 0
    code, _, err = run(capsys, setup, str(folder / "old_people.csv"), "--budget", "5")
    assert (code, codes(err)) == (2, ["FZ545"])
    code, _, err = call(capsys, "dataset", "register", "old", str(folder / "old_people.csv"), "--budget", "1",
                        "--ledger", setup["ledger"])
    assert (code, codes(err)) == (2, ["FZ545"])
    assert run(capsys, setup, "people")[0] == 0


def test_an_earlier_version_in_another_form_stays_the_datasets(
    capsys: pytest.CaptureFixture[str], setup: dict[str, str]
) -> None:
    """a18 F2: the rows of a dataset's EARLIER file, saved as Parquet (or with
    one more newline, or read into a frame), got a fresh budget once the file
    was updated: the old bytes were gone and the version's content key had
    never been computed. The owner's register/update now key every version."""
    import pandas as pd

    import fuzzpy

    assert call(capsys, "dataset", "register", "people", setup["data"], "--budget", "1",
                "--ledger", setup["ledger"])[0] == 0
    folder = Path(setup["dir"])
    old_rows = pacsv.read_csv(setup["data"])
    Path(setup["data"]).write_text(PEOPLE + "70,400\n")
    assert call(capsys, "dataset", "update", "people", "--ledger", setup["ledger"])[0] == 0
    parquet = folder / "old_people.parquet"
    pq.write_table(old_rows, parquet)
    code, _, err = run(capsys, setup, str(parquet), "--dataset", "old", "--budget", "5")
    assert (code, codes(err)) == (2, ["FZ545"])
    (folder / "old_people.csv").write_text(PEOPLE + "\n")  # other bytes, the same rows
    code, _, err = call(capsys, "dataset", "register", "old", str(folder / "old_people.csv"), "--budget", "1",
                        "--ledger", setup["ledger"])
    assert (code, codes(err)) == (2, ["FZ545"])
    program = fuzzpy.loads(PROGRAM)
    with pytest.raises(fuzzpy.FuzzError) as refused:
        program.run("count", data={"db": pd.read_csv(folder / "old_people.csv")}, datasets="old_frame",
                    ledger=setup["ledger"], budget=5)
    assert [d.code for d in refused.value.diagnostics] == ["FZ545"]
    with Ledger(setup["ledger"]) as ledger:
        assert [e["content"] is not None for e in ledger.dataset_log("people")] == [True, True]
        assert len(ledger.registrations()) == 1  # nothing registered by the refused runs


def test_a_first_runs_dataset_is_keyed_when_its_owner_updates_it(
    capsys: pytest.CaptureFixture[str], setup: dict[str, str]
) -> None:
    """a20 F1: a dataset a first run made is keyed lazily, so after `dataset
    update` to another file its earlier rows as Parquet got a fresh budget.
    The update keys the version it replaces while its bytes are there."""
    assert run(capsys, setup, setup["data"], "--budget", "1")[0] == 0  # dataset `people`, a first run's
    folder = Path(setup["dir"])
    (folder / "newer.csv").write_text(PEOPLE + "70,400\n")
    assert call(capsys, "dataset", "update", "people", str(folder / "newer.csv"), "--ledger", setup["ledger"])[0] == 0
    parquet = folder / "old.parquet"
    pq.write_table(pacsv.read_csv(setup["data"]), parquet)
    code, _, err = run(capsys, setup, str(parquet), "--dataset", "fresh", "--budget", "1")
    assert (code, codes(err)) == (2, ["FZ545"])


def test_a_refuse_policy_is_checked_at_registration_never_in_a_run(
    capsys: pytest.CaptureFixture[str], setup: dict[str, str]
) -> None:
    bad = Path(setup["dir"]) / "bad.csv"
    bad.write_text("age,income\n30,100\nforty,200\n")
    code, out, err = call(capsys, "dataset", "register", "bad", str(bad), "--budget", "1", "--type", "age=int",
                          "--missing", "age=refuse", "--ledger", setup["ledger"])
    assert code == 1 and "not registered" in out
    assert codes(err) == ["FZ504", "FZ546"] and "bad.csv:3:1" in err  # the owner sees the real cell
    with Ledger(setup["ledger"]) as ledger:
        assert ledger.registrations() == [] and ledger.datasets() == []
    bad.write_text("age,income\n30,100\n40,200\n")
    assert call(capsys, "dataset", "register", "bad", str(bad), "--budget", "1", "--type", "age=int",
                "--missing", "age=refuse", "--ledger", setup["ledger"])[0] == 0
    assert run(capsys, setup, "bad")[0] == 0


def test_owner_check_locates_every_problem(capsys: pytest.CaptureFixture[str], setup: dict[str, str]) -> None:
    data = Path(setup["dir"]) / "d.csv"
    data.write_bytes(b"age, income\n30, 100\n\n31,\n32,abc\n33\n\"34,5\n35,1,2\n")
    code, out, err = call(capsys, "dataset", "check", str(data), "--type", "income=num",
                          "--missing", "income=value:0", "--json")
    assert code == 0
    document = json.loads(out)
    located = [(p["code"], p["span"]["line"], p["span"]["col"]) for p in document["problems"]]
    assert located == [("FZ506", 4, 4), ("FZ504", 5, 4), ("FZ505", 6, 1), ("FZ505", 7, 1), ("FZ505", 8, 1)]
    assert document["counts"]["cells_replaced"] == 2 and document["counts"]["rows_dropped"] == 3


def test_a_row_type_against_the_registered_schema_is_refused_before_the_charge(
    capsys: pytest.CaptureFixture[str], setup: dict[str, str]
) -> None:
    assert call(capsys, "dataset", "register", "people", setup["data"], "--budget", "1", "--type", "age=string",
                "--ledger", setup["ledger"])[0] == 0
    before = Path(setup["ledger"]).read_bytes()
    code, out, err = run(capsys, setup, "people")
    assert (code, out, codes(err)) == (2, "", ["FZ542"])
    assert "people.csv:1:1" in err  # the column's place in the header
    assert Path(setup["ledger"]).read_bytes() == before
    code, out, err = call(capsys, "dataset", "update", "people", "--missing", "income=value:x",
                          "--type", "income=num", "--ledger", setup["ledger"])
    assert code == 2 and codes(err) == ["FZ543"]


def test_seeded_runs_and_released_values_are_recorded(
    capsys: pytest.CaptureFixture[str], setup: dict[str, str]
) -> None:
    code, out, _ = run(capsys, setup, setup["data"], "--budget", "1", "--seed", "3", "--json")
    seeded_value = json.loads(out)["released"]
    code, out, _ = run(capsys, setup, setup["data"], "--json")
    private_value = json.loads(out)["released"]
    with Ledger(setup["ledger"]) as ledger:
        first, second = ledger.history()
    assert (first.seeded, first.status, first.released) == (True, "released", seeded_value)
    assert (second.seeded, second.status, second.released) == (False, "released", private_value)
    code, out, _ = call(capsys, "ledger", "--ledger", setup["ledger"])
    rows = [line for line in out.splitlines() if "count" in line]
    assert "[seeded: not private]" in rows[0] and "[seeded" not in rows[1]
    code, out, _ = call(capsys, "ledger", "--ledger", setup["ledger"], "--json")
    releases = json.loads(out)["datasets"][0]["releases"]
    assert [(r["seeded"], r["private"]) for r in releases] == [(True, False), (False, True)]
    assert "row_rules" not in releases[0]  # the owner's counts: `fuzzpy dataset show` only


def test_a_release_charged_but_not_computed_is_marked(
    capsys: pytest.CaptureFixture[str], setup: dict[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    import fuzzpy.release.run as run_module
    from fuzzpy.language.diagnostics import FuzzError

    def fail(*args: object, **kwargs: object) -> None:
        raise FuzzError(())

    monkeypatch.setattr(run_module, "compute", fail)
    run(capsys, setup, setup["data"], "--budget", "1")
    (entry,) = Ledger(setup["ledger"]).history()
    assert entry.status == "charged" and entry.released is None
    assert "(charged, not released)" in call(capsys, "ledger", "--ledger", setup["ledger"])[1]


# ---------------------------------------------------------------- an older ledger


def _v1_copy(tmp_path: Path) -> tuple[Path, Path]:
    ledger = tmp_path / "old.sqlite"
    shutil.copy(V1 / "ledger_v1.sqlite", ledger)
    data = tmp_path / "people.csv"
    shutil.copy(V1 / "people.csv", data)
    return ledger, data


def test_a_version_1_ledger_is_migrated_and_keeps_its_budgets(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    ledger, data = _v1_copy(tmp_path)
    with Ledger(ledger) as opened:
        history = opened.history()
        states = {s.dataset: s for s in opened.datasets()}
    assert [e.dataset.split(":")[0] for e in history] == ["sha256", "sha256", "census", "visits"]
    assert all(e.seeded is None and e.status is None for e in history)  # not recorded then
    legacy = history[0].dataset
    assert states[legacy].remaining.epsilon == pytest.approx(0.5) and "unused" in states
    connection = sqlite3.connect(ledger)
    assert connection.execute("PRAGMA user_version").fetchone()[0] == FORMAT_VERSION
    connection.close()
    program = tmp_path / "count.fz"
    shutil.copy(V1 / "count.fz", program)
    argv = ["run", str(program), "noisy_count", "--data", f"db={data}", "--ledger", str(ledger), "--json"]
    code, out, _ = call(capsys, *argv)
    assert code == 0  # the file's hash still names its budget, which goes on
    assert json.loads(out)["datasets"][0]["dataset"] == legacy
    assert json.loads(out)["remaining"]["epsilon"] == pytest.approx(0.25)
    assert call(capsys, *argv)[0] == 0  # now by its registered path
    code, out, err = call(capsys, *argv)  # --json: the refusal is a JSON document on stdout
    assert (code, err) == (3, "")
    assert [d["code"] for d in json.loads(out)["diagnostics"]] == ["FZ601"]
    named = [*argv[:5], "--dataset", "census", *argv[5:]]
    code, out, _ = call(capsys, *named[:-1], "--json")
    assert code == 2  # `census` was charged on this very file, which is now dataset `sha256:...`'s


def test_migrated_and_new_ledgers_have_one_schema(tmp_path: Path) -> None:
    ledger, _ = _v1_copy(tmp_path)
    Ledger(ledger).close()
    Ledger(tmp_path / "new.sqlite").close()

    def schema(path: Path) -> dict[str, list[str]]:
        connection = sqlite3.connect(path)
        tables = [r[0] for r in connection.execute("SELECT name FROM sqlite_master WHERE type = 'table'")]
        shape = {t: [c[1] for c in connection.execute(f"PRAGMA table_info({t})")] for t in sorted(tables)}
        connection.close()
        return shape

    assert schema(ledger) == schema(tmp_path / "new.sqlite")


def test_a_migration_that_fails_leaves_the_file_as_it_was(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import fuzzpy.ledger.store as store

    ledger, _ = _v1_copy(tmp_path)
    before = ledger.read_bytes()
    broken = (*store._migration_to_2(), "THIS IS NOT SQL")
    monkeypatch.setitem(store._MIGRATIONS, 1, lambda: broken)
    with pytest.raises(Exception):  # noqa: B017 - any failure: what matters is the file after it
        Ledger(ledger)
    assert ledger.read_bytes() == before
