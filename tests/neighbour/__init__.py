"""The neighbour harness (issue 9): programs that `check` accepts, run on
neighbouring datasets with the same seed, must end the same way and release
values no further apart than the sensitivity or cost the checker derived."""
