"""Privacy accounting: mechanism events, composition, conversions, the ledger."""
