"""Privacy accounting: mechanism events, composition, conversions (the ledger is `fuzzpy.ledger`).
May import `frontend`, `language`, `support`; independent of the verifier.

Module map (the ledger lives beside it in `fuzzpy.ledger`, the `fuzzpy budget`
command in `fuzzpy.commands.budget`):

* `events`        -- what the checker emits: Laplace, Gaussian, ExpMech, ...
* `atoms`         -- the events flattened to single mechanisms with counts
* `accountant`    -- `tightest`, `guarantees`, `pure_epsilon`, `rho`,
                     `compose_releases`: the minimum over every valid method
* `composition`   -- basic, advanced (DRV) and optimal (KOV) composition
* `gaussian`      -- the analytic Gaussian and its exact composition
* `zcdp`, `rdp`   -- concentrated and Renyi DP, with their conversions
* `pld`, `pld_pairs`, `discrete` -- privacy loss distributions
* `calibrate`     -- the noise needed for (eps, delta) over k rounds
* `plot`          -- epsilon against rounds, for `fuzzpy budget --plot`
"""
