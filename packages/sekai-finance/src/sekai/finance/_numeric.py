"""Sums with a fixed (left-to-right) association, so one env and a batch agree bit for bit.

NumPy's ``sum`` reduces pairwise, and a single env written with Python floats adds left to
right; ``seq_sum`` adds left to right (one ``np.add.reduce`` over the rows of a C-ordered
block, else term by term, or with ``np.cumsum``, an accumulation, for long axes), so
``seq_sum(x)[k]`` equals ``((x[k, 0] + x[k, 1]) + x[k, 2]) + ...`` exactly, as Python's
``sum()`` of the same floats does, whatever the memory layout of ``x`` (a sum of ``-0.0``
terms only may come out as ``0.0``, as Python's ``sum()`` gives it).

The native envs keep short per-asset arrays asset-major, ``(n, num_envs)``, and sum over
``axis=0``: each term is then one contiguous row, where the last axis of a ``(num_envs, n)``
array would make every term a strided column.

``small_matmul`` multiplies by a small matrix without BLAS: see its docstring.
"""

from __future__ import annotations

from typing import Any

import numpy as np

__all__ = ["divide_along", "seq_sum", "small_matmul"]


_TERMWISE = 16  # up to this many terms, adding them one by one beats np.cumsum
# Up to this inner size small_matmul skips BLAS; past it the product is real work (BLAS's
# blocking wins by 5x and more, and its threads can pay off).
SMALL_INNER = 16


def _axis_first(array: np.ndarray, axis: int) -> np.ndarray:
    """A view of ``array`` with ``axis`` moved to the front (``np.moveaxis``, cheaper)."""
    axis %= array.ndim
    if axis == 0:
        return array
    moved: np.ndarray = array.transpose(axis, *(i for i in range(array.ndim) if i != axis))
    return moved


def seq_sum(x: Any, axis: int = -1) -> Any:
    """Left-to-right sum over ``axis`` (0.0 for an empty axis)."""
    terms = _axis_first(np.asarray(x, dtype=np.float64), axis)
    width = terms.shape[0]
    if width == 0:
        return np.zeros(terms.shape[1:])
    if width == 1:
        return terms[0].copy()
    if terms.ndim == 2 and terms.shape[1] > 1 and terms.flags.c_contiguous:
        # Rows of one C-ordered block: NumPy reduces axis 0 row after row into the
        # contiguous output, left to right (its pairwise summation runs only along the
        # memory-contiguous axis), in one call. Not for one column: (k, 1) is one
        # contiguous run, which NumPy would sum pairwise.
        return np.add.reduce(terms, axis=0)
    if width > _TERMWISE:
        return np.cumsum(terms, axis=0)[-1]
    total = terms[0] + terms[1]
    for term in range(2, width):
        total += terms[term]
    return total


def divide_along(
    x: np.ndarray, totals: np.ndarray, axis: int = -1, out: np.ndarray | None = None
) -> np.ndarray:
    """``x / np.expand_dims(totals, axis)``, bit for bit, for ``axis`` -1 or 0.

    Broadcasting a total along a short last axis makes NumPy run one inner loop per row, so
    for ``axis=-1`` the totals are repeated first (one loop over the whole array); along
    ``axis=0`` the totals broadcast over whole contiguous rows already.
    """
    along_rows = axis == 0 or x.ndim < 2
    divisor = totals if along_rows else np.repeat(totals, x.shape[-1]).reshape(x.shape)
    result: np.ndarray = np.divide(x, divisor, out=out)
    return result


_MATMUL_CHUNK = 4096
"""Rows per einsum in :func:`small_matmul`."""


def small_matmul(a: np.ndarray, b: np.ndarray, out: np.ndarray | None = None) -> np.ndarray:
    """``a @ b`` for ``a`` ``(rows, k)`` and ``b`` ``(k, m)``, without BLAS when ``k <= 16``.

    Many rows times a handful of columns (one row per sub-env, one column per asset) is too
    little work for threads, but OpenBLAS splits a product over every core once its total size
    passes a threshold, and its threads then spin between calls: a native env kept a second
    core busy for no speed-up. NumPy's ``einsum`` (without ``optimize``) never calls BLAS, and
    run asset-major, its inner loop is the long contiguous rows axis (within 2.5x of
    single-threaded BLAS; row-major einsum is 6x). Larger ``k`` go to ``np.matmul``.
    """
    if b.shape[0] > SMALL_INNER:
        result: np.ndarray = np.matmul(a, b, out=out)
        return result
    rows = a.shape[0]
    if out is None:
        out = np.empty((rows, b.shape[1]), dtype=np.result_type(a, b))
    # In chunks of rows that stay in cache (a block of 24k rows at once ran 4x slower); each
    # element's sum over k is the same whatever the chunk, so the result is bit for bit.
    for start in range(0, rows, _MATMUL_CHUNK):
        part = slice(start, start + _MATMUL_CHUNK)
        columns = np.einsum("kj,ji->ki", b.T, np.ascontiguousarray(a[part].T))  # (m, chunk)
        out[part] = columns.T
    return out
