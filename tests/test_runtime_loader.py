"""Loading bags from CSV and Parquet: columns by name, and every error coded."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from fuzzpy.data.loader import content_hash, load_bag
from fuzzpy.language.diagnostics import FuzzError
from fuzzpy.language.types import BOOL, INT, NUM, STRING, TBag, TRecord, TVec

ROW = TBag(TRecord((("age", INT), ("income", NUM))))


def _write(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


def _error(path: Path, bag_type=ROW) -> tuple[str, str, str | None]:  # type: ignore[no-untyped-def]
    with pytest.raises(FuzzError) as failure:
        load_bag(path, bag_type)
    diagnostic = failure.value.diagnostics[0]
    return diagnostic.code, diagnostic.message, diagnostic.hint


def test_columns_are_matched_by_name_and_typed(tmp_path: Path) -> None:
    path = _write(tmp_path, "p.csv", "name,income,age,ok\nann,10.5,30,true\nbob,20,45,false\n")
    row = TBag(TRecord((("age", INT), ("income", NUM), ("name", STRING), ("ok", BOOL))))
    bag = load_bag(path, row)
    fields = bag.view().fields
    assert len(bag) == 2
    assert fields["age"].dtype == np.int64 and fields["age"].tolist() == [30, 45]
    assert fields["income"].dtype == np.float64 and fields["income"].tolist() == [10.5, 20.0]
    assert fields["name"].tolist() == ["ann", "bob"] and fields["ok"].tolist() == [True, False]


def test_num_columns_are_floats_even_when_the_data_are_whole(tmp_path: Path) -> None:
    bag = load_bag(_write(tmp_path, "p.csv", "age,income\n1,2\n"), ROW)
    assert bag.view().fields["income"].dtype == np.float64


def test_bag_of_numbers_reads_the_only_column(tmp_path: Path) -> None:
    assert load_bag(_write(tmp_path, "v.csv", "x\n1.5\n2\n"), TBag(NUM)).view().tolist() == [1.5, 2.0]


def test_bag_of_vectors_reads_every_column(tmp_path: Path) -> None:
    bag = load_bag(_write(tmp_path, "v.csv", "a,b\n1,2\n3,4\n"), TBag(TVec("2", NUM)))
    assert bag.view().tolist() == [[1.0, 2.0], [3.0, 4.0]]


def test_parquet(tmp_path: Path) -> None:
    path = tmp_path / "p.parquet"
    pq.write_table(pa.table({"age": [30, 40], "income": [1.0, 2.0], "extra": ["a", "b"]}), path)
    assert load_bag(path, ROW).view().fields["age"].tolist() == [30, 40]


def test_missing_column_is_named_with_the_files_columns(tmp_path: Path) -> None:
    code, message, hint = _error(_write(tmp_path, "p.csv", "age,salary\n1,2\n"))
    assert code == "FZ503" and "`income`" in message
    assert hint is not None and "`age`" in hint and "`salary`" in hint


def _rows(path: Path, bag_type=ROW) -> dict[str, list[object]]:  # type: ignore[no-untyped-def]
    return {k: v.tolist() for k, v in load_bag(path, bag_type).view().fields.items()}


def test_a_row_whose_cell_is_not_of_its_type_is_dropped(tmp_path: Path) -> None:
    """Was FZ504 for the whole file: a row's content is private, so the row
    rule (drop, by default) handles it and loading never fails."""
    path = _write(tmp_path, "p.csv", "age,income\n30,1\n31,2\nforty,3\n30.5,4\n")
    assert _rows(path) == {"age": [30, 31], "income": [1.0, 2.0]}


def test_a_row_with_a_missing_value_is_dropped(tmp_path: Path) -> None:
    """Was FZ506 for the whole file."""
    assert _rows(_write(tmp_path, "p.csv", "age,income\n30,1\n31,\n")) == {"age": [30], "income": [1.0]}


def test_empty_and_unreadable_files_are_refused_and_ragged_lines_dropped(tmp_path: Path) -> None:
    assert _error(_write(tmp_path, "e.csv", ""))[0] == "FZ502"
    assert _error(tmp_path / "absent.csv")[0] == "FZ501"
    assert _rows(_write(tmp_path, "m.csv", "age,income\n1,2,3\n4,5\n")) == {"age": [4], "income": [5.0]}


def test_a_bag_of_numbers_needs_one_column(tmp_path: Path) -> None:
    assert _error(_write(tmp_path, "p.csv", "a,b\n1,2\n"), TBag(NUM))[0] == "FZ503"


def test_header_only_file_is_an_empty_bag(tmp_path: Path) -> None:
    assert len(load_bag(_write(tmp_path, "p.csv", "age,income\n"), ROW)) == 0


def test_content_hash_depends_on_the_bytes(tmp_path: Path) -> None:
    a = content_hash(_write(tmp_path, "a.csv", "x\n1\n"))
    assert a == content_hash(_write(tmp_path, "b.csv", "x\n1\n"))
    assert a != content_hash(_write(tmp_path, "c.csv", "x\n2\n"))
    assert a.startswith("sha256:")


def test_non_finite_numbers_are_dropped(tmp_path: Path) -> None:
    """Was FZ504 for the whole file."""
    path = _write(tmp_path, "p.csv", "age,income\n30,1\n31,inf\n32,NaN\n33,1e400\n")
    assert _rows(path) == {"age": [30], "income": [1.0]}
