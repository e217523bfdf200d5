"""InProcessVecEnv: the common base of the backends whose sub-envs live in this process."""

from __future__ import annotations

import contextlib
import inspect
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from sekai._args import check_ordered, type_name
from sekai.core._not_an_env import given, not_an_env_hint
from sekai.core._snapshot import snapshot, snapshot_infos
from sekai.core.env import Env
from sekai.spaces import Space
from sekai.vector._attributes import SubEnvAttributes
from sekai.vector._contract.batching import batch_copies
from sekai.vector._contract.checks import ResultCheck, checked_steps
from sekai.vector._contract.partial import Stepped
from sekai.vector._contract.seeding import options_entry_noted
from sekai.vector._contract.subenv import CHECKED_NAMES, SubEnv, call_each
from sekai.vector.result import VecResetResult, VecStepResult

__all__ = [
    "InProcessVecEnv",
    "build_envs",
    "check_same_spaces",
    "close_quietly",
    "env_factories",
    "same_spaces",
]


def close_quietly(envs: Iterable[Env[Any, Any]]) -> None:
    """Close every env, ignoring their errors (another error is being reported)."""
    for env in envs:
        with contextlib.suppress(Exception):  # the construction error is the one to report
            env.close()


def _same_space(a: Space[Any], b: Space[Any]) -> bool:
    if type(a) is not type(b):
        return False
    if type(a).__eq__ is object.__eq__:  # custom space without value equality: trust it
        return True
    return bool(a == b)


def same_spaces(
    spaces: tuple[Space[Any], Space[Any]], other: tuple[Space[Any], Space[Any]]
) -> bool:
    """Whether two (observation, action) space pairs are the same, as ``check_same_spaces``
    compares them."""
    return all(_same_space(a, b) for a, b in zip(spaces, other))


def env_factories(env_fns: Iterable[Callable[[], Env[Any, Any]]], owner: str) -> list[Any]:
    """The list of factories, checked before any is called.

    Raises:
        TypeError: ``env_fns`` is not a list of callables (a set: sub-env ``i`` would be
            whichever factory came ``i``-th).
        ValueError: no factories.
    """
    check_ordered(owner, "env_fns", env_fns)
    if isinstance(env_fns, (str, bytes)) or not isinstance(env_fns, Iterable):
        raise TypeError(
            f"{owner} expects a list of zero-argument callables that build the sub-envs, "
            f"got {type(env_fns).__name__}."
        )
    fns = list(env_fns)
    if not fns:
        raise ValueError(f"{owner} needs at least one env factory, got an empty list.")
    for index, fn in enumerate(fns):
        if not callable(fn):
            raise TypeError(
                f"{owner}: env_fns[{index}] must be a zero-argument callable that builds a "
                f"sub-env, got {type(fn).__name__}. Pass e.g. lambda: sekai.make(...)."
            )
    return fns


def check_same_spaces(
    owner: str,
    index: int,
    spaces: tuple[Space[Any], Space[Any]],
    first: tuple[Space[Any], Space[Any]],
    first_index: int = 0,
) -> None:
    """Sub-env ``index``'s (observation, action) spaces must equal sub-env ``first_index``'s.

    Raises:
        ValueError: naming the space that differs.
    """
    for what, mine, theirs in zip(("observation_space", "action_space"), spaces, first):
        if not _same_space(mine, theirs):
            raise ValueError(
                f"{owner}: sub-env {index} has {what} {mine!r}, but sub-env {first_index} has "
                f"{theirs!r}; every sub-env must have the same spaces."
            )


def build_envs(
    env_fns: Iterable[Callable[[], Env[Any, Any]]],
    owner: str,
    *,
    first_index: int = 0,
    built: Sequence[Env[Any, Any]] = (),
) -> list[Env[Any, Any]]:
    """Call every factory; if one fails, close the envs already built and re-raise.

    Args:
        env_fns: the factories.
        owner: the VecEnv class name, for messages.
        first_index: the sub-env index of ``env_fns[0]`` (a ProcVecEnv worker builds a slice).
        built: the sub-envs built before ``env_fns[0]`` (those of the slice before it), which
            the new ones must not be.

    Raises:
        TypeError: ``env_fns`` is not a list of callables, or a factory returned a non-Env.
        ValueError: no factories, two factories that returned the same env object (or envs
            with the same ``unwrapped`` env), or sub-envs whose spaces differ from the first
            one's.
    """
    fns = env_factories(env_fns, owner)
    envs: list[Env[Any, Any]] = []
    # Which sub-env each base env object (env.unwrapped) is under, to refuse one returned twice
    # (`lambda: env`), also behind wrappers (`lambda: Wrapper(env)`, `env` and `env.unwrapped`).
    seen = {
        id(env.unwrapped): (index, env) for index, env in enumerate(built, first_index - len(built))
    }
    try:
        for index, fn in enumerate(fns, first_index):
            env = fn()
            if inspect.iscoroutine(env):
                env.close()  # never awaited: close it so that Python does not warn about it
                raise TypeError(
                    f"{owner}: env_fns[{index}] is an async function; env factories must be "
                    "plain functions returning a sekai.Env (do async set-up in the env's "
                    "async_reset())."
                )
            if not isinstance(env, Env):
                raise TypeError(
                    f"{owner}: env_fns[{index}]() returned {given(env)}, not a "
                    "sekai.Env. "
                    + not_an_env_hint(
                        env,
                        "To use a gymnasium env, convert it with sekai.compat.from_gymnasium(env).",
                    )
                )
            base = env.unwrapped
            if id(base) in seen:
                other, before = seen[id(base)]
                what = (
                    f"the same env object ({type_name(env)})"
                    if before is env
                    else f"envs on the same base env object ({type_name(base)}, their .unwrapped)"
                )
                raise ValueError(
                    f"{owner}: env_fns[{other}]() and env_fns[{index}]() returned {what}; "
                    "each factory must build a new env (e.g. lambda: sekai.make(env_id), not "
                    "lambda: env returning one env built beforehand, or a wrapper of it)."
                )
            seen[id(base)] = (index, env)
            envs.append(env)
            first = envs[0]
            check_same_spaces(
                owner,
                index,
                (env.observation_space, env.action_space),
                (first.observation_space, first.action_space),
                first_index,
            )
    except BaseException:
        close_quietly(envs)
        raise
    return envs


class InProcessVecEnv(SubEnvAttributes):
    """Sub-envs held in this process, each driven by a ``SubEnv`` (autoreset, freezing).

    Holds what SyncVecEnv and AsyncVecEnv share: construction with cleanup, ``envs``,
    ``get_attr`` / ``set_attr`` / ``call`` through each sub-env's wrapper stack, ``close``, and
    the batching of the results: nothing handed out is the env's own object (core.md §14 rule
    4), as a ProcVecEnv's pickled results are not. Infos are ``snapshot_infos`` copies, and the
    observations of a space whose batch would hold them as they are (a Sequence's) are copied.
    """

    def __init__(
        self, env_fns: Iterable[Callable[[], Env[Any, Any]]], *, autoreset: bool = True
    ) -> None:
        envs = build_envs(env_fns, type(self).__name__)
        try:
            super().__init__(
                len(envs), envs[0].observation_space, envs[0].action_space, autoreset=autoreset
            )
            # The sub-envs whose step built an autoreset result, until the step's batch.
            self._built: list[int] = []
            self._subenvs = [
                SubEnv(env, self.autoreset, i, self._built) for i, env in enumerate(envs)
            ]
        except BaseException:
            close_quietly(envs)
            raise
        self._set_self_resetting([sub.resets_itself for sub in self._subenvs])
        self.metadata = envs[0].metadata
        self._copy_items = not batch_copies(self.observation_space)

    @property
    def envs(self) -> list[Env[Any, Any]]:
        """The sub-env objects (a new list; the sub-envs themselves are live)."""
        return [sub.env for sub in self._subenvs]

    def _each(
        self, env_ids: Sequence[int] | None, fn: Callable[[SubEnv, Any], Any], args: Any = None
    ) -> list[Any]:
        """``fn(sub, arg)`` on the sub-envs ``env_ids`` (None: every one), with ``args`` one per
        sub-env (None: no argument); after all ran, the lowest sub-env's error (rule 9)."""
        self._check_open()
        if env_ids is None:
            subs, ranks = self._subenvs, None
        else:
            ranks = self._env_id_list(env_ids)
            subs = [self._subenvs[i] for i in ranks]
        return call_each(fn, subs, subs if args is None else args, ranks)

    def _get_attr_at(self, env_ids: Sequence[int] | None, name: str) -> list[Any]:
        return self._each(env_ids, lambda sub, _: sub.get_attr(name))

    def _set_attr_at(self, env_ids: Sequence[int] | None, name: str, values: list[Any]) -> None:
        if name in CHECKED_NAMES:  # every value checked before any sub-env changes
            self._each(env_ids, lambda sub, value: sub.check_set(name, value), values)
        self._each(env_ids, lambda sub, value: sub.set_attr(name, value), values)

    def _call_at(
        self,
        env_ids: Sequence[int] | None,
        name: str,
        args: tuple[Any, ...],
        kwargs: dict[str, Any],
    ) -> list[Any]:
        return self._each(env_ids, lambda sub, _: sub.call(name, args, kwargs))

    def _reset_from(self, results: list[Any], options: Any) -> VecResetResult[Any]:
        """The batched reset result of every sub-env's ResetResult (or the first error, noting
        the entry of a list of ``options`` it was reset with)."""
        for index, result in enumerate(results):
            if isinstance(result, BaseException):
                raise options_entry_noted(result, options, index)
        try:
            observations = self._own_stack([r.observation for r in results])
        except ValueError:  # a misfit: name the method that returned it, as a worker does
            for index, result in enumerate(results):
                ResultCheck(self.observation_space, index).observation(result.observation, "reset")
            raise
        self._reset_done()
        # Copies: an env that reuses one info dict must not share it between sub-envs or steps.
        return VecResetResult(observations, snapshot_infos(results))

    def _own_stack(self, observations: list[Any]) -> Any:
        """The batch of ``observations``, sharing no array with the sub-envs: a batch that
        would hold the observations themselves (a Sequence's) gets ``snapshot`` copies."""
        if self._copy_items:
            observations = [snapshot(observation) for observation in observations]
        return self._observation_tools().stack(observations)

    def _step_from(self, results: list[Any], failed: bool) -> VecStepResult[Any]:
        """The batched step result of every sub-env's StepResult.

        With ``failed``, some entries are exceptions. Then, or when a result does not fit the
        batch (its observation, reward or a flag), each result is checked as a worker checks it
        (``checked_steps``): a misfit is its sub-env's error, the steps of the others are
        recorded, and the first (lowest index) error is raised (rule 9), as on every backend.
        """
        error: BaseException | None = None
        built = self._built
        if built:  # the infos of the step's autoresets, sekai's own: handed on as they are
            built = built.copy()
            self._built.clear()
        if not failed:
            try:
                return self._step_result(
                    self._own_stack([r.observation for r in results]),
                    [r.reward for r in results],
                    [r.terminated for r in results],
                    [r.truncated for r in results],
                    snapshot_infos(results, built),
                )
            except Exception as exc:  # raised below, unless a sub-env's misfit explains it
                error = exc
        results = checked_steps(self.observation_space, results)
        stepped = [
            (index, result.reward, result.terminated, result.truncated)
            for index, result in enumerate(results)
            if not isinstance(result, BaseException)
        ]
        error = next((r for r in results if isinstance(r, BaseException)), error)
        assert error is not None  # failed: some result is an exception
        raise self._failed_step(error, stepped, lambda index: results[index].info)

    def _failed_step(
        self,
        error: BaseException,
        stepped: Iterable[Stepped],
        info: Callable[[int], Mapping[str, Any]] | None = None,
    ) -> BaseException:
        # A step interrupted before its batch (Ctrl-C, a cancelled async_step) must not leave
        # its autoresets listed: the next step would hand those sub-envs' infos on uncopied.
        self._built.clear()
        return super()._failed_step(error, stepped, info)

    def _close(self) -> None:
        call_each(lambda sub, _: sub.close(), self._subenvs, [None] * self.num_envs)
