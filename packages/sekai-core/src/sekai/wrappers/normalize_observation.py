"""NormalizeObservation: standardise observations with running statistics, leaf by leaf."""

from __future__ import annotations

from typing import Any

from sekai.core.env import Env
from sekai.core.wrapper import ObservationWrapper
from sekai.stats.normalizer import NormalizerAttributes, ObservationNormalizer

__all__ = ["NormalizeObservation"]


class NormalizeObservation(NormalizerAttributes, ObservationWrapper[Any, Any, Any]):
    """Normalise every Box leaf to ``(x - mean) / sqrt(var + epsilon)``, updating stats first.

    Box leaves (top level or inside Dict/Tuple) each get their own statistics; a MaskedBox leaf
    gets per-feature statistics over its occupied slots and outputs 0 in empty slots; other
    leaves pass through. Output leaves are float64 ``Box(-inf, inf)`` (``Box(-clip, clip)`` with
    ``clip``) and float64 MaskedBoxes. While the statistics update, a NaN or infinite value,
    or one that would take them past float64's range, raises ValueError (naming the part of
    the observation) before any of them change; frozen statistics only transform (NaN in,
    NaN out).

    Args:
        env: the environment to wrap.
        epsilon: added to the variance before dividing.
        stats: ``"running"`` (all-time ``RunningMeanStd``) or ``"ewm"``
            (``ExponentialMovingStats(halflife)``; one observation is one step).
        halflife: the EWM halflife in steps.
        clip: clip the normalised values to ``[-clip, clip]`` (``None``: no clipping).

    Attributes:
        obs_rms: the statistics, nested like the space (``None`` for pass-through leaves).
            Assign another wrapper's (``eval_env.obs_rms = train_env.obs_rms``) to normalise
            with its statistics; ``epsilon`` is assignable too.
        update_running_mean: set it to False to freeze the statistics.
    """

    def __init__(
        self,
        env: Env[Any, Any],
        epsilon: float = 1e-8,
        *,
        stats: str = "running",
        halflife: float = 1000.0,
        clip: float | None = None,
    ) -> None:
        super().__init__(env)
        self._normalizer = ObservationNormalizer(
            env.observation_space, stats=stats, halflife=halflife, epsilon=epsilon, clip=clip
        )
        self.update_running_mean = True
        self.observation_space = self._normalizer.observation_space

    def observation(self, observation: Any) -> Any:
        """Update the statistics (unless frozen) and return the normalised observation."""
        return self._normalizer.normalize(observation, update=self.update_running_mean)

    def state_dict(self) -> dict[str, Any]:
        """The observation statistics, for checkpointing."""
        return {"obs_rms": self._normalizer.state_dict()}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        """Restore statistics saved by ``state_dict()``, all or nothing: every part is checked
        before any is loaded, and an error names the part."""
        self._normalizer.load_wrapper_state(state)
