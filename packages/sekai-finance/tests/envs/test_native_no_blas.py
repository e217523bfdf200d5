"""Native finance envs make no BLAS call for their tiny products (issue 30).

OpenBLAS spreads a product with many rows over every core once its size passes a threshold, and
its threads then spin between calls: native Portfolio-v0 x1024 ran at 2 CPU-seconds per wall
second for no speed-up. A product of ``(num_envs, n) @ (n, n)`` with a handful of assets goes
through ``sekai.finance._numeric.small_matmul`` (NumPy's einsum, which never calls BLAS). These
tests check that deterministically: the BLAS entry points NumPy exposes by name are replaced by
a recorder, and the ``@`` operator, which no patch can intercept, must not appear in the native
env modules.
"""

from __future__ import annotations

import ast
from pathlib import Path

import numpy as np
import pytest

import sekai.envs.finance.vector as native_package
from sekai.envs.finance.vector import PortfolioVecEnv
from sekai.finance._numeric import SMALL_INNER, small_matmul

BLAS_ENTRY_POINTS = ("matmul", "dot", "tensordot", "inner", "vdot", "matvec", "vecmat")


@pytest.fixture
def blas_calls(monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, tuple[int, ...]]]:
    """Every call of a NumPy BLAS entry point (name, first operand's shape), still computed."""
    calls: list[tuple[str, tuple[int, ...]]] = []
    for name in BLAS_ENTRY_POINTS:
        original = getattr(np, name)

        def record(*args: object, _name: str = name, _original: object = original, **kw: object):
            calls.append((_name, np.shape(args[0])))
            return _original(*args, **kw)  # type: ignore[operator]

        monkeypatch.setattr(np, name, record)
    return calls


def test_native_portfolio_reset_and_steps_call_no_blas(blas_calls) -> None:
    """A reset of every sub-env (the (lookback * num_envs, n) product that woke the threads),
    steps and an autoreset of every sub-env, correlated GBM with the default five assets."""
    vec = PortfolioVecEnv(32, episode_length=5, lookback=4)
    vec.reset(seed=0)
    actions = np.random.default_rng(0).random((32, 6))
    for _ in range(7):  # through one autoreset
        vec.step(actions)
    vec.close()
    assert blas_calls == []


def test_native_env_modules_use_no_matmul_operator() -> None:
    """``a @ b`` cannot be intercepted at run time; the native env sources must not use it."""
    offenders = []
    for path in sorted(Path(native_package.__file__).parent.glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.BinOp | ast.AugAssign) and isinstance(node.op, ast.MatMult):
                offenders.append(f"{path.name}:{node.lineno}")
    assert offenders == []


@pytest.mark.parametrize("shape", [(1, 1), (7, 2), (1024, 5), (30, 64, 5)])
def test_small_matmul_equals_matmul(shape: tuple[int, ...]) -> None:
    rng = np.random.default_rng(1)
    a = rng.standard_normal(shape).reshape(-1, shape[-1])
    b = np.linalg.cholesky(np.eye(shape[-1]) * 0.8 + 0.2).T * 0.01  # a transposed view
    expected = a @ b
    assert np.allclose(small_matmul(a, b), expected, rtol=1e-14, atol=1e-17)
    out = np.empty_like(expected)
    assert small_matmul(a, b, out) is out
    assert np.allclose(out, expected, rtol=1e-14, atol=1e-17)


def test_small_matmul_leaves_a_large_inner_size_to_blas(blas_calls) -> None:
    """Past ``SMALL_INNER`` the product is real work: BLAS's blocking (and threads) pay."""
    k = SMALL_INNER + 1
    small_matmul(np.ones((3, SMALL_INNER)), np.ones((SMALL_INNER, 2)))
    assert blas_calls == []
    assert small_matmul(np.ones((3, k)), np.ones((k, 2))).tolist() == [[k, k]] * 3
    assert blas_calls == [("matmul", (3, k))]


def test_small_matmul_rows_in_chunks_are_bit_for_bit_those_of_one_product() -> None:
    """Rows are computed in cache-sized chunks; a row's result must not depend on its chunk."""
    from sekai.finance._numeric import _MATMUL_CHUNK

    rng = np.random.default_rng(1)
    a = rng.standard_normal((2 * _MATMUL_CHUNK + 3, 5))
    b = rng.standard_normal((5, 5))
    whole = small_matmul(a, b)
    for rows in (slice(0, 7), slice(_MATMUL_CHUNK - 2, _MATMUL_CHUNK + 2), slice(-5, None)):
        assert np.array_equal(small_matmul(a[rows], b), whole[rows])
    assert np.allclose(whole, a @ b, rtol=1e-14, atol=1e-15)
