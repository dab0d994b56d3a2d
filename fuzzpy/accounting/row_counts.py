"""Public row counts under replace-one: `--rows N` (one bag parameter) or
`--rows NAME=N` (per bag parameter, repeatable), in check, budget, run and
the Python API (``rows=N`` or ``rows={"db": N}``).

A count is a fact about one dataset: `choose[m]` and `bootstrap[m]` of the
dataset passed as a bag parameter are amplified at that dataset's own size
(`neighbours`). So a bare N is accepted only where there is one bag
parameter to give it to; with two it is refused, naming them, rather than
taken as the size of both. A bag parameter given no count is charged
unamplified (valid for any size).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

RowCounts = int | dict[str, int] | None


class RowsError(ValueError):
    """A `--rows` value that cannot be given to the bag parameters at hand."""


def parse(values: Sequence[str] | str | int | None) -> RowCounts:
    """`--rows` as typed (each value "N" or "NAME=N"): one count, or one
    per name; mixing the two forms, repeating a name or a bare N, or a count
    that is not a whole number >= 0 is refused."""
    if values is None or isinstance(values, int):
        return None if values is None else _count(str(values), "--rows")
    if isinstance(values, str):
        values = [values]
    bare: list[int] = []
    named: dict[str, int] = {}
    for value in values:
        name, sep, count = value.partition("=")
        if not sep:
            bare.append(_count(value, "--rows"))
            continue
        name = name.strip()
        if not name.isidentifier():
            raise RowsError(f"--rows {value}: `{name}` is not a parameter name (NAME=N)")
        if name in named:
            raise RowsError(f"--rows gives `{name}` twice")
        named[name] = _count(count, f"--rows {name}=")
    if bare and named:
        raise RowsError("--rows takes one count N (for a single bag parameter) or NAME=N per bag parameter, "
                        "not both")
    if len(bare) > 1:
        raise RowsError("--rows N is given once; for several bag parameters give NAME=N for each")
    return bare[0] if bare else (named or None)


def checked(rows: object) -> RowCounts:
    """The API's ``rows`` (an int, a mapping of names to ints, or None), checked."""
    if rows is None:
        return None
    if isinstance(rows, bool):
        raise RowsError(f"rows must be a whole number or a mapping of parameter names to numbers, not {rows!r}")
    if isinstance(rows, int):
        return _count(str(rows), "rows")
    if isinstance(rows, Mapping):
        found: dict[str, int] = {}
        for name, count in rows.items():
            if not isinstance(name, str) or not name.isidentifier():
                raise RowsError(f"rows: {name!r} is not a parameter name")
            if isinstance(count, bool) or not isinstance(count, int):
                raise RowsError(f"rows[{name!r}] must be a whole number, not {count!r}")
            found[name] = _count(str(count), f"rows[{name!r}]")
        return found or None
    raise RowsError(f"rows must be a whole number or a mapping of parameter names to numbers, not {rows!r}")


def for_parameters(rows: RowCounts, parameters: Iterable[str], where: str) -> RowCounts:
    """``rows`` for a definition (``where``, e.g. "`train`") whose bag
    parameters are ``parameters``: a bare N needs exactly one of them;
    every name given must be one of them."""
    names = list(dict.fromkeys(parameters))
    if isinstance(rows, int) and len(names) > 1:
        listed = ", ".join(f"`{n}`" for n in names)
        example = " ".join(f"--rows {n}=N" for n in names)
        raise RowsError(f"--rows {rows} is the size of one dataset, but {where} has {len(names)} bag "
                        f"parameters ({listed}); give each its own: {example}")
    if isinstance(rows, dict):
        unknown = [n for n in rows if n not in names]
        if unknown:
            have = ", ".join(f"`{n}`" for n in names) or "none"
            raise RowsError(f"--rows {unknown[0]}=...: {where} has no bag parameter `{unknown[0]}` "
                            f"(its bag parameters: {have})")
    return rows


def text(rows: RowCounts) -> str:
    """``rows`` as typed on a command line."""
    if rows is None:
        return ""
    if isinstance(rows, int):
        return str(rows)
    return " ".join(f"{name}={count}" for name, count in rows.items())


def _count(text_value: str, what: str) -> int:
    stripped = text_value.strip()
    if not stripped.isdigit():
        raise RowsError(f"{what}{'' if what.endswith('=') else ' '}{text_value}: a number of rows is a whole "
                        "number >= 0")
    return int(stripped)
