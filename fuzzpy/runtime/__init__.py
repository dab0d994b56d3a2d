"""Running checked programs: interpreter, exact noise, data loading, `fuzzpy run`.

* `interpreter`, `operations`, `primitives`, `values`: the functional language;
  functions given to `map`/`filter`/`split`/`group` run over whole columns.
  What every construct computes is docs/semantics.md: `exact` (macro-level
  numbers), `rowops` (per-row numbers, total), `aggregates` (exact sums),
  `sigmoid`, `vectors`, `statics` (static zeros: what is not evaluated),
  `defaults` (a row's value when its recursion runs out of calls),
  `feasible` (what `run` refuses before charging).
* `bag`: columnar databases (numpy columns, lazy row selections).
* `mechanisms`: the imperative `mechanism` bodies, in exact rational arithmetic.
* `randomness`, `samplers`, `noise`, `expmech`: exact discrete Laplace and
  Gaussian samplers (Canonne, Kamath & Steinke 2020) and the grid on which
  releases are made, safe against floating-point attacks (Mironov 2012).
* `loader`, `csvframe`, `cells`: CSV / Parquet files to bags. The schema is
  public (refused with FZ5xx before any charge); the rows are private (a row
  that does not fit is handled by its column's row rule, never reported).
* `datasets`: which dataset (and file) each `bag` parameter of a run reads.
* `validation`: the data owner's report on a file (`fuzzpy dataset check`).
* `run`: the `fuzzpy run` command (check, quote, load, charge, compute, print).
"""
