"""The checks every kernel vectorization mode passes (``jax``, ``torch``, a plugin's own).

Each check takes a :class:`ModeCase` (the mode's name, how to put a host list on its device, and
the library that must stay unimported until the mode is used) and runs the mode on CartPole-v1
(sekai-classic), whose kernel and discrete actions exercise the driver's shared rules: seeding,
autoreset and freezing, action checks on the host and on the device, ``set_attr``, metadata and
the vector wrappers. A mode's test suite runs them all::

    @pytest.mark.parametrize("check", MODE_CHECKS.values(), ids=list(MODE_CHECKS))
    def test_the_mode_passes_every_check(check):
        check(ModeCase("jax", jax.numpy.asarray, "jax"))
"""

from __future__ import annotations

import re
import subprocess
import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from sekai.error import InvalidAction
from sekai.registry.api import make_vec, spec
from sekai.registry.entry_points import load_entry_point
from sekai.spaces import Box, Discrete, MultiDiscrete
from sekai.stats.normalizer import ObservationNormalizer
from sekai.testing.envs import assert_kstep_autoreset
from sekai.testing.kernels import assert_kernel_equivalent
from sekai.vector.kernel import KernelStep
from sekai.vector.kernel_backend import DeviceActions
from sekai.vector.kernel_check import KStepKernel
from sekai.vector.kernel_vec_env import KernelVecEnv
from sekai.vector.wrappers import (
    VecNormalizeObservation,
    VecNormalizeReward,
    VecRecordEpisodeStatistics,
    VecTransformObservation,
    VecTransformReward,
)

__all__ = ["ENV_ID", "MODE_CHECKS", "ModeCase"]

ENV_ID = "CartPole-v1"


@dataclass(frozen=True)
class ModeCase:
    """A kernel mode under test.

    Attributes:
        mode: its ``vectorization_mode`` name.
        to_device: turns a host list or NumPy array into an array of the mode's library.
        library: the module plugin discovery must not import (``"jax"``, ``"torch"``).
    """

    mode: str
    to_device: Callable[[Any], Any]
    library: str

    def make(self, num_envs: int, **kwargs: Any) -> KernelVecEnv:
        """``make_vec(ENV_ID, num_envs, vectorization_mode=mode, **kwargs)``."""
        envs = make_vec(ENV_ID, num_envs, vectorization_mode=self.mode, **kwargs)
        assert isinstance(envs, KernelVecEnv), f"{self.mode!r} gave {type(envs).__name__}"
        return envs


def _host(envs: KernelVecEnv, array: Any) -> np.ndarray:
    return np.asarray(envs.backend.to_numpy(array))


def _raises(
    errors: type[BaseException] | tuple[type[BaseException], ...],
    pattern: str,
    call: Callable[..., object],
    *args: Any,
    **kwargs: Any,
) -> BaseException:
    try:
        call(*args, **kwargs)
    except errors as exc:
        assert re.search(pattern, str(exc)), f"{exc!r} does not match {pattern!r}"
        return exc
    raise AssertionError(f"no {errors} was raised (expected one matching {pattern!r})")


def check_same_seed_same_episodes(case: ModeCase) -> None:
    """A seed fixes every episode, autoresets included; another seed gives others."""

    def run(seed: int) -> np.ndarray:
        envs = case.make(8, max_episode_steps=10)
        envs.reset(seed=seed)
        for _ in range(25):  # through autoresets, which draw from the mode's generator
            out = envs.step(np.zeros(8, dtype=np.int64))
        return _host(envs, out.observations)

    np.testing.assert_array_equal(run(3), run(3))
    assert not np.array_equal(run(3), run(4)), (
        "seeds 3 and 4 gave the same observations after 25 steps: the mode ignores the seed"
    )


def check_autoresets_and_unseeded_resets_start_new_episodes(case: ModeCase) -> None:
    """Every autoreset, and a reset without a seed, draws a start of its own: the mode's
    generator moves on with each draw instead of replaying the first one."""
    envs = case.make(1, max_episode_steps=1)
    starts = [_host(envs, envs.reset(seed=0).observations)[0]]
    for _ in range(4):  # each step truncates and autoresets the one sub-env
        starts.append(_host(envs, envs.step(np.zeros(1, dtype=np.int64)).observations)[0])
    starts.append(_host(envs, envs.reset().observations)[0])
    distinct = {tuple(start.tolist()) for start in starts}
    assert len(distinct) == len(starts), f"repeated first observations: {starts}"


def check_matches_the_numpy_driver(case: ModeCase) -> None:
    """The mode's transition is the numpy driver's under the same draws (float64 and float32)."""
    entry_point = spec(ENV_ID).kernel_entry_point
    assert entry_point is not None, f"{ENV_ID} registers no kernel"
    kernel = load_entry_point(entry_point, "kernel_entry_point")
    assert_kernel_equivalent(
        kernel, backends=(case.mode,), num_envs=6, steps=40, max_episode_steps=15
    )


def check_device_actions_are_checked_unless_checks_are_off(case: ModeCase) -> None:
    """An invalid device action names its sub-env; a wrong shape is a ValueError."""
    envs = case.make(3)
    envs.reset(seed=0)
    caught = _raises(InvalidAction, "", envs.step, case.to_device([0, 5, 1]))
    assert getattr(caught, "index", None) == 1
    _raises(ValueError, r"shape \(3,\)", envs.step, case.to_device([[0], [1], [1]]))
    _raises(
        ValueError, r"must have shape \(3,\).*got shape \(2,\)",
        envs.step, case.to_device([0, 1]),
    )  # fmt: skip
    loose = case.make(3, vector_kwargs={"check_actions": False})
    loose.reset(seed=0)
    loose.step(case.to_device([0, 5, 1]))


def check_a_discrete_action_is_an_integral_number_not_a_bool(case: ModeCase) -> None:
    """Fractions, NaN and bools are refused for sub-env 0, from the host and on the device;
    without value checks, bools and complex numbers are still refused (their dtype says it,
    no sync needed), as the functional API refuses them."""
    for bad in ([0.5, 1.0], [float("nan"), 1.0], [True, False]):
        for where in (np.array, case.to_device):
            envs = case.make(2)
            envs.reset(seed=0)
            caught = _raises(InvalidAction, r"\(sub-env 0\)", envs.step, where(bad))
            assert getattr(caught, "index", None) == 0, (bad, where)
    loose = case.make(2, vector_kwargs={"check_actions": False})
    loose.reset(seed=0)
    for batch in (np.array([True, False]), np.array([0, 1], dtype=np.complex64)):
        for where in (np.asarray, case.to_device):
            _raises(
                TypeError, r"^actions of Discrete\(2\) cannot be of dtype .*; pass integers",
                loose.step, where(batch),
            )  # fmt: skip


def check_unsigned_integer_actions_are_indices(case: ModeCase) -> None:
    """Unsigned integers of every width the library holds act as the space's integers and are
    checked as the others: out of range, and as large as the dtype holds (which wraps in a
    signed dtype), for a space that starts below 0 too."""
    envs = case.make(2)
    envs.reset(seed=0)
    for dtype in (np.uint16, np.uint32, np.uint64):  # JAX without x64: uint64 is uint32
        batch = case.to_device(np.array([0, 1], dtype=dtype))
        assert _host(envs, envs.step(batch).observations).shape == (2, 4)
        caught = _raises(
            InvalidAction, r"^Action 2 is not valid .*\(sub-env 1\)",
            envs.step, case.to_device(np.array([1, 2], dtype=dtype)),
        )  # fmt: skip
        assert getattr(caught, "index", None) == 1
        top = case.to_device(np.array([0, np.iinfo(dtype).max], dtype=dtype))
        prepare = DeviceActions(envs.backend, Discrete(3, start=-1), 2).prepare
        caught = _raises(InvalidAction, r"\(sub-env 1\)", prepare, top, None, True)
        assert getattr(caught, "index", None) == 1
        assert _host(envs, prepare(batch, None, True)).tolist() == [0, 1]


def check_host_actions_are_checked_before_conversion(case: ModeCase) -> None:
    """Strings, None and ints out of the library's range fail as a native env's would."""
    for bad in (np.array(["a", "b"]), None, np.array([1, 2**32])):
        envs = case.make(2)
        envs.reset(seed=0)
        _raises(
            (InvalidAction, ValueError), r"sub-env|must have shape",
            envs.step, bad,
        )  # fmt: skip


def check_integral_float_actions_act_as_their_integers(case: ModeCase) -> None:
    """``[0.0, 1.0]`` on the device steps as ``[0, 1]`` from the host; the cast is an int."""
    by_float, by_int = case.make(2), case.make(2)
    by_float.reset(seed=0)
    by_int.reset(seed=0)
    for _ in range(3):
        a = by_float.step(case.to_device([0.0, 1.0]))
        b = by_int.step(np.array([0, 1]))
        np.testing.assert_array_equal(
            _host(by_float, a.observations), _host(by_int, b.observations)
        )
    prepare = DeviceActions(by_int.backend, Discrete(3), 2).prepare
    cast = _host(by_int, prepare(case.to_device([0.0, 2.0]), None, False))
    assert np.issubdtype(cast.dtype, np.integer) and cast.tolist() == [0, 2]


def check_device_actions_follow_the_host_rules(case: ModeCase) -> None:
    """Other integer widths act as the space's integers, with or without value checks; complex
    numbers are invalid and a dict or a string is not a batch, as for a native env; frozen
    sub-envs' ignored actions become valid indices (an out-of-range or NaN one included)."""
    for check_actions in (True, False):
        by_int = case.make(2, vector_kwargs={"check_actions": check_actions})
        by_int.reset(seed=0)
        for dtype in (np.int8, np.uint8, np.int16, np.int32):
            batch = case.to_device(np.array([0, 1], dtype=dtype))
            assert _host(by_int, by_int.step(batch).observations).shape == (2, 4)
            prepare = DeviceActions(by_int.backend, by_int.action_space, 2).prepare
            cast = _host(by_int, prepare(batch, None, check_actions))
            assert cast.dtype == np.int64 or cast.dtype == np.int32, cast.dtype  # JAX: no x64
            assert cast.tolist() == [0, 1]
    envs = case.make(2)
    envs.reset(seed=0)
    bad = case.to_device(np.array([0, 1], dtype=np.complex64))
    caught = _raises(InvalidAction, r"^Action 0j is not valid .*\(sub-env 0\)", envs.step, bad)
    assert getattr(caught, "index", None) == 0
    for batch, given in (({"a": 1}, "dict of length 1"), ("ab", "str 'ab'")):
        _raises(ValueError, rf"^actions must have shape \(2,\) .*got {given}\.$", envs.step, batch)
    space = MultiDiscrete([3, 4], start=[1, -2])
    prepare = DeviceActions(envs.backend, space, 3).prepare
    frozen = case.to_device([True, False, True])
    batch = case.to_device([[9.0, 9.0], [3.0, 1.0], [float("nan"), 0.5]])
    assert _host(envs, prepare(batch, frozen, True)).tolist() == [[1, -2], [3, 1], [1, -2]]


def check_device_values_at_the_bounds_are_checked(case: ModeCase) -> None:
    """The device check takes a space's extreme values and refuses the next ones (Discrete
    ``start + n``, a MultiDiscrete's ``start + nvec`` in either column, an infinite Box entry;
    a finite one beyond the bounds passes, envs clip it), naming the first bad sub-env."""
    envs = case.make(2)
    envs.reset(seed=0)
    inf = float("inf")
    cases: list[tuple[Any, list[Any], list[Any], int]] = [
        (Discrete(3, start=-1), [-1, 1], [1, 2], 1),
        (MultiDiscrete([3, 4]), [[2, 3], [0, 0]], [[2, 3], [3, 0]], 1),
        (MultiDiscrete([3, 4]), [[2, 3], [0, 0]], [[0, 4], [0, 0]], 0),
        (Box(-1.0, 1.0, shape=(1,)), [[-5.0], [1e30]], [[0.0], [inf]], 1),
        (Box(-1.0, 1.0, shape=(1,)), [[-5.0], [1e30]], [[-inf], [0.0]], 0),
    ]
    for space, good, bad, want in cases:
        prepare = DeviceActions(envs.backend, space, 2).prepare
        prepare(case.to_device(good), None, True)
        caught = _raises(
            InvalidAction, rf"\(sub-env {want}\)", prepare, case.to_device(bad), None, True
        )
        assert getattr(caught, "index", None) == want, (space, bad)


def check_box_bools_are_the_numbers_1_and_0(case: ModeCase) -> None:
    """A Box takes a device batch of bools as the host does: the numbers 1.0 and 0.0, in the
    mode's float dtype before a kernel sees them, with or without value checks and frozen
    sub-envs; a MultiDiscrete refuses them, as a Discrete does (bools are no indices)."""
    envs = case.make(3)
    bools = [[True, False], [False, False], [True, True]]
    floats = _host(envs, envs.backend.convert(np.zeros(1))).dtype
    prepare = DeviceActions(envs.backend, Box(-1.0, 1.0, shape=(2,)), 3).prepare
    for check in (True, False):
        for frozen in (None, case.to_device([False, True, False])):
            cast = _host(envs, prepare(case.to_device(bools), frozen, check))
            assert cast.dtype == floats, (cast.dtype, floats)
            assert cast.tolist() == [[1.0, 0.0], [0.0, 0.0], [1.0, 1.0]]
    indices = DeviceActions(envs.backend, MultiDiscrete([2, 2]), 3).prepare
    caught = _raises(InvalidAction, r"\(sub-env 0\)", indices, case.to_device(bools), None, True)
    assert getattr(caught, "index", None) == 0


class _EndsOnceKernel(KStepKernel):
    """``KStepKernel`` whose sub-envs end only at ``t == k`` (a data feed that runs out):
    terminated where ``k`` is odd, truncated where it is even. The kernel's own flags are False
    again after that step, so a frozen sub-env is still done only if the driver keeps them."""

    def step(
        self, xp: Any, params: Any, state: Any, action: Any, draws: Mapping[str, Any]
    ) -> KernelStep:
        state, obs, reward, _, _, info = super().step(xp, params, state, action, draws)
        ends = state["t"] == params.ks
        truncates = params.ks % 2 == 0  # from the params, which are already on the device
        return state, obs, reward, ends & ~truncates, ends & truncates, info


def check_finished_sub_envs_freeze_without_autoreset(case: ModeCase) -> None:
    """With ``autoreset=False`` a finished sub-env keeps its state, its observation and the
    flags it ended with, and pays nothing, until ``reset()``."""
    envs = case.make(2, max_episode_steps=3, vector_kwargs={"autoreset": False})
    envs.reset(seed=0)
    for _ in range(3):
        last = envs.step(np.zeros(2, dtype=np.int64))
    ended = {name: _host(envs, value) for name, value in envs.state.items()}
    for _ in range(2):
        after = envs.step(np.ones(2, dtype=np.int64))
    assert envs.frozen.all() and _host(envs, last.truncated).all()
    np.testing.assert_array_equal(_host(envs, after.observations), _host(envs, last.observations))
    np.testing.assert_array_equal(_host(envs, after.rewards), [0.0, 0.0])
    for name, value in envs.state.items():
        np.testing.assert_array_equal(
            _host(envs, value), ended[name], err_msg=f"state[{name!r}] moved while frozen"
        )
    envs = type(case.make(1)).from_kernel(_EndsOnceKernel((1, 2, 4)), 3, None, {"autoreset": False})
    envs.reset(seed=0)
    flags = []
    for _ in range(3):
        out = envs.step(np.zeros(3, dtype=np.int64))
        flags.append([_host(envs, out.terminated).tolist(), _host(envs, out.truncated).tolist()])
    ends = [[True, False, False], [False, True, False]]
    assert flags[1:] == [ends] * 2, f"(terminated, truncated) of each step: {flags}"


def check_autoreset_returns_the_next_episodes_first_observation(case: ModeCase) -> None:
    """The step that ends an episode returns the reset observation, with the final observation
    and infos and the reset info; every step's reward and flags are right (``KStepKernel``)."""
    ks = (1, 2, 3, 5)
    envs = type(case.make(1)).from_kernel(KStepKernel(ks), len(ks), None, {})
    try:
        assert_kstep_autoreset(envs, ks, 31)
    finally:
        envs.close()


def check_set_attr_changes_a_parameter(case: ModeCase) -> None:
    """``set_attr`` reaches the compiled step; a float takes an int and a 0-d array of the
    mode's library (read back as a float) and refuses an array of several."""
    envs = case.make(2)
    envs.reset(seed=0)
    envs.set_attr("force_mag", 0.0)
    assert envs.get_attr("force_mag") == [0.0, 0.0]
    before = _host(envs, envs.state["x_dot"])
    envs.step(np.ones(2, dtype=np.int64))
    after = _host(envs, envs.state["x_dot"])
    assert np.abs(after - before).max() < 0.01  # no push: only the pole's reaction moves it
    envs.set_attr("force_mag", 20)
    assert envs.get_attr("force_mag") == [20.0, 20.0]
    envs.set_attr("gravity", case.to_device(9.5))  # held as NumPy holds it, not the array
    assert envs.get_attr("gravity") == [9.5, 9.5]
    assert type(envs.get_attr("gravity")[0]) is float
    _raises(
        TypeError, r"same kind and shape, got array\(\[1\., 2\., 3\.\]\)",
        envs.set_attr, "force_mag", np.array([1.0, 2.0, 3.0]),
    )  # fmt: skip
    assert envs.get_attr("force_mag") == [20.0, 20.0]


def check_set_attr_of_the_time_limit_applies_to_the_next_steps(case: ModeCase) -> None:
    """``max_episode_steps`` changes the limit of the next episodes and is checked: a list of
    one equal limit per sub-env is that limit, an array is one value for all (not an int)."""
    envs = case.make(2, max_episode_steps=100)
    envs.set_attr("max_episode_steps", 2)
    envs.reset(seed=0)
    truncated = [bool(_host(envs, envs.step(np.array([0, 1])).truncated).any()) for _ in range(3)]
    assert truncated == [False, True, False]
    _raises(
        ValueError, r"^max_episode_steps must be >= 1, got -1\.$",
        envs.set_attr, "max_episode_steps", -1,
    )  # fmt: skip
    _raises(
        TypeError, r"^max_episode_steps must be an int >= 1, got str\.$",
        envs.set_attr, "max_episode_steps", "x",
    )  # fmt: skip
    _raises(
        ValueError, r"\.max_episode_steps: a list must hold one value per sub-env \(2\), got 3\. "
        r"Pass one int \(not a list\)",
        envs.set_attr, "max_episode_steps", [2, 2, 2],
    )  # fmt: skip
    for array in (np.array([3, 3]), np.array([3, 3, 3])):  # one value for all, as on sync
        _raises(
            TypeError, r"^max_episode_steps must be an int >= 1, got ndarray\.$",
            envs.set_attr, "max_episode_steps", array,
        )  # fmt: skip
    assert envs.get_attr("max_episode_steps") == [2, 2]
    envs.set_attr("max_episode_steps", [np.int64(3), 3])  # one limit, given as two int types
    assert envs.get_attr("max_episode_steps") == [3, 3]


def check_time_limits_beyond_the_int32_step_counter_are_refused(case: ModeCase) -> None:
    """The driver counts each episode's steps in int32: a longer limit (``sys.maxsize``, "no
    limit in practice") is refused, naming the mode, by ``make_vec`` and ``set_attr``, instead
    of wrapping and truncating every episode at its first step."""
    envs = case.make(2, max_episode_steps=2**31 - 1)  # the largest the counter holds
    message = (  # the backend's name: the mode's own, or the one it builds on (numpy)
        rf"^max_episode_steps={sys.maxsize} exceeds 2\*\*31 - 1 = 2147483647: "
        rf"vectorization_mode='{envs.backend.name}' counts each episode's steps in int32\."
    )
    _raises(ValueError, message, case.make, 2, max_episode_steps=sys.maxsize)
    envs.reset(seed=0)
    assert not _host(envs, envs.step(np.zeros(2, dtype=np.int64)).truncated).any()
    _raises(ValueError, message, envs.set_attr, "max_episode_steps", sys.maxsize)
    assert envs.get_attr("max_episode_steps") == [2**31 - 1] * 2


def check_wrappers_keep_the_arrays_on_the_device(case: ModeCase) -> None:
    """Episode statistics and reward normalisation run over the mode's arrays."""
    inner = case.make(4)
    vec = VecNormalizeReward(VecRecordEpisodeStatistics(inner), gamma=0.9)
    vec.reset(seed=0)
    device_type = type(case.to_device([0.0]))
    episodes = []
    for _ in range(40):
        result = vec.step(case.to_device(np.zeros(4, dtype=np.int64)))
        assert isinstance(result.rewards, device_type)  # scaled where the env put them
        for info in result.infos:
            if "episode" in info:
                episodes.append((info["episode"].episode_length, info["episode"].episode_return))
    assert len(episodes) >= 4
    # CartPole pays 1 a step: each recorded return is its episode's length
    assert all(length == ret for length, ret in episodes), (
        f"episodes (length, return): {episodes}; each return must equal its length"
    )
    assert vec.return_rms.count == 160


def check_observation_normalisation_stays_on_the_device(case: ModeCase) -> None:
    """``VecNormalizeObservation`` hands the batch back on the device, normalised with the
    statistics of the host copies (the same figures as normalising the host arrays)."""
    wrapped = VecNormalizeObservation(case.make(3))
    plain = case.make(3)
    reference = ObservationNormalizer(plain.observation_space)
    device_type = type(case.to_device([0.0]))
    pairs = [(wrapped.reset(seed=1).observations, plain.reset(seed=1).observations)]
    for _ in range(5):
        action = case.to_device([0, 1, 1])
        pairs.append((wrapped.step(action).observations, plain.step(action).observations))
    for got, raw in pairs:
        assert isinstance(got, device_type), type(got)
        want = reference.normalize(_host(plain, raw), batched=True)
        np.testing.assert_allclose(_host(plain, got), want, rtol=1e-4, atol=1e-5)


def check_reward_transforms_stay_on_the_device(case: ModeCase) -> None:
    """A reward wrapper (``VecTransformReward``) hands the rewards back on the device, in the
    env's float dtype, whatever its function returns (a tensor, a comparison's bools, NumPy);
    without autoreset, a frozen sub-env keeps reward 0 there."""
    device_type = type(case.to_device([0.0]))
    funcs = ((lambda r: r * 2, 2.0), (lambda r: r > 0, 1.0), (lambda r: np.full(3, 0.5), 0.5))
    for func, want in funcs:
        envs = case.make(3)
        vec = VecTransformReward(envs, func)
        vec.reset(seed=0)
        rewards = vec.step(case.to_device([0, 1, 1])).rewards
        assert isinstance(rewards, device_type), type(rewards)
        assert rewards.dtype == envs.backend.float_dtype, rewards.dtype
        assert _host(envs, rewards).tolist() == [want] * 3
    # Not func(0): the reward 0 the unwrapped env gives a frozen sub-env.
    ks, build = (1, 2, 4), type(case.make(1)).from_kernel
    plain = build(_EndsOnceKernel(ks), 3, None, {"autoreset": False})
    envs = build(_EndsOnceKernel(ks), 3, None, {"autoreset": False})
    vec = VecTransformReward(envs, lambda r: r - 0.5)
    plain.reset(seed=0)
    vec.reset(seed=0)
    for _ in range(4):  # the sub-envs end at their k-th step, one after another
        live = ~plain.frozen
        action = case.to_device([0, 1, 1])
        raw, rewards = plain.step(action).rewards, vec.step(action).rewards
        assert isinstance(rewards, device_type), type(rewards)
        expected = np.where(live, _host(plain, raw) - 0.5, 0.0)
        np.testing.assert_allclose(_host(envs, rewards), expected, err_msg=f"live {live}")


def check_terminal_observations_are_transformed_on_the_device(case: ModeCase) -> None:
    """An observation wrapper's default ``final_observation`` runs ``observation()`` on a batch
    of one on the device, as every other batch, and leaves the result on the host, where the
    env's infos keep terminal observations."""
    device_type = type(case.to_device([0.0]))
    batches: list[Any] = []

    def doubled(batch: Any) -> Any:
        batches.append(batch)
        return batch * 2

    vec = VecTransformObservation(case.make(2, max_episode_steps=2), doubled)
    plain = case.make(2, max_episode_steps=2)
    vec.reset(seed=3)
    plain.reset(seed=3)
    for _ in range(2):  # the second step truncates both episodes
        action = case.to_device([0, 1])
        got, raw = vec.step(action), plain.step(action)
    assert all(isinstance(batch, device_type) for batch in batches), [type(b) for b in batches]
    assert len(batches) == 3 + 2  # reset, two steps, two terminal observations
    for index in range(2):
        final = got.infos[index]["final_observation"]
        assert isinstance(final, np.ndarray), type(final)
        np.testing.assert_allclose(final, 2 * raw.infos[index]["final_observation"], rtol=1e-6)


def check_metadata_and_time_limit_come_from_the_env(case: ModeCase) -> None:
    """The env's metadata, and its registered time limit in ``info["elapsed_steps"]``."""
    envs = case.make(2)
    expected = make_vec(ENV_ID, 2, vectorization_mode="sync").metadata
    assert envs.metadata == expected != {}, f"metadata {envs.metadata!r}, the env's {expected!r}"
    envs.reset(seed=0)
    assert envs.step(np.ones(2, dtype=np.int64)).infos[0]["elapsed_steps"] == 1
    assert envs.get_attr("max_episode_steps") == [spec(ENV_ID).max_episode_steps] * 2


def check_envs_without_a_kernel_and_per_env_wrappers_are_refused(case: ModeCase) -> None:
    """Pendulum has no kernel; a kernel mode has no per-env objects to wrap."""
    _raises(
        ValueError, "no array kernel",
        make_vec, "Pendulum-v1", 2, vectorization_mode=case.mode,
    )  # fmt: skip
    _raises(
        ValueError, "no per-env objects to wrap",
        make_vec, ENV_ID, 2, vectorization_mode=case.mode, wrappers=[lambda e: e],
    )  # fmt: skip


def check_plugin_discovery_does_not_import_the_library(case: ModeCase) -> None:
    """Listing the specs imports neither the mode's plugin nor its library."""
    code = f"import sys, sekai; sekai.all_specs(); print({case.library!r} in sys.modules)"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "False", done.stdout


_CHECKS: Sequence[Callable[[ModeCase], None]] = (
    check_same_seed_same_episodes,
    check_autoresets_and_unseeded_resets_start_new_episodes,
    check_matches_the_numpy_driver,
    check_device_actions_are_checked_unless_checks_are_off,
    check_a_discrete_action_is_an_integral_number_not_a_bool,
    check_unsigned_integer_actions_are_indices,
    check_host_actions_are_checked_before_conversion,
    check_integral_float_actions_act_as_their_integers,
    check_device_actions_follow_the_host_rules,
    check_device_values_at_the_bounds_are_checked,
    check_box_bools_are_the_numbers_1_and_0,
    check_finished_sub_envs_freeze_without_autoreset,
    check_autoreset_returns_the_next_episodes_first_observation,
    check_set_attr_changes_a_parameter,
    check_set_attr_of_the_time_limit_applies_to_the_next_steps,
    check_time_limits_beyond_the_int32_step_counter_are_refused,
    check_wrappers_keep_the_arrays_on_the_device,
    check_observation_normalisation_stays_on_the_device,
    check_reward_transforms_stay_on_the_device,
    check_terminal_observations_are_transformed_on_the_device,
    check_metadata_and_time_limit_come_from_the_env,
    check_envs_without_a_kernel_and_per_env_wrappers_are_refused,
    check_plugin_discovery_does_not_import_the_library,
)
#: Every check, by name (without ``check_``), in the order above.
MODE_CHECKS: dict[str, Callable[[ModeCase], None]] = {
    check.__name__.removeprefix("check_"): check for check in _CHECKS
}
