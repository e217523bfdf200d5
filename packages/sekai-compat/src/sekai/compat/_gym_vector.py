"""The vector gymnasium bridges: to_gymnasium_vector and from_gymnasium_vector."""

from __future__ import annotations

import copy
import numbers
from typing import TYPE_CHECKING, Any

import numpy as np
from numpy.typing import NDArray

from sekai._equal import structurally_equal
from sekai.compat._gymnasium import check_sekai_mask
from sekai.compat._optional import require_gymnasium
from sekai.compat._spaces import convert_space, space_from_gymnasium
from sekai.spaces import concatenate, iterate
from sekai.vector.result import VecResetResult, VecStepResult
from sekai.vector.vec_env import VecEnv

if TYPE_CHECKING:
    import gymnasium

    from sekai.compat._sekai_to_gym_vector import SekaiToGymnasiumVector

__all__ = ["GymnasiumVectorToSekai", "from_gymnasium_vector", "to_gymnasium_vector"]

_VECTOR_GYMNASIUM = "1.1"  # AutoresetMode and reset_mask appeared in gymnasium 1.1
_SAME_STEP_HOW = (
    "Build it in same-step mode, e.g. gym.make_vec(id, n, vectorization_mode='sync', "
    "vector_kwargs={'autoreset_mode': gym.vector.AutoresetMode.SAME_STEP})"
)


def to_gymnasium_vector(vec: VecEnv) -> SekaiToGymnasiumVector:
    """Wrap a sekai ``VecEnv`` as a gymnasium ``VectorEnv`` in same-step autoreset mode.

    For CleanRL-style code written against gymnasium's vector API: ``metadata["autoreset_mode"]``
    is ``AutoresetMode.SAME_STEP`` and infos are gymnasium's dict of arrays with ``_key`` masks,
    the terminal observation and info under ``"final_obs"`` / ``"final_info"``.

    Raises:
        sekai.MissingDependency: gymnasium >= 1.1 is not installed.
        TypeError: ``vec`` is not a sekai VecEnv, or a space has no gymnasium equivalent.
        ValueError: ``vec`` was built with ``autoreset=False``.
    """
    require_gymnasium("to_gymnasium_vector()", _VECTOR_GYMNASIUM)
    from sekai.compat._sekai_to_gym_vector import SekaiToGymnasiumVector

    return SekaiToGymnasiumVector(vec)


def from_gymnasium_vector(
    venv: gymnasium.vector.VectorEnv[Any, Any, Any], *, autoreset: bool = True
) -> GymnasiumVectorToSekai:
    """Wrap a gymnasium ``VectorEnv`` as a sekai ``VecEnv``.

    A same-step venv (``metadata["autoreset_mode"]`` is ``SAME_STEP``) is used as it is. A
    ``DISABLED`` one gets sekai's autoreset (``autoreset=True``) or frozen finished sub-envs
    (``autoreset=False``), both through ``reset(options={"reset_mask": ...})``.

    In same-step mode gymnasium gives a finished sub-env's step info under ``"final_info"`` and
    its new episode's reset info at the top level, beside any keys vector wrappers (such as
    ``RecordEpisodeStatistics``'s ``"episode"``) added after the step. On a bare
    ``SyncVectorEnv`` or ``AsyncVectorEnv`` every top-level key is reset info. Behind vector
    wrappers, and on other VectorEnv classes, nothing tells the two apart: the keys the sub-env's
    last explicit ``reset()`` returned go to ``"reset_info"``, the others stay at the top level.
    A key that only later resets return (not the explicit one's) then stays at the top level.

    Args:
        venv: the gymnasium vector env.
        autoreset: with a ``DISABLED`` venv, reset finished sub-envs within the step (default)
            or freeze them until the next ``reset()``. A same-step venv needs True.

    Raises:
        sekai.MissingDependency: gymnasium >= 1.1 is not installed.
        TypeError: ``venv`` is not a gymnasium VectorEnv, or a space has no sekai equivalent
            (the message names which space).
        ValueError: a next-step venv (its reset observation arrives a step late, which sekai's
            same-step contract cannot express), or ``autoreset=False`` with a same-step venv.
    """
    gym = require_gymnasium("from_gymnasium_vector()", _VECTOR_GYMNASIUM)
    if not isinstance(venv, gym.vector.VectorEnv):
        raise TypeError(
            f"from_gymnasium_vector() expects a gymnasium.vector.VectorEnv, got "
            f"{type(venv).__name__}. For a single gymnasium env, use from_gymnasium()."
        )
    modes = gym.vector.AutoresetMode
    mode = venv.metadata.get("autoreset_mode", getattr(venv, "autoreset_mode", modes.NEXT_STEP))
    mode = modes(mode) if isinstance(mode, str) else mode
    if mode == modes.NEXT_STEP:
        raise ValueError(
            "from_gymnasium_vector() cannot use a next-step autoreset VectorEnv (gymnasium's "
            "default): its reset observation arrives one step late, which sekai's same-step "
            f"contract cannot express. {_SAME_STEP_HOW}, or with AutoresetMode.DISABLED."
        )
    if mode == modes.SAME_STEP and not autoreset:
        raise ValueError(
            "from_gymnasium_vector(autoreset=False) needs a VectorEnv with AutoresetMode.DISABLED"
            "; a same-step one resets finished sub-envs itself."
        )
    if mode not in (modes.SAME_STEP, modes.DISABLED):
        raise ValueError(f"from_gymnasium_vector() got an unknown autoreset mode {mode!r}.")
    return GymnasiumVectorToSekai(venv, same_step=mode == modes.SAME_STEP, autoreset=autoreset)


# -- infos: gymnasium's dict of arrays -> sekai's list of dicts ------------------------------


# The dtypes gymnasium's ``_add_info`` stacks Python ints, floats and bools into
# (``np.zeros(n, dtype=type(value))``); any other dtype came from a NumPy scalar or array.
_PYTHON_SCALAR_DTYPES = frozenset({np.dtype(int), np.dtype(float), np.dtype(bool)})


def _entry(value: Any, i: int, n: int) -> Any:
    """Sub-env ``i``'s part of an info value, undoing gymnasium's stacking as far as it can.

    Entries of the dtypes Python scalars are stacked into come back as Python scalars, others
    as NumPy scalars of their dtype (an ``np.float32`` stays one), as ``SyncVecEnv`` over
    ``from_gymnasium`` envs gives them. Once stacked, an ``np.float64``, ``np.int64`` or 0-d
    array cannot be told from a Python scalar.
    """
    if isinstance(value, np.ndarray) and value.ndim >= 1 and len(value) == n:
        entry = value[i]
        if value.ndim == 1 and value.dtype in _PYTHON_SCALAR_DTYPES:
            return entry.item()
        return entry
    return value


def unstack_infos(infos: dict[Any, Any], n: int) -> list[dict[Any, Any]]:
    """Split gymnasium's vector infos into one dict per sub-env, following the ``_key`` masks
    (recursively for nested dicts; a key without a mask belongs to every sub-env)."""
    masks = {f"_{key}" for key in infos}  # gymnasium's mask name for a key of any type
    out: list[dict[Any, Any]] = [{} for _ in range(n)]
    for key, value in infos.items():
        if key in masks:
            continue  # the mask of another key
        mask = infos.get(f"_{key}")
        parts = unstack_infos(value, n) if isinstance(value, dict) else None
        for i in range(n):
            if mask is not None and not mask[i]:
                continue
            out[i][key] = parts[i] if parts is not None else _entry(value, i, n)
    return out


def _same_step_info(info: dict[str, Any], reset_keys: set[Any] | None) -> dict[str, Any]:
    """Sekai's layout of a gymnasium same-step info: ``{**final_info, **added, final_observation,
    final_info, reset_info}`` for a sub-env that finished, unchanged otherwise.

    gymnasium puts the new episode's reset info at the top level, and the step info under
    ``"final_info"``. With ``reset_keys=None`` (a bare SyncVectorEnv or AsyncVectorEnv) every
    other top-level key is reset info. Otherwise vector wrappers may have added keys after the
    step (``"episode"``) beside it, which nothing tells apart: the keys this sub-env's last
    explicit ``reset()`` returned (``reset_keys``) are taken as its reset info, the others stay
    at the top level.
    """
    if "final_obs" not in info:
        return info
    info = dict(info)
    final_observation = info.pop("final_obs")
    final_info = info.pop("final_info", {})
    if reset_keys is None:
        reset_info, added = info, {}
    else:
        reset_info = {k: v for k, v in info.items() if k in reset_keys}
        added = {k: v for k, v in info.items() if k not in reset_keys}
    return {
        **final_info,
        **added,
        "final_observation": final_observation,
        "final_info": final_info,
        "reset_info": reset_info,
    }


def _one_options(per_env: list[dict[str, Any] | None]) -> dict[str, Any] | None:
    """The one options dict a gymnasium VectorEnv takes, from sekai's per-env list."""
    first = per_env[0]
    for other in per_env[1:]:
        try:
            same = bool(other == first)
        except (ValueError, TypeError):  # e.g. arrays inside the options
            same = False
        if not same:
            raise ValueError(
                "A gymnasium VectorEnv takes one options dict for every sub-env; "
                "from_gymnasium_vector() cannot give each sub-env its own options."
            )
    return None if first is None else dict(first)


def _from_gymnasium(space: Any, which: str) -> Any:
    return convert_space("from_gymnasium_vector()", space_from_gymnasium, space, f"the {which}")


class GymnasiumVectorToSekai(VecEnv):
    """A gymnasium ``VectorEnv`` as a sekai ``VecEnv``; build it with ``from_gymnasium_vector()``.

    Single spaces are converted with ``space_from_gymnasium``; results follow sekai's vector
    contract (``infos`` a list of dicts, same-step autoreset with ``final_observation`` /
    ``final_info`` / ``reset_info``, or frozen sub-envs with ``autoreset=False``). Seeds are
    checked and expanded by sekai's rules (an int spawns child seeds) and given as a list to
    gymnasium's SyncVectorEnv and AsyncVectorEnv; any other VectorEnv is seeded with the int
    itself, as gymnasium's ``VectorEnv.reset`` is; a ``to_gymnasium_vector`` venv gets the seed
    as given (an int or a list), its sekai VecEnv's own rules. Options must be the same for
    every sub-env. ``get_attr`` / ``set_attr`` / ``call`` use the venv's, else those of
    ``venv.unwrapped`` (gymnasium's vector wrappers have none, and leave sub-envs' attributes
    alone); gymnasium's SyncVectorEnv and AsyncVectorEnv have them.

    With a ``DISABLED`` venv and ``autoreset=False``, a frozen sub-env is reset in the
    background (gymnasium cannot skip a sub-env in ``step()``) and stepped with its last
    action; what it returns is replaced by its frozen result, but its random stream advances.

    Attributes:
        gymnasium_vec: the wrapped gymnasium VectorEnv.
    """

    def __init__(
        self, venv: gymnasium.vector.VectorEnv[Any, Any, Any], *, same_step: bool, autoreset: bool
    ) -> None:
        super().__init__(
            venv.num_envs,
            _from_gymnasium(venv.single_observation_space, f"single observation space of {venv}"),
            _from_gymnasium(venv.single_action_space, f"single action space of {venv}"),
            autoreset=autoreset,
        )
        self.gymnasium_vec = venv
        self.metadata = dict(venv.metadata)
        gym = require_gymnasium("from_gymnasium_vector()", _VECTOR_GYMNASIUM)
        from sekai.compat._sekai_to_gym_vector import SekaiToGymnasiumVector

        base = venv.unwrapped  # through gymnasium's vector wrappers, which pass seeds on
        # A to_gymnasium_vector venv takes sekai's seeds themselves: an int spawns its child
        # seeds there, as in the VecEnv it wraps (a native one combines a list differently).
        self._takes_sekai_seeds = isinstance(base, SekaiToGymnasiumVector)
        gymnasiums_own = isinstance(base, (gym.vector.SyncVectorEnv, gym.vector.AsyncVectorEnv))
        self._takes_seed_list = self._takes_sekai_seeds or gymnasiums_own
        self._same_step = same_step
        # Without vector wrappers, gymnasium's own venvs put only the reset info at the top
        # level of a finished sub-env's info: no key needs to be guessed.
        self._top_level_is_reset_info = gymnasiums_own and venv is base
        n = self.num_envs
        self._last_actions: Any = None
        self._final_rows: list[Any] = [None] * n
        self._final_terminated = np.zeros(n, dtype=bool)
        self._final_truncated = np.zeros(n, dtype=bool)
        self._reset_keys: list[set[Any]] = [set() for _ in range(n)]

    # -- reset and step ---------------------------------------------------------------------

    def reset(self, *, seed: Any = None, options: Any = None) -> VecResetResult[Any]:
        seeds, per_env_options = self._reset_plan(seed, options)
        gym_options = _one_options(per_env_options)
        observations, infos = self.gymnasium_vec.reset(
            seed=self._gymnasium_seed(seed, seeds),  # type: ignore[arg-type]
            options=gym_options,
        )
        self._last_actions = None
        self._reset_done()
        per_env = unstack_infos(infos, self.num_envs)
        self._reset_keys = [set(info) for info in per_env]
        return VecResetResult(self._cast(observations), per_env)

    def _gymnasium_seed(self, seed: Any, seeds: list[int | None]) -> int | list[int | None] | None:
        """What the venv's ``reset(seed=)`` takes: sekai's per-sub-env seeds where it accepts a
        list (gymnasium's SyncVectorEnv and AsyncVectorEnv, ``to_gymnasium_vector``'s), else
        the user's one int seed (``to_gymnasium_vector``'s too: its VecEnv spawns from it)."""
        if all(s is None for s in seeds):
            return None
        one_int = isinstance(seed, numbers.Integral) and not isinstance(seed, (bool, np.bool_))
        if self._takes_seed_list and not (one_int and self._takes_sekai_seeds):
            return seeds
        if one_int:
            return int(seed)
        raise ValueError(
            f"{type(self.gymnasium_vec.unwrapped).__name__} is seeded with one int (gymnasium's "
            "VectorEnv.reset(seed: int | None)); only SyncVectorEnv, AsyncVectorEnv and "
            "to_gymnasium_vector() venvs take one seed per sub-env. Pass an int seed, got "
            f"{type(seed).__name__}."
        )

    def step(self, actions: Any) -> VecStepResult[Any]:
        batch = self._checked_actions(actions)
        frozen = self._frozen.copy() if self._frozen.any() else None
        if not self.autoreset:
            batch = self._repeat_frozen_actions(batch, frozen)
        observations, rewards, terminated, truncated, infos = self.gymnasium_vec.step(batch)
        rewards = np.array(rewards, dtype=np.float64)
        terminated = np.array(terminated, dtype=bool)
        truncated = np.array(truncated, dtype=bool)
        per_env = unstack_infos(infos, self.num_envs)
        observations = self._cast(observations)
        if self._same_step:
            per_env = [
                _same_step_info(info, None if self._top_level_is_reset_info else keys)
                for info, keys in zip(per_env, self._reset_keys)
            ]
        elif self.autoreset:
            observations = self._reset_finished(observations, terminated | truncated, per_env)
        else:
            observations = self._freeze(
                observations, rewards, terminated, truncated, per_env, frozen
            )
        return self._step_result(observations, rewards, terminated, truncated, per_env)

    def _reset_rows(self, rows: NDArray[np.bool_]) -> tuple[Any, list[dict[str, Any]]]:
        """Reset the sub-envs in ``rows`` (gymnasium's ``reset_mask``)."""
        observations, infos = self.gymnasium_vec.reset(options={"reset_mask": rows.copy()})
        return self._cast(observations), unstack_infos(infos, self.num_envs)

    def _rows(self, observations: Any) -> list[Any]:
        return list(iterate(self.batch_observation_space, observations))

    @staticmethod
    def _copied_rows(rows: list[Any], dones: NDArray[np.bool_]) -> dict[int, Any]:
        """Copies of the finished sub-envs' rows, to take before ``_reset_rows``: a venv built
        with ``copy=False`` writes the reset observations into the buffer it returned."""
        return {i: copy.deepcopy(rows[i]) for i in np.flatnonzero(dones).tolist()}

    def _reset_finished(
        self, observations: Any, dones: NDArray[np.bool_], infos: list[dict[str, Any]]
    ) -> Any:
        if not dones.any():
            return observations
        finals = self._copied_rows(self._rows(observations), dones)
        reset_observations, reset_infos = self._reset_rows(dones)
        for i, final_observation in finals.items():
            step_info = infos[i]
            infos[i] = {
                **step_info,
                "final_observation": final_observation,
                "final_info": step_info,
                "reset_info": reset_infos[i],
            }
        return reset_observations

    def _repeat_frozen_actions(self, batch: Any, frozen: NDArray[np.bool_] | None) -> Any:
        """Give frozen sub-envs their last action again (numeric array batches only)."""
        if not isinstance(batch, np.ndarray) or batch.dtype.kind not in "biuf":
            return batch
        batch = batch.copy()  # the caller may reuse its array
        last = self._last_actions
        if frozen is not None and last is not None and last.shape == batch.shape:
            batch[frozen] = last[frozen]
        self._last_actions = batch
        return batch

    def _freeze(
        self,
        observations: Any,
        rewards: NDArray[np.float64],
        terminated: NDArray[np.bool_],
        truncated: NDArray[np.bool_],
        infos: list[dict[str, Any]],
        frozen: NDArray[np.bool_] | None,
    ) -> Any:
        """autoreset=False: report frozen sub-envs' final results, freeze newly finished ones
        and reset every finished gymnasium sub-env in the background."""
        gym_done = terminated | truncated
        newly = gym_done if frozen is None else gym_done & ~frozen
        if frozen is None and not newly.any():
            return observations
        rows = self._rows(observations)
        for i, final_observation in self._copied_rows(rows, newly).items():
            self._final_rows[i] = final_observation
            self._final_terminated[i] = terminated[i]
            self._final_truncated[i] = truncated[i]
        if frozen is not None:
            rewards[frozen] = 0.0
            terminated[frozen] = self._final_terminated[frozen]
            truncated[frozen] = self._final_truncated[frozen]
            for i in np.flatnonzero(frozen).tolist():
                infos[i] = {}
        # Every finished row (frozen or newly) shows its copy: the reset below may overwrite
        # the venv's buffer that ``rows`` are views of.
        for i in np.flatnonzero(newly if frozen is None else newly | frozen).tolist():
            rows[i] = self._final_rows[i]
        if gym_done.any():
            self._reset_rows(gym_done)
        return self._cast(concatenate(self.observation_space, rows))

    def _close(self) -> None:
        self.gymnasium_vec.close()

    # -- attributes of the sub-envs ---------------------------------------------------------

    def _venv_method(self, name: str) -> Any:
        """The venv's method ``name``, else ``venv.unwrapped``'s (gymnasium's vector wrappers
        have no get_attr / set_attr / call); None when neither has it."""
        self._check_open()
        for layer in (self.gymnasium_vec, self.gymnasium_vec.unwrapped):
            method = getattr(layer, name, None)
            if method is not None:
                return method
        return None

    def get_attr(self, name: str) -> list[Any]:
        """The venv's ``get_attr(name)`` as a list (else the innermost venv's own attribute,
        repeated: a venv without get_attr holds every sub-env's state itself)."""
        method = self._venv_method("get_attr")
        if method is None:
            return [getattr(self.gymnasium_vec.unwrapped, name)] * self.num_envs
        if name == "action_mask":
            self._check_mask()
        return list(method(name))

    def _check_mask(self) -> None:
        """Refuse, before gymnasium's get_attr calls it, an ``action_mask`` of the sub-envs that
        needs arguments (Taxi's): no sekai action mask. Checked where the sub-envs are in this
        process (a SyncVectorEnv's ``envs``); an AsyncVectorEnv's workers answer for theirs."""
        envs = getattr(self.gymnasium_vec.unwrapped, "envs", None)
        if isinstance(envs, list) and envs:
            found = envs[0].get_wrapper_attr("action_mask")  # AttributeError: no mask at all
            owner = "Each sub-env of this gymnasium vector env"
            check_sekai_mask(found, owner, "gymnasium_vec.unwrapped.envs")

    def set_attr(self, name: str, values: Any) -> None:
        """Set ``name`` on every sub-env (sekai's rule 6: only a list of ``num_envs`` values is
        per sub-env); on a venv without ``set_attr`` (one that holds every sub-env's state
        itself, as ``get_attr`` reads it), its own existing attribute, one value for all.

        Raises:
            AttributeError: such a venv has no attribute ``name``.
            ValueError: such a venv got different values per sub-env.
        """
        method = self._venv_method("set_attr")
        if method is not None:
            method(name, self._per_env_values(name, values))
            return
        base = self.gymnasium_vec.unwrapped
        if not hasattr(base, name):  # a new attribute would not change the simulation
            raise AttributeError(
                f"from_gymnasium_vector(): {type(base).__name__} has no set_attr and no "
                f"attribute {name!r} to change."
            )
        # This venv holds one value for every sub-env, as a native env does: one Generator is
        # its own generator, not one shared by several sub-envs, so it is set as it is.
        one_generator = isinstance(values, np.random.Generator)
        per_env = [values] if one_generator else self._per_env_values(name, values)
        if any(not structurally_equal(v, per_env[0]) for v in per_env[1:]):
            raise ValueError(
                f"from_gymnasium_vector(): {type(base).__name__} holds one {name!r} for every "
                "sub-env (it has no set_attr): pass one value."
            )
        setattr(base, name, per_env[0])

    def call(self, name: str, /, *args: Any, **kwargs: Any) -> list[Any]:
        """The venv's ``call(name, ...)`` as a list (else the innermost venv's own method,
        repeated, as ``get_attr``)."""
        method = self._venv_method("call")
        if method is None:
            attr = getattr(self.gymnasium_vec.unwrapped, name)
            value = attr(*args, **kwargs) if callable(attr) else attr
            return [value] * self.num_envs
        return list(method(name, *args, **kwargs))
