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
* `loader`: CSV / Parquet files to bags, with coded errors (FZ5xx).
* `run`: the `fuzzpy run` command (check, quote, load, charge, compute, print).
"""
