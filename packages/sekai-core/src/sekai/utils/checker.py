"""check_env: exercise an environment and report every contract violation it finds."""

from __future__ import annotations

import asyncio
import contextlib
import copy
import inspect
import math
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from sekai._args import IntLike, check_bool, check_int, type_name
from sekai._equal import without_wall_clock
from sekai.core._async import awaitable, refused_by_asyncio_run, shut_down_loop
from sekai.core.env import Env
from sekai.core.result import ResetResult, StepResult
from sekai.spaces import Box, Dict, Sequence, Space, Tuple
from sekai.spaces._explain import short_repr, why_not_in
from sekai.spaces.space import not_a_space
from sekai.utils._check_messages import (
    NONDETERMINISTIC,
    STEP_FIELDS,
    first_difference,
    in_running_loop,
    not_an_env,
)
from sekai.utils._equal import structurally_equal
from sekai.utils.action_mask import flatten_action_mask, get_action_mask, supports_action_mask

__all__ = ["check_env"]

_NOT_SEEDED = (
    "reset(seed=0) returned different observations on two calls. Call self._set_rng(seed) at "
    "the start of reset() and draw all randomness from self.rng; state kept across episodes "
    "(a counter, or a sequential episode sampler that moves on every reset) does the same."
)
_MASK_FORMAT = "action_mask() must return a mask in the format action_space.sample() accepts."


class _Stop(Exception):
    """Ends the remaining checks (an ERROR that leaves nothing meaningful to test)."""


class _InRunningLoop(BaseException):  # not an Exception: no check reports it as the env's
    """Ends the checks: the env's sync ``method()`` cannot run in the event loop running in
    check_env's thread (its ``asyncio.run()`` refused to start)."""

    def __init__(self, method: str) -> None:
        super().__init__(method)
        self.method = method


@dataclass
class _Issue:
    level: str
    text: str
    unit: str = "steps"
    count: int = 1

    def render(self) -> str:
        if self.count > 1:
            return f"{self.level}: {self.text} (seen at {self.count} {self.unit}; first shown)"
        return f"{self.level}: {self.text}"


def _exc(exc: BaseException) -> str:
    return f"{type(exc).__name__}: {exc}"


def _sentence(text: str) -> str:
    return text if text.endswith((".", "!", "?")) else text + "."


def _copy(x: Any) -> Any:
    try:
        return copy.deepcopy(x)
    except Exception:
        return x


def _why_not_in(space: Space[Any], obs: Any) -> str:
    """``"; Observation['a'][3] is 1.5, outside [0.0, 1.0]."``: the first failing part of an
    observation outside ``space``, after the (abridged) observation that may not show it."""
    try:
        found = why_not_in(space, obs)
    except Exception:  # a custom space's reasons may fail where its contains() did not
        return ""
    return "" if found is None else f"; Observation{found[0]} {found[1]}."


def _got(result: Any, call: str) -> str:
    """`` Got tuple.``: what ``call`` returned instead of a result."""
    if not inspect.iscoroutine(result):
        return f" Got {type_name(result)}."
    result.close()  # never to be awaited: no "never awaited" RuntimeWarning later
    if call.startswith("async_"):
        return " Got coroutine."
    return f" Got coroutine: {call} must be a plain def; async code goes in async_{call}."


def _box_leaves(
    space: Space[Any], obs: Any, path: str = "", group: str = ""
) -> list[tuple[str, str, Box, Any]]:
    """(key path, group, Box, value) for every Box leaf of a (possibly nested) observation.

    ``group`` is the path with a Sequence's element indices as ``[*]``: a dtype issue of every
    element of a sequence is one issue, shown at its first element.
    """
    if isinstance(space, Box):
        return [(path, group, space, obs)]
    out: list[tuple[str, str, Box, Any]] = []
    if isinstance(space, Dict) and isinstance(obs, Mapping):
        for key, sub in space.items():
            if key in obs:
                out.extend(_box_leaves(sub, obs[key], f"{path}[{key!r}]", f"{group}[{key!r}]"))
    elif isinstance(space, Tuple) and isinstance(obs, (tuple, list)):
        for i, (sub, item) in enumerate(zip(space.spaces, obs)):
            out.extend(_box_leaves(sub, item, f"{path}[{i}]", f"{group}[{i}]"))
    elif isinstance(space, Sequence) and space.stack:
        # stacked: the leaves are arrays (or dicts/tuples of them) with a leading length axis
        out.extend(_box_leaves(space.feature_space, obs, f"{path}[:]", f"{group}[:]"))
    elif isinstance(space, Sequence) and isinstance(obs, (tuple, list)):
        for i, item in enumerate(obs):
            out.extend(_box_leaves(space.feature_space, item, f"{path}[{i}]", f"{group}[*]"))
    return out


class _Checker:
    def __init__(self, env: Env[Any, Any], n_steps: int) -> None:
        self.env = env
        self.n_steps = n_steps
        self.issues: list[_Issue] = []
        self._grouped: dict[str, _Issue] = {}
        self.obs_space: Space[Any]
        self.act_space: Space[Any]
        self.in_loop = _loop_running()

    # -- reporting -----------------------------------------------------------------------

    def error(self, text: str, key: str | None = None, unit: str = "steps") -> None:
        self._add("ERROR", text, key, unit)

    def warning(self, text: str, key: str | None = None, unit: str = "steps") -> None:
        self._add("WARNING", text, key, unit)

    def _add(self, level: str, text: str, key: str | None, unit: str) -> None:
        if key is not None and key in self._grouped:
            self._grouped[key].count += 1
            return
        issue = _Issue(level, text, unit)
        self.issues.append(issue)
        if key is not None:
            self._grouped[key] = issue

    # -- helpers -------------------------------------------------------------------------

    def contains(
        self, name: str, x: Any, context: str, key: str | None = None, unit: str = "steps"
    ) -> bool:
        """``{name}.contains(x)``; when it raises, an ERROR (the bug is the space's, not the
        value's) naming ``context`` (what ``x`` is), and True, so that ``x`` is not reported
        as outside the space too."""
        space = self.obs_space if name == "observation_space" else self.act_space
        try:
            return bool(space.contains(x))
        except Exception as exc:
            self.error(
                f"{name}.contains() raised {_sentence(_exc(exc))} {context}", key=key, unit=unit
            )
            return True

    def check_obs(self, obs: Any, where: str, key: str, unit: str = "steps") -> None:
        space = self.obs_space
        context = f"Observation from {where}: obs={short_repr(obs)}"
        inside = self.contains("observation_space", obs, context, f"{key}:contains", unit)
        if not inside:
            self.error(
                f"Observation from {where} is not within observation_space. obs={short_repr(obs)}"
                + _why_not_in(space, obs),
                key=f"{key}:space",
                unit=unit,
            )
        seen: set[str] = set()
        for path, group, box, leaf in _box_leaves(space, obs):
            if group in seen:
                continue
            if isinstance(leaf, (np.ndarray, np.generic)) and leaf.dtype != box.dtype:
                seen.add(group)
                self.warning(
                    f"Observation{path} from {where} has dtype {leaf.dtype}, "
                    f"space has {box.dtype}.",
                    key=f"{key}:dtype{group}",
                    unit=unit,
                )

    def _sync(self, method: str, *args: Any, **kwargs: Any) -> Any:
        """``env.<method>(...)`` (``reset``, ``step``); ``_InRunningLoop`` when it cannot run
        because check_env was called inside a running event loop."""
        try:
            return getattr(self.env, method)(*args, **kwargs)
        except RuntimeError as exc:
            if refused_by_asyncio_run(exc) and self.in_loop:
                raise _InRunningLoop(method) from None
            raise

    def sample_action(self, space: Space[Any]) -> Any:
        if supports_action_mask(self.env):
            return space.sample(mask=get_action_mask(self.env))
        return space.sample()

    # -- checks, in order ----------------------------------------------------------------

    def run(self, flags: dict[str, bool]) -> None:
        self.check_spaces()
        self.check_samples(flags["check_action_space"], flags["check_obs_space"])
        first = self.check_first_reset()
        self.check_action_mask()
        self.check_steps(first)
        with _statistics_frozen(self.env):
            if flags["check_reset_seed"]:
                self.check_reset_seed()
            if flags["check_determinism"]:
                self.check_determinism()
        if flags["check_async"]:
            self.check_async()

    def check_spaces(self) -> None:
        missing = False
        for name in ("observation_space", "action_space"):
            try:
                space = getattr(self.env, name)
            except AttributeError:
                self.error(f"{name} is not defined. Set it in __init__.")
                missing = True
                continue
            if not isinstance(space, Space):
                self.error(f"{name} must be a sekai.Space, got {not_a_space(space)}")
                missing = True
                continue
            setattr(self, "obs_space" if name == "observation_space" else "act_space", space)
        if missing:
            raise _Stop

    def check_samples(self, actions: bool, observations: bool) -> None:
        for enabled, name, space in (
            (actions, "action_space", self.act_space),
            (observations, "observation_space", self.obs_space),
        ):
            if not enabled:
                continue
            try:
                sample = space.sample()
            except Exception as exc:
                self.error(f"{name}.sample() raised {_exc(exc)}")
                continue
            if not self.contains(name, sample, f"Its own sample(): {short_repr(sample)}"):
                self.error(
                    f"{name}.sample() returned {short_repr(sample)}, which is not in {name}."
                )

    def check_reset_result(self, result: Any, where: str, key: str) -> None:
        """Check what ``where`` (``reset()``, ``async_reset()``) returned; stop the checks when
        it is not a ResetResult."""
        if not (hasattr(result, "observation") and hasattr(result, "info")):
            self.error(
                f"{where} must return a ResetResult with .observation and .info attributes."
                + _got(result, where)
            )
            raise _Stop
        self.check_result_type(result, ResetResult, where, key, "resets")
        if not isinstance(result.info, dict):
            self.error(
                f"{where} info must be a dict, got {type(result.info).__name__}.",
                key=f"{key}:info",
                unit="resets",
            )
        self.check_obs(result.observation, where, key, unit="resets")

    def check_result_type(self, result: Any, cls: type, call: str, key: str, unit: str) -> None:
        """An ERROR for a result with the right attributes but another type (a StepResult from
        reset(), a named tuple, an object of the env's own): the wrappers read its fields,
        but every VecEnv refuses it. The fields are still checked."""
        if not isinstance(result, cls):
            name = cls.__name__
            self.error(
                f"{call} returned {type_name(result)}, not a sekai.{name}: every VecEnv refuses "
                f"it. Return sekai.{name}(...) instead.",
                key=f"{key}:result-type",
                unit=unit,
            )

    def check_first_reset(self) -> Any:
        try:
            result = self._sync("reset", seed=42)
        except Exception as exc:
            self.error(f"reset() raised {_exc(exc)}")
            raise _Stop from None
        self.check_reset_result(result, "reset()", "reset")
        return result

    def check_action_mask(self) -> None:
        if not supports_action_mask(self.env):
            return
        try:
            mask = get_action_mask(self.env)
        except Exception as exc:
            self.error(f"action_mask() raised {_exc(exc)}")
            raise _Stop from None
        try:
            action = self.act_space.sample(mask=mask)
        except Exception as exc:
            self.error(
                "action_space.sample(mask=env.action_mask()) raised "
                f"{_sentence(_exc(exc))} {_MASK_FORMAT}"
            )
            raise _Stop from None
        context = f"Action from sample(mask=env.action_mask()): {short_repr(action)}"
        if not self.contains("action_space", action, context):
            self.error(
                f"action_space.sample(mask=env.action_mask()) returned {short_repr(action)}, which "
                f"is not in action_space. {_MASK_FORMAT}"
            )
        try:
            flatten_action_mask(self.act_space, mask)
        except Exception as exc:
            self.error(f"flatten_action_mask() rejected the action_mask(): {_sentence(_exc(exc))}")

    def check_steps(self, first: Any) -> None:
        prev, prev_copy = first.observation, _copy(first.observation)
        mutation_seen = overwrite_seen = False
        infinite = taken = 0
        for i in range(self.n_steps):
            try:
                action = self.sample_action(self.act_space)
            except Exception as exc:
                self.error(f"Sampling an action raised {_exc(exc)} at step {i}.")
                break
            try:
                result = self._sync("step", action)
            except Exception as exc:
                self.error(f"step() raised {type(exc).__name__} at step {i}: {exc}")
                break
            taken += 1
            if not mutation_seen and not structurally_equal(prev, prev_copy):
                mutation_seen = True
                self.warning(
                    f"step() modified the previous observation in place (at step {i}). Return a "
                    "new array from every step(): code that keeps observations (replay "
                    "buffers, frame stacks, vector envs) would see them change."
                )
            found = self.check_step_result(result, "step()", i)
            if found is None:
                break
            infinite += found
            obs = result.observation
            try:
                done = bool(result.terminated or result.truncated)
            except Exception as exc:
                self.error(f"terminated/truncated at step {i} are not truth values: {_exc(exc)}")
                break
            if done:
                terminal, terminal_copy = obs, _copy(obs)
                try:
                    reset = self._sync("reset")
                except Exception as exc:
                    self.error(f"reset() raised {_exc(exc)}")
                    raise _Stop from None
                self.check_reset_result(reset, "reset()", "reset")
                if not overwrite_seen and not structurally_equal(terminal, terminal_copy):
                    overwrite_seen = True
                    self.warning(
                        f"reset() after step {i} overwrote the terminal observation in place. "
                        "Return a new array from reset(): the terminal observation is still "
                        "needed (final_observation, bootstrapping)."
                    )
                obs = reset.observation
            prev, prev_copy = obs, _copy(obs)
        if infinite:
            self.warning(f"Encountered {infinite} infinite reward(s) during {taken} steps.")

    def check_step_result(self, result: Any, call: str, i: int | None) -> int | None:
        """Check what ``call`` (``step()``, ``async_step()``) returned at step ``i``: None
        (after an ERROR) when it is not a StepResult, else how many infinite rewards (0 or 1)."""
        missing = [name for name in STEP_FIELDS if not hasattr(result, name)]
        if missing:
            self.error(
                f"{call} must return a StepResult; result has no {', '.join(missing)}."
                + _got(result, call)
            )
            return None
        at = f"at step {i}" if i is not None else f"from {call}"
        key = call.removesuffix("()")
        self.check_result_type(result, StepResult, call, key, "steps")
        self.check_obs(result.observation, f"{call} {at}" if i is not None else call, key)
        infinite = self.check_reward(result.reward, at, key)
        for name in ("terminated", "truncated"):
            flag = getattr(result, name)
            if not isinstance(flag, (bool, np.bool_)):
                self.warning(
                    f"{name} {at} is {type(flag).__name__}, expected bool.",
                    key=f"{key}:{name}:type",
                )
        if not isinstance(result.info, dict):
            self.warning(
                f"info {at} is {type(result.info).__name__}, expected dict.",
                key=f"{key}:info:type",
            )
        return infinite

    def check_reward(self, reward: Any, at: str, key: str) -> int:
        """WARNINGs for a reward that is not a real number, or NaN; 1 if it is infinite."""
        if isinstance(reward, (bool, np.bool_)) or not isinstance(
            reward, (int, float, np.integer, np.floating)
        ):  # np.number would take complex
            self.warning(
                f"reward {at} is {type(reward).__name__}, expected float.",
                key=f"{key}:reward:type",
            )
            return 0
        value = float(reward)
        if math.isnan(value):
            self.warning(f"reward {at} is NaN.", key=f"{key}:reward:nan")
        elif math.isinf(value):
            return 1
        return 0

    def check_reset_seed(self) -> None:
        try:
            first = _copy(self._sync("reset", seed=0).observation)
            second = self._sync("reset", seed=0).observation
        except Exception as exc:
            self.error(f"reset(seed=0) raised {_exc(exc)}")
            return
        if not structurally_equal(first, second):
            self.warning(_NOT_SEEDED)

    def _rollout(self) -> list[Any]:
        space = copy.deepcopy(self.act_space)
        space.seed(123)
        reset = self._sync("reset", seed=123)
        trace: list[Any] = [(_copy(reset.observation), without_wall_clock(_copy(reset.info)))]
        for _ in range(min(self.n_steps, 50)):
            result = self._sync("step", self.sample_action(space))
            flags = (result.reward, result.terminated, result.truncated)
            info = without_wall_clock(_copy(result.info))
            trace.append((_copy(result.observation), *flags, info))
            if result.terminated or result.truncated:
                break
        return trace

    def check_determinism(self) -> None:
        spec = getattr(self.env, "spec", None)
        if getattr(spec, "nondeterministic", False) is True:
            return  # registered as stochastic beyond its seed: what the warning would advise
        try:
            first, second = self._rollout(), self._rollout()
        except Exception as exc:
            self.error(f"The determinism check's rollout raised {_exc(exc)}")
            return
        if not structurally_equal(first, second):
            self.warning(f"{NONDETERMINISTIC} First difference: {first_difference(first, second)}.")

    def check_async(self) -> None:
        if self.in_loop:
            return  # a private loop cannot run inside a running one
        loop = asyncio.new_event_loop()
        try:
            loop.run_until_complete(self._check_async())
        finally:
            shut_down_loop(loop)  # cancels the tasks the env started (a feed's reader) first

    async def _check_async(self) -> None:
        env = self.env
        try:
            result = await awaitable(env.async_reset(seed=7), env, "async_reset")
        except Exception as exc:
            self.error(f"async_reset() raised {_exc(exc)}")
            return
        self.check_reset_result(result, "async_reset()", "async_reset")
        try:
            action = self.sample_action(self.act_space)
        except Exception as exc:  # the space's (or action_mask()'s) failure, not async_step()'s
            self.error(f"Sampling an action for async_step() raised {_exc(exc)}.")
            return
        try:
            step = await awaitable(env.async_step(action), env, "async_step")
        except Exception as exc:
            self.error(f"async_step() raised {_exc(exc)}")
            return
        if self.check_step_result(step, "async_step()", None):
            self.warning("reward from async_step() is infinite.")


def _loop_running() -> bool:
    """Whether an event loop runs in this thread (check_env called from async code)."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return False
    return True


@contextlib.contextmanager
def _statistics_frozen(env: Env[Any, Any]) -> Iterator[None]:
    """The layers of ``env`` with running statistics (NormalizeObservation, NormalizeReward:
    an ``update_running_mean`` switch) frozen, then switched back as they were: their updates
    would make the seeded runs that the checks compare differ."""
    layers = [
        layer for layer in env if isinstance(getattr(layer, "update_running_mean", None), bool)
    ]
    switches = [layer.update_running_mean for layer in layers]  # type: ignore[attr-defined]
    for layer in layers:
        layer.update_running_mean = False  # type: ignore[attr-defined]
    try:
        yield
    finally:
        for layer, switch in zip(layers, switches):
            layer.update_running_mean = switch  # type: ignore[attr-defined]


def check_env(
    env: Env[Any, Any],
    *,
    n_steps: IntLike = 100,
    warn_on_anomaly: bool = True,
    check_obs_space: bool = True,
    check_action_space: bool = True,
    check_reset_seed: bool = True,
    check_determinism: bool = False,
    check_async: bool = True,
) -> list[str]:
    """Check an environment against the sekai Env contract and return the issues found.

    The env is reset and stepped, so pass a fresh one. Failures of the env never raise: they
    become ``"ERROR: ..."`` lines; anomalies become ``"WARNING: ..."`` lines. A problem that
    repeats at every step is reported once, with ``(seen at N steps; first shown)``. Wrappers
    with running statistics (an ``update_running_mean`` switch: NormalizeObservation,
    NormalizeReward) are frozen during the seed and determinism checks, then switched back:
    their updates are not randomness beyond the seed.

    Args:
        env: the environment (or wrapper stack) to check.
        n_steps: how many random steps to take (actions respect ``action_mask()``).
        warn_on_anomaly: keep WARNING lines (False: only ERRORs).
        check_obs_space: check that ``observation_space.sample()`` is in the space.
        check_action_space: check that ``action_space.sample()`` is in the space.
        check_reset_seed: check that ``reset(seed=0)`` twice gives the same observation.
        check_determinism: compare two seeded rollouts with the same actions.
        check_async: run ``async_reset()``/``async_step()`` on a private event loop (skipped
            when called inside a running loop).

    Returns:
        The issues, in check order; ``[]`` when every check passed.

    Raises:
        TypeError: ``env`` is not a sekai.Env, ``n_steps`` is not an int, or an option that
            switches something on or off is not a bool.
        ValueError: ``n_steps`` is below 1.
        RuntimeError: called inside a running event loop (async code, Jupyter), where the
            env's ``reset()`` or ``step()`` cannot run (it calls ``asyncio.run()``): call it
            from sync code, or ``await asyncio.to_thread(sekai.check_env, env)``.
    """
    if not isinstance(env, Env):
        raise TypeError(not_an_env(env))
    steps = check_int("check_env", "n_steps", n_steps, 1)
    warn_on_anomaly = check_bool("check_env", "warn_on_anomaly", warn_on_anomaly)
    flags = {
        name: check_bool("check_env", name, value)
        for name, value in (
            ("check_obs_space", check_obs_space),
            ("check_action_space", check_action_space),
            ("check_reset_seed", check_reset_seed),
            ("check_determinism", check_determinism),
            ("check_async", check_async),
        )
    }
    checker = _Checker(env, steps)
    try:
        checker.run(flags)
    except _Stop:
        pass
    except _InRunningLoop as stop:
        raise RuntimeError(in_running_loop(env, stop.method)) from None
    except Exception as exc:  # the checker must report, never raise, whatever the env does
        checker.error(f"check_env stopped: the environment raised {_exc(exc)}")
    issues = [issue.render() for issue in checker.issues]
    if not warn_on_anomaly:
        issues = [line for line in issues if not line.startswith("WARNING")]
    return issues
