"""The data owner's `register_frame`: data in memory registered as a dataset
(`fuzzpy dataset register` for a frame). Here, above the engines, because it
reads the frame's fingerprint and content key through them."""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING, Any

from fuzzpy.api.program import _budget_text, _ledger_path
from fuzzpy.data.memory import UNSUPPORTED_DATA, InMemory, data_error, recognise

if TYPE_CHECKING:
    import pyarrow as pa


def register_frame(ledger: Any, name: str, data: object, budget: Any, rule: str = "basic",
                   types: dict[str, str] | None = None, missing: dict[str, str] | None = None) -> Any:
    """Register data in memory as dataset `name` (the owner's
    `fuzzpy dataset register` for a frame): its budget, its columns' types
    and row rules (`missing`: column -> drop | refuse | value:V), and each
    column's fingerprint. A `refuse` column with a cell that does not fit
    its type is not accepted (FZ546). Returns the registration. ``ledger``
    and ``budget`` as the Python API takes them (a path or `fuzzpy.Ledger`;
    a number, a pair (epsilon, delta) or "EPS,DELTA")."""
    ledger, budget = _ledger_path(ledger), _budget_text(budget)
    if budget is None:
        raise data_error("FZ714", "register_frame needs a budget", "give budget=EPS or (EPS, DELTA)")
    from functools import partial

    from fuzzpy.data.cells import KINDS, parse_typed, readable_from
    from fuzzpy.data.datasets import frame_path, known_keys, refuse_same_rows, same_rows_check
    from fuzzpy.engines.content import file_content
    from fuzzpy.engines.fingerprint import cell_class, data_fingerprint
    from fuzzpy.engines.frames import local_content, local_digests, local_table
    from fuzzpy.ledger.book import Budget, Ledger
    from fuzzpy.ledger.datasets import (
        BAD_POLICY,
        REFUSED_CELLS,
        Column,
        Policy,
        Registration,
        check_name,
        dataset_error,
    )
    from fuzzpy.ledger.store import utc_now

    check_name(name)
    given = recognise(name, data)
    if not isinstance(given, InMemory):
        raise data_error(UNSUPPORTED_DATA, "register_frame takes data in memory; register a file with "
                         "`fuzzpy dataset register`")
    table = local_table(given)
    types, missing = types or {}, missing or {}
    columns = []
    digests = local_digests(table)([i for i, t in enumerate(table.schema.types) if cell_class(t)])
    for index, column_name in enumerate(table.column_names):
        kind = types.get(column_name)
        policy = Policy.parse(missing.get(column_name, "drop"))
        if kind is not None and (kind not in KINDS or not readable_from(table.schema.types[index], kind)):
            raise dataset_error(BAD_POLICY, f"column `{column_name}` holds {table.schema.types[index]} "
                                f"values, which cannot be typed `{kind}`")
        if policy.kind == "refuse":
            cells = parse_typed(table.column(index), kind or _stored_kind(table.schema.types[index]))
            if not cells.fits.all():
                raise dataset_error(REFUSED_CELLS, f"column `{column_name}` has cells that do not fit, "
                                    "and its policy is refuse: the data is not accepted")
        columns.append(Column(column_name, kind, policy, digests.get(column_name)))
    now = utc_now()
    registration = Registration(name, frame_path(name), "frame", data_fingerprint(digests), table.num_rows,
                                tuple(columns), explicit=True, registered=now, validated=now)
    with Ledger(ledger) as book:
        content = refuse_same_rows(book, name, table.column_names, partial(local_content, table), eager=True,
                                   file_content=file_content)
        registration = replace(registration, content=content)
        book.register(registration, Budget.parse(budget, rule),
                      same_rows_check(name, table.column_names,
                                      known_keys(content, partial(local_content, table)), file_content))
    return registration


def _stored_kind(arrow_type: pa.DataType) -> str:
    from fuzzpy.data.cells import kind_of_arrow

    return kind_of_arrow(arrow_type) or "string"
