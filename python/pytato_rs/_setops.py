"""numpy's set routines on flattened arrays: ``union1d``, ``intersect1d``, ``setdiff1d`` and
``setxor1d``, composed of the library's ``unique``, ``sort``, ``isin`` and masks, as numpy's
``numpy/lib/_arraysetops_impl.py`` computes them (so NaNs, which never equal each other, are
in a symmetric difference twice and in no intersection). Their lengths are counts, which the
data decides when the program runs.

numpy compares each element of the sorted values with the next (``aux[1:] == aux[:-1]``); here
the sorted values are padded by one element first, so that the two slices are valid for every
length the data may give, none included.
"""

from __future__ import annotations

import numpy as np


def _flat(pt, a):
    return pt.ravel(a if isinstance(a, pt.Array) else pt.asarray(a))


def _equals_next(pt, aux):
    """For sorted 1-d ``aux``: whether each element equals the one after it (the last: no)."""
    padded = pt.concatenate((aux, pt.zeros(1, aux.dtype)))
    present = pt.concatenate((pt.ones_like(aux, dtype=bool), pt.zeros(1, bool)))
    return pt.logical_and(pt.equal(padded[1:], padded[:-1]), present[1:])


def union1d(ar1, ar2):
    """numpy's ``union1d``: the sorted distinct values of both arrays, flattened."""
    import pytato_rs as pt

    return pt.unique(pt.concatenate((_flat(pt, ar1), _flat(pt, ar2))))


def intersect1d(ar1, ar2, assume_unique=False, return_indices=False):
    """numpy's ``intersect1d``: the sorted values in both arrays (flattened). With
    ``return_indices``, also the index in each flattened array of each value's first occurrence
    (with ``assume_unique``, of the occurrence numpy's sort finds). ``assume_unique`` skips the
    ``unique`` of each array, as numpy does: an array with repeated values then gives numpy's
    result for that input too."""
    import pytato_rs as pt

    ar1, ar2 = _flat(pt, ar1), _flat(pt, ar2)
    if not assume_unique:
        if return_indices:
            ar1, ind1 = pt.unique(ar1, return_index=True)
            ar2, ind2 = pt.unique(ar2, return_index=True)
        else:
            ar1, ar2 = pt.unique(ar1), pt.unique(ar2)
    joined = pt.concatenate((ar1, ar2))
    if not return_indices:
        aux = pt.sort(joined)
        return aux[_equals_next(pt, aux)]
    order = pt.argsort(joined, stable=True)  # numpy's mergesort: equal values keep their order
    aux = pt.take(joined, order)
    both = _equals_next(pt, aux)
    common = aux[both]
    first = order[both]
    after = pt.concatenate((order, pt.zeros(1, order.dtype)))[1:]
    second = pt.subtract(after[both], pt.sum(pt.ones_like(ar1, dtype=np.int64)))
    if not assume_unique:
        first, second = pt.take(ind1, first), pt.take(ind2, second)
    return common, first, second


def setdiff1d(ar1, ar2, assume_unique=False):
    """numpy's ``setdiff1d``: the distinct values of ``ar1`` that are not in ``ar2``, sorted;
    with ``assume_unique``, ``ar1``'s values in their order (repeats kept), as numpy does."""
    import pytato_rs as pt

    ar1 = _flat(pt, ar1) if assume_unique else pt.unique(ar1)
    ar2 = _flat(pt, ar2) if assume_unique else pt.unique(ar2)
    return ar1[pt.isin(ar1, ar2, assume_unique=True, invert=True)]


def setxor1d(ar1, ar2, assume_unique=False):
    """numpy's ``setxor1d``: the sorted values in exactly one of the arrays (flattened); NaNs,
    unequal to each other, are there as often as the arrays (each made unique) hold them."""
    import pytato_rs as pt

    if not assume_unique:
        ar1, ar2 = pt.unique(ar1), pt.unique(ar2)
    aux = pt.sort(pt.concatenate((_flat(pt, ar1), _flat(pt, ar2))))
    equals_next = _equals_next(pt, aux)
    equals_previous = pt.concatenate((pt.zeros(1, bool), equals_next))[:-1]
    return aux[pt.logical_not(pt.logical_or(equals_next, equals_previous))]
