"""Training and measurement: `train` (the models' recipe), `evaluate` (the held-out set),
`quantize` (8-bit export), `accuracy` (whole rounds followed). Needs the `[train]` extra for
training; never imported by what a box runs."""
