"""check_kernel_vec_env: the contract checks of a kernel mode (``sekai check --mode jax ID``),
and of a native vector env (``sekai.testing.assert_env_conforms``).

``KStepKernel`` counts steps, so that ``kstep_autoreset_issue`` knows every result of a mode
driving it: the exact same-step autoreset check of ``check_kernel_vec_env`` and of
``sekai.testing.kernel_modes.MODE_CHECKS``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from sekai.error import InvalidAction
from sekai.spaces import Box, Discrete, MultiBinary, MultiDiscrete, Space
from sekai.vector.kernel import ArrayKernel, KernelReset, KernelStep
from sekai.vector.kernel_backend import NumpyBackend
from sekai.vector.kernel_outputs import has_dtype, has_keys, has_shape
from sekai.vector.kernel_step import convert_params, draw_all, tree_map
from sekai.vector.kernel_vec_env import KernelVecEnv
from sekai.vector.vec_env import VecEnv

__all__ = ["KStepKernel", "KStepParams", "check_kernel_vec_env", "kstep_autoreset_issue"]

#: The episode lengths of the sub-envs of the exact autoreset check, and its steps.
_KSTEP_KS = (1, 2, 3, 5)
_KSTEP_STEPS = 31


def _host(vec: VecEnv, value: Any) -> Any:
    to_numpy = vec.backend.to_numpy if isinstance(vec, KernelVecEnv) else np.asarray
    return tree_map(lambda x: np.asarray(to_numpy(x)), value)


_SPACES = "the space's is"


def _shape_issues(space: Any, batch: Any, what: str) -> list[str]:
    """ERRORs for a host batch whose structure, shapes or dtypes differ from ``space``'s."""
    try:
        sample = space.sample()
    except Exception as exc:  # a space that cannot sample: nothing to compare with
        return [f"WARNING: {what}: cannot sample {space!r} to compare ({exc})."]
    issues: list[str] = []

    def compare(want: Any, got: Any) -> None:
        want, got = np.asarray(want), np.asarray(got)
        if got.shape != want.shape:
            issues.append(f"ERROR: {has_shape(what, got.shape, want.shape, _SPACES)}.")
        elif got.dtype.kind != want.dtype.kind or got.dtype.itemsize > want.dtype.itemsize:
            # a narrower dtype of the same kind is the documented 32-bit mode (JAX without x64)
            issues.append(f"ERROR: {has_dtype(what, got.dtype, want.dtype, _SPACES)}.")

    try:
        tree_map(compare, sample, batch)
    except (KeyError, TypeError, ValueError) as exc:
        issues.append(f"ERROR: {what} is not structured like {space!r} ({exc}).")
    return issues


def _outside_issues(space: Any, batch: Any, n: int, where: str) -> list[str]:
    """An ERROR for the first sub-env whose observation in a host batch is outside ``space``
    (check_env's rule: an observation outside the space is an ERROR)."""
    for i in range(n):
        if not space.contains(tree_map(lambda x, i=i: x[i], batch)):
            return [f"ERROR: {where}: sub-env {i}'s observation is outside the observation space."]
    return []


def _flag_issues(name: str, value: np.ndarray, n: int, dtype: np.dtype[Any] | None) -> list[str]:
    """ERRORs for host ``value`` (rewards, a flag) of a shape other than ``(n,)`` or a dtype
    other than ``dtype`` (None: any float dtype, a native env's rewards)."""
    what = f"step() {name}"
    if value.shape != (n,):
        return [f"ERROR: {has_shape(what, value.shape, (n,), 'expected')}."]
    if dtype is None and value.dtype.kind != "f":
        return [f"ERROR: {has_dtype(what, value.dtype, 'a float dtype')}."]
    if dtype is not None and value.dtype != dtype:
        mode = " (the mode's float dtype)" if dtype.kind == "f" else ""
        return [f"ERROR: {has_dtype(what, value.dtype, dtype)}{mode}."]
    return []


def _float_dtype(vec: VecEnv) -> np.dtype[Any] | None:
    """The dtype of a kernel mode's rewards and of its state's floats, as host arrays (its
    backend's float dtype); None (any float dtype) for another vector env."""
    if not isinstance(vec, KernelVecEnv):
        return None
    return np.dtype(vec.backend.to_numpy(vec.backend.convert(np.zeros(1))).dtype)


def _state_dtype_issues(vec: VecEnv, floats: np.dtype[Any] | None, what: str) -> list[str]:
    """ERRORs for float arrays of a kernel mode's state in another dtype than the mode's (a
    hard-coded float dtype: the kernel's rule), which changes the state's dtype from step to
    step under ``torch.compile`` and CUDA graphs."""
    if floats is None or not isinstance(vec, KernelVecEnv) or vec.state is None:
        return []
    for key, value in vec.state.items():
        dtype = np.dtype(_host(vec, value).dtype)
        if dtype.kind == "f" and dtype != floats:
            return [
                f"ERROR: {has_dtype(f'{what} state[{key!r}]', dtype, floats)} (the mode's "
                "float dtype: a kernel follows the dtype of its params' and draws' arrays)."
            ]
    return []


def _sampler(vec: VecEnv, seed: int) -> Callable[[], Any]:
    """Seeded random batches of actions; with an ``action_mask()`` (a native env's gives one
    row per sub-env), each row respects its sub-env's mask, as check_env's actions do."""
    if callable(getattr(vec, "action_mask", None)):
        space = vec.action_space
        space.seed(seed)
        return lambda: np.stack(
            [np.asarray(space.sample(mask=mask)) for mask in vec.call("action_mask")]
        )
    batch = vec.batch_action_space
    batch.seed(seed)
    return batch.sample


def _rollout(
    make: Callable[[], VecEnv],
    n_steps: int,
    seed: int,
    issues: list[str] | None,
    make_frozen: Callable[[], VecEnv] | None = None,
) -> list[Any]:
    """Run one seeded rollout of random actions; append contract issues when asked."""
    vec = make()
    n = vec.num_envs
    try:
        if issues is not None and isinstance(vec, KernelVecEnv):
            found = _reference_issues(vec, n_steps, seed)
            if found:  # the kernel breaks a rule that the mode may not see: fix it first
                issues += found
                return []
        try:
            first = vec.reset(seed=seed)
        except Exception as exc:  # the check reports what fails, as check_env does
            if issues is None:
                raise
            issues.append(f"ERROR: reset(seed={seed}) raised {type(exc).__name__}: {exc}")
            return []
        observations = [_host(vec, first.observations)]
        floats = _float_dtype(vec)
        if issues is not None:
            found = _shape_issues(vec.batch_observation_space, observations[0], "reset() obs")
            if not found:
                found = _outside_issues(vec.observation_space, observations[0], n, "reset()")
            issues += found or _state_dtype_issues(vec, floats, "reset()")
        sample = _sampler(vec, seed)
        finished = 0
        for index in range(n_steps):
            try:
                out = vec.step(sample())
            except Exception as exc:
                if issues is None:
                    raise
                issues.append(f"ERROR: step {index} raised {type(exc).__name__}: {exc}")
                break
            obs = _host(vec, out.observations)
            observations.append(obs)
            if issues is None:
                continue
            rewards, terminated, truncated = (
                _host(vec, x) for x in (out.rewards, out.terminated, out.truncated)
            )
            found = _shape_issues(vec.batch_observation_space, obs, f"step {index} obs")
            found += _flag_issues("rewards", rewards, n, floats)
            found += _flag_issues("terminated", terminated, n, np.dtype(bool))
            found += _flag_issues("truncated", truncated, n, np.dtype(bool))
            found += _state_dtype_issues(vec, floats, f"step {index}")
            if not found:
                found += _outside_issues(vec.observation_space, obs, n, f"step {index}")
            if not found and vec.autoreset:
                for i in np.flatnonzero(terminated | truncated).tolist():
                    finished += 1
                    info = out.infos[i]
                    missing = {"final_observation", "final_info", "reset_info"} - set(info)
                    if missing:
                        found.append(
                            f"ERROR: step {index}: sub-env {i} ended its episode but its info "
                            f"lacks {sorted(missing)} (same-step autoreset)."
                        )
                    elif not vec.observation_space.contains(info["final_observation"]):
                        found.append(
                            f"ERROR: step {index}: sub-env {i}'s final_observation is "
                            "outside the observation space."
                        )
            if found:
                issues += found
                break
        errors = issues is not None and any(issue.startswith("ERROR") for issue in issues)
        if issues is not None and not errors and not finished and vec.autoreset:
            issues.append(
                f"WARNING: no episode ended in {n_steps} steps: autoreset was not checked "
                "(pass more steps)."
            )
        if issues is not None and not errors:
            issues += _action_check_issues(vec, sample)
            if make_frozen is None and isinstance(vec, KernelVecEnv):
                make_frozen = _frozen_kernel_maker(vec)
            if make_frozen is not None and vec.autoreset:
                issues += _frozen_issues(make_frozen, n_steps, seed)
            if isinstance(vec, KernelVecEnv):
                issues += _kstep_issues(vec)
                issues += _mask_issues(vec, seed)
        return observations
    finally:
        vec.close()


def _reference_issues(vec: KernelVecEnv, n_steps: int, seed: int) -> list[str]:
    """An ERROR when ``vec``'s kernel fails on the numpy reference driver, in a rollout like
    the check's: its read-only arrays catch in-place updates, which the JAX and torch modes run
    on with wrong data (a held observation or final_observation changed). None for a mode on
    numpy, whose own rollout is that."""
    if isinstance(vec.backend, NumpyBackend):
        return []
    floats = _float_dtype(vec)
    dtype = floats if floats is not None and floats.itemsize in (4, 8) else np.dtype(np.float32)
    what = f"the numpy reference driver (KernelVecEnv, {dtype})"
    try:
        reference = KernelVecEnv(
            vec.kernel,
            vec.num_envs,
            backend=NumpyBackend(dtype),
            autoreset=vec.autoreset,
            max_episode_steps=vec._max_episode_steps,
        )
        try:
            reference.reset(seed=seed)
            sample = _sampler(reference, seed)
            for _ in range(n_steps):
                reference.step(sample())
        finally:
            reference.close()
    except Exception as exc:  # reported, as check_env reports what fails
        return [f"ERROR: {what}: {type(exc).__name__}: {exc}"]
    return []


def _invalid_value(space: Space[Any]) -> Any:
    """An action outside an array space (None for a space without one: an int Box...)."""
    if isinstance(space, Discrete):
        return np.asarray(space.start + space.n, dtype=space.dtype)
    if isinstance(space, MultiDiscrete):
        return np.asarray(space.start + space.nvec, dtype=space.dtype)
    if isinstance(space, MultiBinary):
        return np.full(space.shape, 2, dtype=np.int8)
    if isinstance(space, Box) and np.dtype(space.dtype).kind == "f":
        return np.full(space.shape, np.nan, dtype=space.dtype)
    return None


def _action_check_issues(vec: VecEnv, sample: Callable[[], Any]) -> list[str]:
    """ERRORs for a mode that takes a batch of the wrong shape, or an invalid action (in the
    last sub-env) from the host or as the mode's own array, without the native envs' errors."""
    space, n = vec.action_space, vec.num_envs
    bad = _invalid_value(space)
    if bad is None:
        return []
    valid = np.asarray(sample())
    batch = valid.copy()
    batch[n - 1] = bad
    tries: list[tuple[str, Any, type[Exception]]] = [
        ("a batch of the wrong shape", valid[:-1] if n > 1 else valid[None], ValueError),
        ("an invalid action of the last sub-env", batch, InvalidAction),
    ]
    if isinstance(vec, KernelVecEnv):
        tries.append(
            (
                "an invalid action of the last sub-env on the device",
                vec.backend.actions(batch),
                InvalidAction,
            )
        )
    found: list[str] = []
    for what, actions, expected in tries:
        try:
            vec.step(actions)
        except expected as exc:
            if isinstance(exc, InvalidAction) and exc.index != n - 1:
                found.append(f"ERROR: step() with {what} named sub-env {exc.index}, not {n - 1}.")
            continue
        except Exception as exc:  # reported, as check_env reports what fails
            found.append(
                f"ERROR: step() with {what} raised {type(exc).__name__}: {exc} "
                f"(expected {expected.__name__})."
            )
            continue
        found.append(f"ERROR: step() took {what} (expected {expected.__name__}).")
    return found


def _in_mode_of(
    vec: KernelVecEnv,
    kernel: ArrayKernel[Any],
    num_envs: int,
    max_episode_steps: int | None,
    **kwargs: Any,
) -> KernelVecEnv:
    """``kernel`` driven by ``vec``'s own mode (its class, as make_vec builds it)."""
    if type(vec) is KernelVecEnv:  # the base class takes its backend; a mode builds its own
        kwargs["backend"] = vec.backend
    return type(vec).from_kernel(kernel, num_envs, max_episode_steps, kwargs)


def _frozen_kernel_maker(vec: KernelVecEnv) -> Callable[[], VecEnv]:
    """Builds ``vec``'s kernel in ``vec``'s own mode with ``autoreset=False``: a mode's own
    ``step()`` is what must freeze."""
    return lambda: _in_mode_of(
        vec, vec.kernel, vec.num_envs, vec._max_episode_steps, autoreset=False
    )


def _kstep_issues(vec: KernelVecEnv) -> list[str]:
    """An ERROR when ``vec``'s mode, driving ``KStepKernel``, gets one result of same-step
    autoreset wrong (the env's own kernel cannot tell: its results are not known)."""
    what = f"autoreset of KStepKernel({list(_KSTEP_KS)}) in this mode"
    try:
        counter = _in_mode_of(vec, KStepKernel(_KSTEP_KS), len(_KSTEP_KS), None, autoreset=True)
        try:
            issue = kstep_autoreset_issue(counter, _KSTEP_KS, _KSTEP_STEPS)
        finally:
            counter.close()
    except Exception as exc:  # reported, as check_env reports what fails
        return [f"ERROR: {what}: {type(exc).__name__}: {exc}"]
    return [] if issue is None else [f"ERROR: {what}: {issue}."]


#: Steps taken before the partial reset of the mask check (some sub-envs then differ).
_MASK_STEPS = 3


def _mask_issues(vec: KernelVecEnv, seed: int) -> list[str]:
    """An ERROR when ``vec``'s kernel, called by the check with a partial ``mask`` after a few
    steps in ``vec``'s mode, changes the state of a sub-env where ``mask`` is false: the kernel
    contract resets only the masked ones. (Their observations are not compared: the driver
    keeps the step's, and a kernel may not rebuild one from the state, e.g. the last action.)"""
    what = "reset(mask=...) of the kernel"
    n = max(vec.num_envs, 2)  # a partial mask needs two sub-envs
    try:
        env = _in_mode_of(vec, vec.kernel, n, vec._max_episode_steps, autoreset=True)
        try:
            env.reset(seed=seed)
            sample = _sampler(env, seed)
            for _ in range(_MASK_STEPS):
                env.step(sample())
            return _partial_reset_issues(env, seed, what)
        finally:
            env.close()
    except Exception as exc:  # reported, as check_env reports what fails
        return [f"ERROR: {what}: {type(exc).__name__}: {exc}"]


def _partial_reset_issues(env: KernelVecEnv, seed: int, what: str) -> list[str]:
    """Call ``env``'s kernel with every other sub-env masked, on ``env``'s state, and compare
    the state's unmasked rows in the backend's namespace."""
    backend, kernel, n = env.backend, env.kernel, env.num_envs
    xp, state = backend.xp, env.state
    params = convert_params(env.params, backend.convert)
    rng = np.random.default_rng(seed)  # fresh numbers in every row: a kept row must ignore them

    def host_draw(draw: Any, shape: tuple[int, ...]) -> Any:
        fresh = rng.random(shape) if draw.distribution == "uniform" else rng.normal(size=shape)
        return backend.convert(fresh)

    host_mask = np.arange(n) % 2 == 0
    draws = draw_all(kernel.reset_draws(params), n, host_draw)
    mask = backend.convert(host_mask)
    new_state, _, _ = backend.call_kernel(kernel.reset, (xp, params, draws, mask, state), True)
    if set(new_state) != set(state):
        keys = has_keys("the state", new_state, "its step's", state)
        return [f"ERROR: {what}: {keys}."]
    for key in state:
        kept = backend.to_numpy(_kept_rows(xp, new_state[key], state[key], n))
        changed = ~kept & ~host_mask
        if changed.any():
            return [
                f"ERROR: {what}: called with mask {host_mask.tolist()}, it changed "
                f"state[{key!r}] of sub-env {int(np.flatnonzero(changed)[0])}, where mask is "
                "false (reset only the masked sub-envs and keep the others: "
                "xp.where(mask, new, state[...]))."
            ]
    return []


def _kept_rows(xp: Any, new: Any, old: Any, n: int) -> Any:
    """``(n,)`` bool of ``xp``: the rows of ``new`` equal to those of ``old`` (NaN included,
    ``new`` in ``old``'s dtype)."""
    if tuple(new.shape) != tuple(old.shape):
        raise ValueError(f"it returned shape {tuple(new.shape)}, the step {tuple(old.shape)}")
    if new.dtype != old.dtype:
        new = xp.astype(new, old.dtype)
    same = new == old
    if xp.isdtype(old.dtype, "real floating"):
        same = same | (xp.isnan(new) & xp.isnan(old))
    return xp.all(xp.reshape(same, (n, -1)), axis=1)


@dataclass(frozen=True)
class KStepParams:
    """``ks``: the episode length of each sub-env (floats, so they follow the mode's dtype)."""

    ks: np.ndarray


class KStepKernel(ArrayKernel[KStepParams]):
    """``sekai.testing.envs.KStepEnv(k) for k in ks`` as an array kernel: run it with
    ``num_envs == len(ks)``.

    Observation ``[episode, t]``, reward ``t``, info ``{"t": t}``, reset info
    ``{"episode": episode}``, as ``KStepEnv``'s (floats of the mode's dtype), so that
    ``kstep_autoreset_issue`` checks a kernel mode's same-step autoreset exactly.
    """

    def __init__(self, ks: Sequence[int]) -> None:
        self.observation_space = Box(0.0, np.inf, shape=(2,))
        self.action_space = Discrete(2)
        self.params = KStepParams(np.asarray(ks, dtype=np.float64))

    def reset(
        self, xp: Any, params: KStepParams, draws: Mapping[str, Any], mask: Any, state: Any
    ) -> KernelReset:
        zero = params.ks * 0.0
        if state is None:
            episode, t = zero, zero
        else:
            episode = xp.where(mask, state["episode"] + 1.0, state["episode"])
            t = xp.where(mask, zero, state["t"])
        return {"episode": episode, "t": t}, xp.stack([episode, t], axis=1), {"episode": episode}

    def step(
        self, xp: Any, params: KStepParams, state: Any, action: Any, draws: Mapping[str, Any]
    ) -> KernelStep:
        episode, t = state["episode"], state["t"] + 1.0
        terminated = t >= params.ks
        obs = xp.stack([episode, t], axis=1)
        truncated = xp.zeros_like(terminated)
        return {"episode": episode, "t": t}, obs, t, terminated, truncated, {"t": t}


def kstep_autoreset_issue(vec: VecEnv, ks: Sequence[int], steps: int) -> str | None:
    """The first result that differs from the expected one, in a vector env of
    ``KStepEnv(k) for k in ks`` (or of ``KStepKernel(ks)``); None when none does.

    Resets with ``seed=0``, then takes ``steps`` steps with action 0 and compares, at every
    step, every sub-env's observation, reward, flags (never truncated) and infos with its
    counter, including the ``final_observation``/``final_info``/``reset_info`` of each
    same-step reset.
    """
    first = _host(vec, vec.reset(seed=0).observations).tolist()
    if first != [[0.0, 0.0]] * len(ks):
        return f"reset(seed=0) returned observations {first}, expected [0.0, 0.0] for each"
    episode = [0] * len(ks)
    t = [0] * len(ks)
    for step in range(steps):
        result = vec.step(np.zeros(len(ks), int))
        observations, rewards, terminated, truncated = (
            _host(vec, x)
            for x in (result.observations, result.rewards, result.terminated, result.truncated)
        )
        for i, k in enumerate(ks):
            where = f"step {step}, sub-env {i} (k={k}, episode {episode[i]})"
            info = result.infos[i]
            t[i] += 1
            ends = t[i] == k
            if rewards[i] != float(t[i]):
                return f"{where}: reward {rewards[i]}, expected {float(t[i])}"
            if bool(terminated[i]) != ends:
                return f"{where}: terminated is {bool(terminated[i])}, expected {ends}"
            if truncated[i]:
                return f"{where}: truncated"
            if ends:
                final = info.get("final_observation")
                if final is None or np.asarray(final).tolist() != [episode[i], k]:
                    return f"{where}: final_observation {final}, expected {[episode[i], k]}"
                if info.get("final_info") != {"t": k} or info.get("t") != k:
                    return f"{where}: info {info}, expected final_info {{'t': {k}}} and t {k}"
                if info.get("reset_info") != {"episode": episode[i] + 1}:
                    return (
                        f"{where}: info {info}, expected reset_info {{'episode': {episode[i] + 1}}}"
                    )
                episode[i] += 1
                t[i] = 0
            elif info != {"t": t[i]}:
                return f"{where}: info {info}, expected {{'t': {t[i]}}}"
            got = observations[i].tolist()
            if got != [episode[i], t[i]]:
                return f"{where}: observation {got}, expected {[episode[i], t[i]]}"
    return None


def _frozen_issues(make_frozen: Callable[[], VecEnv], n_steps: int, seed: int) -> list[str]:
    """ERRORs of a rollout of the env built with ``autoreset=False``: a finished sub-env keeps
    its final observation, earns 0 and stays done, with an empty info."""
    try:
        frozen_vec = make_frozen()
    except Exception as exc:  # reported, as check_env reports what fails
        return [f"ERROR: autoreset=False: building the env raised {type(exc).__name__}: {exc}"]
    try:
        if frozen_vec.autoreset:
            return ["ERROR: autoreset=False: the env was built with autoreset on."]
        frozen_vec.reset(seed=seed)
        sample = _sampler(frozen_vec, seed)
        final: dict[int, Any] = {}  # sub-env -> its final observation
        for index in range(n_steps):
            out = frozen_vec.step(sample())
            obs = _host(frozen_vec, out.observations)
            rewards = _host(frozen_vec, out.rewards)
            done = _host(frozen_vec, out.terminated) | _host(frozen_vec, out.truncated)
            for i, before in final.items():
                row = tree_map(lambda x, i=i: x[i], obs)
                if not (_same(row, before) and rewards[i] == 0 and done[i] and not out.infos[i]):
                    return [
                        f"ERROR: autoreset=False: step {index}: sub-env {i} ended its episode "
                        "but did not freeze (same observation, reward 0, still done, info {})."
                    ]
            for i in np.flatnonzero(done).tolist():
                final.setdefault(i, tree_map(lambda x, i=i: x[i], obs))
        return []
    except Exception as exc:  # reported, as check_env reports what fails
        return [f"ERROR: autoreset=False: {type(exc).__name__}: {exc}"]
    finally:
        frozen_vec.close()


def _same(a: Any, b: Any) -> bool:
    """Whether two host observations (arrays or dicts/tuples of them) are equal, NaN included."""
    same: list[bool] = []
    tree_map(lambda x, y: same.append(np.array_equal(x, y, equal_nan=x.dtype.kind == "f")), a, b)
    return all(same)


def check_kernel_vec_env(
    make: Callable[[], VecEnv],
    *,
    n_steps: int = 200,
    seed: int = 0,
    check_determinism: bool = True,
    make_frozen: Callable[[], VecEnv] | None = None,
) -> list[str]:
    """Check a kernel mode's vector env (or a native one) against the vector contract; return
    the issues found.

    A kernel mode's kernel first runs a rollout on the numpy reference driver, whose read-only
    arrays catch in-place updates (an ERROR, and nothing else is checked). Shapes and dtypes of
    observations (against the batched observation space), rewards and flags (a kernel mode's
    rewards and its state's float arrays in the mode's float dtype, a native env's rewards in
    any float dtype); reset and step observations inside the observation space;
    ``final_observation`` / ``final_info`` / ``reset_info`` in the step that ends an episode
    (same-step autoreset); finished sub-envs freezing with ``autoreset=False``; a kernel
    mode's kernel, reset with a partial mask after a few steps, keeping the state of the
    sub-envs outside it; the native envs' errors for a batch of the wrong shape and for an
    invalid action; with ``check_determinism``, a second rollout with the same seed and
    actions gives the same observations. Random actions respect the env's ``action_mask()``
    when it has one.

    Args:
        make: builds a fresh vector env (called once, twice with ``check_determinism``).
        n_steps: random-action steps per rollout.
        seed: the reset seed and the actions' seed.
        check_determinism: also compare two rollouts.
        make_frozen: builds the same env with ``autoreset=False`` for the freezing check
            (default: a kernel mode's own class with the same kernel; for another env, no
            freezing check without it).

    Returns:
        ``"ERROR: ..."`` and ``"WARNING: ..."`` lines (empty when everything passed).
    """
    issues: list[str] = []
    first = _rollout(make, n_steps, seed, issues, make_frozen)
    if check_determinism and not any(issue.startswith("ERROR") for issue in issues):
        second = _rollout(make, n_steps, seed, None)
        for index, (a, b) in enumerate(zip(first, second)):
            if not _same(a, b):
                issues.append(
                    f"ERROR: two rollouts with seed {seed} and the same actions differ at step "
                    f"{index}: the mode is not deterministic."
                )
                break
    return issues
