"""The kernel-mode checks of ``sekai.testing.kernel_modes`` on a plugin's own modes: a correct one
passes them all (it could not run the numpy comparison), and one that breaks a rule (same-step
autoreset, seeding, freezing, rewards, metadata, its backend) fails the check of that rule. Here,
not with sekai-core's tests, as the checks run CartPole-v1's kernel."""

from __future__ import annotations

import sys
import types
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np
import pytest

from sekai.envs.classic_control import _plugin as classic
from sekai.plugins import hookimpl
from sekai.testing import registry_sandbox
from sekai.testing.kernel_modes import MODE_CHECKS, ModeCase
from sekai.testing.kernels import kernel_backend
from sekai.vector.kernel_backend import NumpyBackend
from sekai.vector.kernel_vec_env import KernelVecEnv
from sekai.vector.result import VecStepResult

MODULE = "sekai_test_kernel_modes"


class NumpyMode(KernelVecEnv):
    """A correct plugin mode: the numpy driver under its own name."""


class StaleAutoresetMode(KernelVecEnv):
    """Broken: the step that ends an episode returns the terminal observation, not the reset
    one (the final_* infos are still there)."""

    def step(self, actions: Any) -> VecStepResult[Any]:
        out = super().step(actions)
        t = self.last_transition
        assert t is not None
        done = np.asarray(t.done)[:, None]
        observations = np.where(done, np.asarray(t.final_observation), out.observations)
        return VecStepResult(observations, out.rewards, out.terminated, out.truncated, out.infos)


class SeedIgnoringMode(KernelVecEnv):
    """Broken: every reset is seeded with 0, whatever seed it is given (or none)."""

    def reset(self, *, seed: Any = None, options: Any = None) -> Any:
        return super().reset(seed=0, options=options)


class PayingFrozenMode(KernelVecEnv):
    """Broken: a frozen sub-env (``autoreset=False``) is paid 1 at every step."""

    def step(self, actions: Any) -> VecStepResult[Any]:
        frozen = np.asarray(self.frozen).copy()
        out = super().step(actions)
        rewards = np.where(frozen, 1.0, out.rewards)
        return VecStepResult(out.observations, rewards, out.terminated, out.truncated, out.infos)


class DoublePayMode(KernelVecEnv):
    """Broken: pays twice the kernel's reward."""

    def step(self, actions: Any) -> VecStepResult[Any]:
        out = super().step(actions)
        rewards = out.rewards * 2
        return VecStepResult(out.observations, rewards, out.terminated, out.truncated, out.infos)


class NoMetadataMode(KernelVecEnv):
    """Broken: drops the env's metadata."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.metadata = {}


class _FlippedActions(NumpyBackend):
    def actions(self, actions: Any) -> Any:
        return 1 - super().actions(actions)


class FlippedBackendMode(KernelVecEnv):
    """Broken: its backend (what the numpy comparison runs) steps with the other action."""

    @classmethod
    def cpu_backend(cls, dtype: str = "float64") -> NumpyBackend:
        return _FlippedActions(np.dtype(dtype))


BROKEN = {
    "seedless": SeedIgnoringMode,
    "payfrozen": PayingFrozenMode,
    "doublepay": DoublePayMode,
    "nometa": NoMetadataMode,
    "flipped": FlippedBackendMode,
}


class ModesPlugin:
    @staticmethod
    @hookimpl
    def sekai_register_vector_backends(registry: Any) -> None:
        registry.register("npk", f"{MODULE}:NumpyMode")
        registry.register("stale", f"{MODULE}:StaleAutoresetMode")
        for name, mode in BROKEN.items():
            registry.register(name, f"{MODULE}:{mode.__name__}")


@pytest.fixture
def modes(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    module = types.ModuleType(MODULE)
    module.NumpyMode = NumpyMode  # type: ignore[attr-defined]
    module.StaleAutoresetMode = StaleAutoresetMode  # type: ignore[attr-defined]
    for mode in BROKEN.values():
        setattr(module, mode.__name__, mode)
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


@pytest.mark.parametrize(
    ("mode", "check", "message"),
    [
        ("seedless", "same_seed_same_episodes", r"^seeds 3 and 4 gave the same observations"),
        ("seedless", "autoresets_and_unseeded_resets_start_new_episodes", "repeated first"),
        ("payfrozen", "finished_sub_envs_freeze_without_autoreset", r"Mismatched elements: 2"),
        ("doublepay", "wrappers_keep_the_arrays_on_the_device", r"^episodes \(length, return\)"),
        ("nometa", "metadata_and_time_limit_come_from_the_env", r"^metadata \{\}, the env's \{"),
        ("flipped", "matches_the_numpy_driver", r"flipped float64: observation at step 1"),
    ],
)
def test_a_mode_that_breaks_a_rule_fails_its_check(
    modes: None, mode: str, check: str, message: str
) -> None:
    with pytest.raises(AssertionError, match=message):
        MODE_CHECKS[check](ModeCase(mode, np.asarray, "sekai_test_no_library"))


def test_kernel_backend_takes_any_kernel_mode_and_names_what_is_not_one(modes: None) -> None:
    assert isinstance(kernel_backend("npk", "float32"), NumpyBackend)
    with pytest.raises(ValueError, match=r"^Unknown vectorization_mode 'nope'; expected one of "):
        kernel_backend("nope")
    with pytest.raises(TypeError, match=r"^vectorization_mode 'sync' is not a kernel mode"):
        kernel_backend("sync")
