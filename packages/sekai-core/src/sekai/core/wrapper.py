"""Wrapper base classes: Wrapper, ObservationWrapper, ActionWrapper, RewardWrapper."""

from __future__ import annotations

import abc
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any, Generic, TypeVar

import numpy as np

from sekai.core._async import awaitable, passes_inward
from sekai.core._not_an_env import given, not_an_env_hint
from sekai.core._render_habit import missing_attribute
from sekai.core._rng import SeedLike
from sekai.core.env import Env
from sekai.core.result import ResetResult, StepResult

if TYPE_CHECKING:
    from sekai.registry.spec import EnvSpec
    from sekai.spaces.space import Space

__all__ = ["ActionWrapper", "ObservationWrapper", "ResultWrapper", "RewardWrapper", "Wrapper"]

ObsT = TypeVar("ObsT")
ActT = TypeVar("ActT")
WrapperObsT = TypeVar("WrapperObsT")
WrapperActT = TypeVar("WrapperActT")

_WRAP_GYMNASIUM = "To wrap a gymnasium env, convert it first with sekai.compat.from_gymnasium(env)."
_NO_REVERSE_ACTION = (
    "{cls} does not implement reverse_action(). Implement it if you need to map env actions "
    "back to wrapper actions."
)


def _own_space(owner: str, name: str, space: object) -> Space[Any] | None:
    """The space a wrapper (single-env or vector) assigns as its ``name``: a sekai Space, or
    None to show its inner env's again.

    Raises:
        TypeError: anything else, e.g. a gymnasium space (named in full by ``check_space``).
    """
    if space is None:
        return None
    # Here, not at the top: ``import sekai`` imports this module's Env but not sekai.spaces.
    from sekai.spaces.space import check_space

    return check_space(owner, name, space)


class Wrapper(Env[WrapperObsT, WrapperActT], Generic[WrapperObsT, WrapperActT, ObsT, ActT]):
    """Wraps an environment to change its behaviour; delegates everything by default.

    Subclasses call ``super().__init__(env)`` and may assign new ``observation_space`` /
    ``action_space`` in ``__init__``. Stateful logic derives from ``ResultWrapper`` and
    overrides its hooks, which serve ``reset``/``step`` and ``async_reset``/``async_step``
    alike; a wrapper that overrides the methods themselves must override all four.
    """

    def __init__(self, env: Env[ObsT, ActT]) -> None:
        if not isinstance(env, Env):
            raise TypeError(
                f"{type(self).__name__} expected a sekai.Env, got {given(env)}. "
                + not_an_env_hint(env, _WRAP_GYMNASIUM)
            )
        self.env = env
        self._observation_space: Space[Any] | None = None
        self._action_space: Space[Any] | None = None

    # -- spaces: the inner env's unless assigned here ---------------------------------------

    @property
    def observation_space(self) -> Space[Any]:
        """The inner env's observation space, unless this wrapper assigned its own."""
        if self._observation_space is not None:
            return self._observation_space
        return self.env.observation_space

    @observation_space.setter
    def observation_space(self, space: Space[Any] | None) -> None:
        self._observation_space = _own_space(type(self).__name__, "observation_space", space)

    @property
    def action_space(self) -> Space[Any]:
        """The inner env's action space, unless this wrapper assigned its own."""
        if self._action_space is not None:
            return self._action_space
        return self.env.action_space

    @action_space.setter
    def action_space(self, space: Space[Any] | None) -> None:
        self._action_space = _own_space(type(self).__name__, "action_space", space)

    # -- delegation ---------------------------------------------------------------------------

    @passes_inward
    def reset(
        self,
        *,
        seed: SeedLike = None,
        options: dict[str, Any] | None = None,
    ) -> ResetResult[WrapperObsT]:
        return self.env.reset(seed=seed, options=options)  # type: ignore[return-value]

    @passes_inward
    def step(self, action: WrapperActT) -> StepResult[WrapperObsT]:
        return self.env.step(action)  # type: ignore[arg-type,return-value]

    async def async_reset(
        self,
        *,
        seed: SeedLike = None,
        options: dict[str, Any] | None = None,
    ) -> ResetResult[WrapperObsT]:
        reset = self.env.async_reset(seed=seed, options=options)
        return await awaitable(reset, self.env, "async_reset")  # type: ignore[arg-type]

    async def async_step(self, action: WrapperActT) -> StepResult[WrapperObsT]:
        step = self.env.async_step(action)  # type: ignore[arg-type]
        return await awaitable(step, self.env, "async_step")  # type: ignore[arg-type]

    def close(self) -> None:
        """Close the inner env."""
        self.env.close()

    @property
    def unwrapped(self) -> Env[Any, Any]:
        """The innermost (base) environment."""
        return self.env.unwrapped

    @property
    def spec(self) -> EnvSpec | None:
        """The base env's registry spec (setting it sets the base env's)."""
        return self.env.spec

    @spec.setter
    def spec(self, value: EnvSpec | None) -> None:
        self.unwrapped.spec = value

    @property
    def metadata(self) -> dict[str, Any]:
        """The inner env's metadata (setting it sets the base env's, as ``spec`` does)."""
        return self.env.metadata

    @metadata.setter
    def metadata(self, value: dict[str, Any]) -> None:
        self.env.metadata = value  # type: ignore[misc]  # the base env's own, not its class's

    @property
    def rng(self) -> np.random.Generator:
        """The wrapped env's generator (wrappers have none of their own)."""
        return self.env.rng

    @rng.setter
    def rng(self, value: np.random.Generator) -> None:
        self.env.rng = value

    @property
    def _rng_seed(self) -> int | None:
        return self.env._rng_seed

    @_rng_seed.setter
    def _rng_seed(self, value: int | None) -> None:
        self.env._rng_seed = value

    def _set_rng(self, seed: SeedLike) -> int:
        return self.env._set_rng(seed)

    # -- attributes through the stack --------------------------------------------------------

    def has_attr(self, name: str) -> bool:
        """Whether this layer or any layer below has attribute ``name``."""
        return hasattr(self, name) or self.env.has_attr(name)

    def get_attr(self, name: str) -> Any:
        """Read ``name`` from this layer if it has it, else from the layers below."""
        if hasattr(self, name):
            return getattr(self, name)
        return self.env.get_attr(name)

    def set_attr(self, name: str, value: Any) -> None:
        """Set ``name`` on the outermost layer that has it (this wrapper if none does)."""
        layer = attribute_layer(self, name)
        if isinstance(layer, Wrapper):
            setattr(layer, name, value)
        else:  # the base env's own hooks: a bridge (from_gymnasium) reaches the env it wraps
            layer.set_attr(name, value)

    # Hidden from type checkers, which would take every unknown attribute of a wrapper (a typo,
    # an attribute of the env below) as Any.
    if not TYPE_CHECKING:

        def __getattr__(self, name: str) -> Any:
            # Only called when normal lookup fails. Attributes are not forwarded through
            # wrappers (use get_attr), except action_mask(), which every wrapper forwards when
            # a layer below defines it.
            env = self.__dict__.get("env")
            if env is None and not name.startswith("__"):  # not a protocol probe (pickle's)
                cls = type(self).__name__
                raise AttributeError(
                    f"{cls!r} object has no attribute {name!r}: call super().__init__(env) in "
                    f"{cls}.__init__ (it stores the env this wrapper delegates to)."
                )
            if name == "action_mask" and env is not None and env.has_attr("action_mask"):
                return env.get_attr("action_mask")
            raise missing_attribute(self, name)

    def __iter__(self) -> Iterator[Env[Any, Any]]:
        yield self
        yield from self.env

    def __str__(self) -> str:
        return f"<{type(self).__name__}({self.env})>"


def attribute_layer(env: Env[Any, Any], name: str) -> Env[Any, Any]:
    """The layer of ``env``'s stack whose ``name`` ``set_attr`` changes: the outermost wrapper
    that has it, else the base env when it has it (through its own ``has_attr``), else ``env``."""
    for layer in env:
        if hasattr(layer, name) if isinstance(layer, Wrapper) else layer.has_attr(name):
            return layer
    return env


class ResultWrapper(Wrapper[WrapperObsT, WrapperActT, ObsT, ActT]):
    """A wrapper that works through hooks, called the same way on the sync and the async paths.

    Override these (each a no-op or identity by default) instead of the four reset/step
    methods, so that a stateful wrapper cannot implement one path and forget the other:

    - ``_on_reset(seed)``: after the inner env's reset succeeded (so a reset that raises leaves
      the episode as it was), with the ``seed`` it was given; restarts per-episode state.
    - ``_reset_result(result)``: the reset's result as this wrapper returns it.
    - ``_step_action(action)``: the action passed to the inner env's step.
    - ``_step_result(result)``: the step's result as this wrapper returns it.
    """

    def _on_reset(self, seed: SeedLike) -> None:
        pass

    def _reset_result(self, result: ResetResult[Any]) -> ResetResult[WrapperObsT]:
        return result

    def _step_action(self, action: WrapperActT) -> Any:
        return action

    def _step_result(self, result: StepResult[Any]) -> StepResult[WrapperObsT]:
        return result

    @passes_inward
    def reset(
        self,
        *,
        seed: SeedLike = None,
        options: dict[str, Any] | None = None,
    ) -> ResetResult[WrapperObsT]:
        result = self.env.reset(seed=seed, options=options)
        self._on_reset(seed)
        return self._reset_result(result)

    @passes_inward
    def step(self, action: WrapperActT) -> StepResult[WrapperObsT]:
        # The identity hook is not called: a wrapper that keeps it (TimeLimit, the one make()
        # adds) saves a call on every step. Any other hook, one its class overrides or one set
        # on the instance, is called, as async_step calls it. (Testing the instance's __dict__
        # instead would cost every later attribute access of the wrapper more.)
        hook = self._step_action
        sent: Any = action if getattr(hook, "__func__", None) is _same_action else hook(action)
        return self._step_result(self.env.step(sent))

    async def async_reset(
        self,
        *,
        seed: SeedLike = None,
        options: dict[str, Any] | None = None,
    ) -> ResetResult[WrapperObsT]:
        reset = self.env.async_reset(seed=seed, options=options)
        result = await awaitable(reset, self.env, "async_reset")
        self._on_reset(seed)
        return self._reset_result(result)

    async def async_step(self, action: WrapperActT) -> StepResult[WrapperObsT]:
        step = self.env.async_step(self._step_action(action))
        return self._step_result(await awaitable(step, self.env, "async_step"))


_same_action = ResultWrapper._step_action  # the identity hook, which ResultWrapper.step skips


class ObservationWrapper(ResultWrapper[WrapperObsT, ActT, ObsT, ActT]):
    """Transforms every observation (reset and step, sync and async) with ``observation()``."""

    @abc.abstractmethod
    def observation(self, observation: ObsT) -> WrapperObsT:
        """Return the transformed observation."""

    def _reset_result(self, result: ResetResult[ObsT]) -> ResetResult[WrapperObsT]:
        return ResetResult(self.observation(result.observation), result.info)

    def _step_result(self, result: StepResult[ObsT]) -> StepResult[WrapperObsT]:
        return StepResult(
            self.observation(result.observation),
            result.reward,
            result.terminated,
            result.truncated,
            result.info,
        )


class RewardWrapper(ResultWrapper[ObsT, ActT, ObsT, ActT]):
    """Transforms every reward with ``reward()`` (step paths only)."""

    @abc.abstractmethod
    def reward(self, reward: float) -> float:
        """Return the transformed reward."""

    def _step_result(self, result: StepResult[ObsT]) -> StepResult[ObsT]:
        return StepResult(
            result.observation,
            self.reward(result.reward),
            result.terminated,
            result.truncated,
            result.info,
        )


class ActionWrapper(ResultWrapper[ObsT, WrapperActT, ObsT, ActT]):
    """Maps every action with ``action()`` before passing it to the inner env."""

    @abc.abstractmethod
    def action(self, action: WrapperActT) -> ActT:
        """Return the action to send to the inner env."""

    def reverse_action(self, action: ActT) -> WrapperActT:
        """Map an inner-env action back to this wrapper's action space."""
        raise NotImplementedError(_NO_REVERSE_ACTION.format(cls=type(self).__name__))

    def _step_action(self, action: WrapperActT) -> ActT:
        return self.action(action)
