"""`at(x)[items].set(v)` and `.add(v)` (JAX's spelling): numpy's `x[items] = v` and
`np.add.at(x, items, v)` as values. Shared by the conformance generator and the fuzzer's oracle,
whose expression languages both have it."""

import numpy as np


class At:
    """`at(x)[items].set(v)` / `.add(v)`: a copy of `x` after `x[items] = v` / `np.add.at(x, items, v)`."""

    def __init__(self, x, items=None):
        self.x, self.items = x, items

    def __getitem__(self, items):
        return At(self.x, items)

    def set(self, v):
        y = np.array(self.x, copy=True)
        y[self.items] = v
        return y

    def add(self, v):
        y = np.array(self.x, copy=True)
        np.add.at(y, self.items, v)
        return y
