"""The kernel-mode checks on a plugin's own modes: a correct one passes them all (it could not
run the numpy comparison), and one that breaks same-step autoreset fails."""

from __future__ import annotations

import sys
import types
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np
import pytest

from sekai.plugins import hookimpl
from sekai.testing import registry_sandbox
from sekai.testing.kernel_modes import MODE_CHECKS, ModeCase
from sekai.testing.kernels import kernel_backend
from sekai.vector.kernel_backend import NumpyBackend
from sekai.vector.kernel_vec_env import KernelVecEnv
from sekai.vector.result import VecStepResult

classic = pytest.importorskip("sekai.envs.classic_control._plugin")

MODULE = "sekai_test_kernel_modes"


class NumpyMode(KernelVecEnv):
    """A correct plugin mode: the numpy driver under its own name."""


class StaleAutoresetMode(KernelVecEnv):
    """Broken: the step that ends an episode returns the terminal observation, not the reset
    one (the final_* infos are still there)."""

    def step(self, actions: Any) -> VecStepResult:
        out = super().step(actions)
        t = self.last_transition
        assert t is not None
        done = np.asarray(t.done)[:, None]
        observations = np.where(done, np.asarray(t.final_observation), out.observations)
        return VecStepResult(observations, out.rewards, out.terminated, out.truncated, out.infos)


class ModesPlugin:
    @staticmethod
    @hookimpl
    def sekai_register_vector_backends(registry: Any) -> None:
        registry.register("npk", f"{MODULE}:NumpyMode")
        registry.register("stale", f"{MODULE}:StaleAutoresetMode")


@pytest.fixture
def modes(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    module = types.ModuleType(MODULE)
    module.NumpyMode = NumpyMode  # type: ignore[attr-defined]
    module.StaleAutoresetMode = StaleAutoresetMode  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, MODULE, module)
    # CartPole-v1, which the checks run, comes from sekai-classic's own plugin.
    with registry_sandbox(
        ("classic", classic), ("modes", ModesPlugin), distribution="sekai-classic"
    ):
        yield


@pytest.mark.parametrize("check", MODE_CHECKS.values(), ids=list(MODE_CHECKS))
def test_a_plugin_mode_passes_every_check(modes: None, check: Callable[[ModeCase], None]) -> None:
    # Before: matches_the_numpy_driver refused any mode but 'jax' and 'torch'.
    check(ModeCase("npk", np.asarray, "sekai_test_no_library"))


def test_a_mode_that_returns_the_terminal_observation_after_an_autoreset_fails(
    modes: None,
) -> None:
    # Before: every check passed it (the autoreset check looked for the info keys only).
    check = MODE_CHECKS["autoreset_returns_the_next_episodes_first_observation"]
    with pytest.raises(AssertionError, match=r"step 0, sub-env 0 \(k=1, episode 0\): observation"):
        check(ModeCase("stale", np.asarray, "sekai_test_no_library"))


def test_kernel_backend_takes_any_kernel_mode_and_names_what_is_not_one(modes: None) -> None:
    assert isinstance(kernel_backend("npk", "float32"), NumpyBackend)
    with pytest.raises(ValueError, match=r"^Unknown vectorization_mode 'nope'; expected one of "):
        kernel_backend("nope")
    with pytest.raises(TypeError, match=r"^vectorization_mode 'sync' is not a kernel mode"):
        kernel_backend("sync")
