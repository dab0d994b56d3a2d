"""The persistent privacy budget (SQLite): datasets, budgets, quotes, charges, history.
May import `runtime` and below (it uses `accounting`, `language`, `support`); never `data` or above.

* `book`         -- `Ledger`: quote, charge, history; dataset keys; where the file lives
* `datasets`, `registry` -- registered datasets: name, file and its hash,
                    public schema and row rules (`fuzzpy dataset`)
* `rules`        -- budgets, spends and the composition rules (`basic`, `zcdp`)
* `costs`        -- a release's cost in a rule's currency (asks the accountant)
* `zcdp`         -- zCDP <-> (epsilon, delta) for the `zcdp` rule
* `quotes`       -- quotes, receipts, history entries and their wording
* `store`, `records` -- the SQLite schema and row conversions
* `event_codec`  -- mechanism events to and from JSON, exactly
* `errors`       -- ledger diagnostics
"""
