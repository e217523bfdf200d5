"""Harness of the kernel equivalence tests: a native vector env and a kernel fed the same draws.

A native env draws its own random numbers; the harness reads what it drew (the window envs'
normals through a recording stand-in for their ``NormalBlocks``, window starts from the state,
the session envs' ``rng`` draws replayed from a twin generator) and hands the very same
numbers to the kernel, then compares every step: observations, rewards, flags and infos,
across autoresets (the kernel's reset of the finished sub-envs, merged as a driver does).
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Iterable, Mapping
from typing import Any

import array_api_compat.numpy as xp_numpy
import numpy as np
import pytest

from sekai.envs.finance.kernels._window import position_uniforms
from sekai.finance._normals import NormalBlocks

Draws = Callable[[Any, np.ndarray], dict[str, np.ndarray]]


class NormalsRecorder:
    """Stands in for a native window env's ``NormalBlocks``: draws through one and records."""

    def __init__(self) -> None:
        self._blocks = NormalBlocks()
        self.log: deque[np.ndarray] = deque()

    def fill(self, rng: np.random.Generator, out: np.ndarray) -> None:
        self._blocks.fill(rng, out)
        self.log.append(out.copy())

    def draw(self, rng: np.random.Generator, shape: tuple[int, ...]) -> np.ndarray:
        z = self._blocks.draw(rng, shape)
        self.log.append(z.copy())
        return z


def window_draws(native: Any, kernel: Any) -> tuple[Draws, Draws]:
    """``(reset_draws, step_draws)`` of a native Trading/Portfolio env, read back after it drew."""
    recorder = NormalsRecorder()
    native._normals = recorder

    def reset_draws(native: Any, mask: np.ndarray) -> dict[str, np.ndarray]:
        n_envs = mask.shape[0]
        if kernel.replay:  # the start each reset sub-env got, as a uniform that maps back to it
            params = kernel.params
            position = np.asarray(native._start) - params.first
            return {"u": position_uniforms(position)}
        z = np.zeros((n_envs, kernel.lookback, kernel.n_assets))
        z[mask] = recorder.log.popleft().transpose(1, 0, 2)  # drawn (lookback, k, n)
        return {"z": z}

    def step_draws(native: Any, mask: np.ndarray) -> dict[str, np.ndarray]:
        return {} if kernel.replay else {"z": recorder.log.popleft()}

    return reset_draws, step_draws


def twin_generator(native: Any) -> np.random.Generator:
    """A generator in the state of ``native.rng``: it draws what the native env will draw."""
    twin = np.random.Generator(type(native.rng.bit_generator)())
    twin.bit_generator.state = native.rng.bit_generator.state
    return twin


def close(actual: Any, expected: Any, what: str, rtol: float = 1e-12, scale: float = 0.0) -> None:
    """``actual`` equals ``expected`` within ``rtol`` relative to each value, or to ``scale``
    (the size of the terms a value is a difference of), NaN where NaN."""
    a = np.asarray(actual)
    e = np.broadcast_to(np.asarray(expected), a.shape)
    if a.dtype == bool or e.dtype == bool:
        np.testing.assert_array_equal(a, e, err_msg=what)
        return
    np.testing.assert_allclose(
        a.astype(np.float64),
        e.astype(np.float64),
        rtol=rtol,
        atol=max(rtol * scale, 1e-300),
        err_msg=what,
    )


def wealth_scale(info: Mapping[str, Any]) -> float:
    """The size of a MarketMaking step's wealths (cash and inventory at the mid): its reward
    is their difference, which the native env computes with an error of that size's rounding."""
    mid = np.abs(np.asarray(info["mid_price"]))
    held = np.abs(np.asarray(info["inventory"])) * mid
    return float(np.max(np.abs(np.asarray(info["cash"])) + held + mid))


def close_obs(actual: Any, expected: Any, what: str, rtol: float) -> None:
    if isinstance(expected, Mapping):
        for key in expected:
            close_obs(actual[key], expected[key], f"{what}[{key!r}]", rtol)
        return
    expected = np.asarray(expected)
    # The native env builds float32 observations from float64 values: compare in float32.
    close(np.asarray(actual).astype(expected.dtype), expected, what, rtol)


def merge_rows(mask: np.ndarray, new: Any, old: Any) -> Any:
    if isinstance(new, Mapping):
        return {key: merge_rows(mask, new[key], old[key]) for key in new}
    where = mask.reshape((-1,) + (1,) * (np.ndim(new) - 1))
    return np.where(where, new, old)


class Trial:
    """Steps a native env and a kernel side by side and compares every step.

    Args:
        native: the native vector env (not reset yet).
        kernel: the kernel built from the same keyword arguments.
        reset_draws, step_draws: read the draws the native env made for a reset (of the
            sub-envs in ``mask``) or a step, as the kernel's ``draws``.
        rtol: relative tolerance of every float compared.
    """

    def __init__(
        self, native: Any, kernel: Any, reset_draws: Draws, step_draws: Draws, rtol: float = 1e-12
    ) -> None:
        self.native, self.kernel = native, kernel
        self.reset_draws, self.step_draws, self.rtol = reset_draws, step_draws, rtol
        self.captured: dict[str, Any] = {}
        self.autoresets = 0
        self.terminations = 0
        step, reset_infos = native._step, native._reset_infos

        def spy_step(actions: Any) -> Any:
            self.captured["step"] = result = step(actions)
            return result

        def spy_reset_infos(indices: Any) -> Any:
            self.captured["reset"] = (indices, result := reset_infos(indices))
            return result

        native._step, native._reset_infos = spy_step, spy_reset_infos

    def _check_reset_infos(self, info: Mapping[str, Any], mask: np.ndarray) -> None:
        indices, expected = self.captured.pop("reset")
        np.testing.assert_array_equal(np.flatnonzero(mask), indices)
        assert set(info) == set(expected)
        for key, value in expected.items():
            close(np.asarray(info[key])[indices], value, f"reset info {key!r}", self.rtol)

    def run(self, seed: int, actions: Iterable[Any]) -> None:
        native, kernel, xp = self.native, self.kernel, xp_numpy
        params = kernel.params
        observation = native.reset(seed=seed).observations
        every = np.ones(native.num_envs, dtype=bool)
        state, obs, info = kernel.reset(xp, params, self.reset_draws(native, every), every, None)
        self._check_reset_infos(kernel.host_info(params, info), every)
        close_obs(obs, observation, "reset observation", self.rtol)
        for i, action in enumerate(actions):
            result = native.step(action)
            observation, terminated, truncated = (
                result.observations,
                result.terminated,
                result.truncated,
            )
            rewards, _, _, expected_info = self.captured.pop("step")
            draws = self.step_draws(native, every)
            state, obs, reward, term, trunc, info = kernel.step(xp, params, state, action, draws)
            info = kernel.host_info(params, info)  # as the drivers report it
            close(term, terminated, f"step {i}: terminated")
            close(trunc, truncated, f"step {i}: truncated")
            scale = wealth_scale(expected_info) if "cash" in expected_info else 0.0
            close(reward, rewards, f"step {i}: rewards", self.rtol, scale)
            assert set(info) == set(expected_info)
            for key, value in expected_info.items():
                close(info[key], value, f"step {i}: info {key!r}", self.rtol)
            done = np.asarray(term | trunc)
            if done.any():
                self.autoresets += 1
                self.terminations += int(np.asarray(term).sum())
                draws = self.reset_draws(native, done)
                state, fresh, info = kernel.reset(xp, params, draws, done, state)
                self._check_reset_infos(kernel.host_info(params, info), done)
                obs = merge_rows(done, fresh, obs)
            close_obs(obs, observation, f"step {i}: observation", self.rtol)


@pytest.fixture
def kernel_harness() -> Any:
    """The harness: ``Trial``, ``NormalsRecorder``, ``window_draws``, ``twin_generator``,
    ``close``, ``merge_rows``."""

    class Harness:
        pass

    harness = Harness()
    for item in (
        Trial,
        NormalsRecorder,
        window_draws,
        twin_generator,
        close,
        merge_rows,
        wealth_scale,
    ):
        setattr(harness, item.__name__, item)
    return harness
