"""SyncVecEnv (and the in-process base it shares with AsyncVecEnv): construction, seeding,
sub-env access, errors and closing."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import sekai
from sekai.vector import AsyncVecEnv, ProcVecEnv, Spawnable, SyncVecEnv
from sekai.wrappers.time_limit import TimeLimit

IN_PROCESS = [SyncVecEnv, AsyncVecEnv]


class Probe(sekai.Env):  # type: ignore[type-arg]
    """Records seeds, options and closes; raises on demand."""

    metadata = {"render_fps": 7}  # noqa: RUF012

    def __init__(self, fail_step: bool = False, fail_close: bool = False) -> None:
        self.observation_space = sekai.Box(-1.0, 1.0, shape=(2,))
        self.action_space = sekai.Discrete(2)
        self.fail_step = fail_step
        self.fail_close = fail_close
        self.seeds: list[Any] = []
        self.steps = 0
        self.level = 1.0
        self.closed = False

    def reset(self, *, seed: Any = None, options: Any = None) -> sekai.ResetResult[Any]:
        self.seeds.append(seed)
        self._set_rng(seed)
        return sekai.ResetResult(np.full(2, self.rng.random(), np.float64), {})

    def step(self, action: Any) -> sekai.StepResult[Any]:
        self.steps += 1
        if self.fail_step:
            raise KeyError(f"step failed ({action})")
        return sekai.StepResult(np.zeros(2), 1, False, False, {})

    def scaled(self, factor: float, *, offset: float = 0.0) -> float:
        return self.level * factor + offset

    def close(self) -> None:
        self.closed = True
        if self.fail_close:
            raise OSError(f"close failed {id(self)}")


@pytest.mark.parametrize("cls", IN_PROCESS)
def test_int_seed_resets_sub_env_i_with_child_seed_i(cls: type[SyncVecEnv]) -> None:
    with cls([Probe] * 3) as vec:
        vec.reset(seed=42)
        assert [env.seeds[-1] for env in vec.envs] == sekai.make_seed_sequence(42, 3)
        vec.reset(seed=[1, None, 3])
        assert [env.seeds[-1] for env in vec.envs] == [1, None, 3]
        vec.reset()
        assert [env.seeds[-1] for env in vec.envs] == [None, None, None]


@pytest.mark.parametrize("cls", IN_PROCESS)
def test_sub_env_replays_alone_with_its_child_seed(cls: type[SyncVecEnv]) -> None:
    with cls([Probe] * 3) as vec:
        batch = vec.reset(seed=5).observations
    single = Probe().reset(seed=sekai.make_seed_sequence(5, 3)[2]).observation
    assert batch[2].tolist() == single.astype(np.float32).tolist()


@pytest.mark.parametrize("cls", IN_PROCESS)
def test_observations_take_the_space_dtype(cls: type[SyncVecEnv]) -> None:
    with cls([Probe] * 2) as vec:
        assert vec.reset(seed=0).observations.dtype == np.float32
        assert vec.step([0, 1]).observations.dtype == np.float32


@pytest.mark.parametrize("cls", IN_PROCESS)
def test_metadata_is_sub_env_zeros(cls: type[SyncVecEnv]) -> None:
    with cls([Probe] * 2) as vec:
        assert vec.metadata == {"render_fps": 7}
        assert len(vec.envs) == 2 and isinstance(vec.envs[0], Probe)


@pytest.mark.parametrize("cls", IN_PROCESS)
def test_set_attr_list_of_num_envs_is_per_sub_env_anything_else_for_all(
    cls: type[SyncVecEnv],
) -> None:
    with cls([Probe] * 2) as vec:
        vec.set_attr("level", [2.0, 3.0])
        assert vec.get_attr("level") == [2.0, 3.0]
        vec.set_attr("level", (4.0, 5.0))
        assert vec.get_attr("level") == [(4.0, 5.0), (4.0, 5.0)]
        vec.set_attr("level", [1.0, 2.0, 3.0])
        assert vec.get_attr("level") == [[1.0, 2.0, 3.0]] * 2


class Tally(Spawnable):
    """Names its spawns after itself and counts them (a stateful per-sub-env object)."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.spawned = 0

    def spawn(self) -> Tally:
        self.spawned += 1
        return Tally(f"{self.name}.{self.spawned}")


class Shared(Spawnable):
    def spawn(self) -> Shared:
        return self


BACKENDS = [
    SyncVecEnv,
    AsyncVecEnv,
    lambda fns: ProcVecEnv(fns, context="fork", num_workers=2),
]


@pytest.mark.parametrize("make", BACKENDS, ids=["sync", "async", "proc"])
def test_set_attr_of_one_spawnable_gives_each_sub_env_its_spawn_as_make_vec_does(
    make: Any,
) -> None:
    with make([Probe] * 3) as vec:
        tally = Tally("t")
        vec.set_attr("level", tally)
        assert [t.name for t in vec.get_attr("level")] == ["t.1", "t.2", "t.3"]
        assert tally.spawned == 3  # spawned in the parent, once per sub-env
        given = [Tally("a"), Tally("b"), Tally("c")]
        vec.set_attr("level", given)  # one per sub-env: set as given, not spawned
        assert [t.name for t in vec.get_attr("level")] == ["a", "b", "c"]
        assert [t.spawned for t in given] == [0, 0, 0]


@pytest.mark.parametrize("make", BACKENDS, ids=["sync", "async", "proc"])
def test_set_attr_refuses_one_generator_for_every_sub_env_on_every_backend(make: Any) -> None:
    # Shared in one process, copied into each worker: the episodes would depend on the backend.
    with make([Probe] * 3) as vec:
        vec.reset(seed=0)
        states = [g.bit_generator.state for g in vec.get_attr("rng")]
        with pytest.raises(
            ValueError,
            match=(
                r"^set_attr\('rng', \.\.\.\) got a numpy Generator: one generator cannot seed 3 "
                r"sub-envs independently \(sub-envs in one process would share it .* worker "
                r"processes would each get a copy of it .*\)\. Pass a list of 3 generators, one "
                r"per sub-env \(e\.g\. rng\.spawn\(3\)\), or seed the sub-envs with "
                r"reset\(seed=\.\.\.\)\.$"
            ),
        ):
            vec.set_attr("rng", np.random.default_rng(7))
        assert [g.bit_generator.state for g in vec.get_attr("rng")] == states
        vec.set_attr("rng", np.random.default_rng(7).spawn(3))  # one per sub-env: accepted
        expected = np.float32([g.random() for g in np.random.default_rng(7).spawn(3)])
        np.testing.assert_array_equal(vec.reset().observations[:, 0], expected)


@pytest.mark.parametrize("make", BACKENDS, ids=["sync", "async", "proc"])
def test_set_attr_refuses_one_generator_listed_for_several_sub_envs_on_every_backend(
    make: Any,
) -> None:
    # The list form of one generator for several sub-envs: the same refusal, nothing changed.
    with make([Probe] * 3) as vec:
        vec.reset(seed=0)
        states = [g.bit_generator.state for g in vec.get_attr("rng")]
        shared, other = np.random.default_rng(7), np.random.default_rng(8)
        with pytest.raises(
            ValueError,
            match=(
                r"^set_attr\('rng', \.\.\.\) got one numpy Generator for sub-envs 0 and 2: one "
                r"generator cannot seed 2 sub-envs independently \(sub-envs in one process would "
                r"share it .* worker processes would each get a copy of it .*\)\. Pass a list of 3 "
                r"generators, one per sub-env \(e\.g\. rng\.spawn\(3\)\), or seed the sub-envs "
                r"with reset\(seed=\.\.\.\)\.$"
            ),
        ):
            vec.set_attr("rng", [shared, other, shared])
        assert [g.bit_generator.state for g in vec.get_attr("rng")] == states
        vec.set_attr("rng", [shared, other, np.random.default_rng(7)])  # distinct: accepted
        expected = np.float32([np.random.default_rng(seed).random() for seed in (7, 8, 7)])
        np.testing.assert_array_equal(vec.reset().observations[:, 0], expected)


@pytest.mark.parametrize("cls", IN_PROCESS)
def test_set_attr_of_one_generator_for_a_single_sub_env_sets_it(cls: type[SyncVecEnv]) -> None:
    with cls([Probe]) as vec:
        generator = np.random.default_rng(7)
        vec.set_attr("rng", generator)
        assert vec.envs[0].rng is generator


@pytest.mark.parametrize("cls", IN_PROCESS)
def test_set_attr_of_a_spawnable_whose_spawn_is_itself_shares_it(cls: type[SyncVecEnv]) -> None:
    with cls([Probe] * 2) as vec:
        shared = Shared()
        vec.set_attr("level", shared)
        assert all(env.level is shared for env in vec.envs)


@pytest.mark.parametrize("cls", IN_PROCESS)
def test_set_attr_reaches_the_layer_that_has_the_attribute(cls: type[SyncVecEnv]) -> None:
    with cls([lambda: TimeLimit(Probe(), 10)] * 2) as vec:
        assert vec.get_attr("max_episode_steps") == [10, 10]
        vec.set_attr("level", [2.0, 3.0])
        assert [env.unwrapped.level for env in vec.envs] == [2.0, 3.0]


@pytest.mark.parametrize("cls", IN_PROCESS)
def test_a_bad_time_limit_in_a_list_changes_no_sub_env(cls: type[SyncVecEnv]) -> None:
    with cls([lambda: TimeLimit(Probe(), 10)] * 3) as vec:
        with pytest.raises(TypeError, match=r"^max_episode_steps must be an int, got float\.$"):
            vec.set_attr("max_episode_steps", [2, 2.0, 3])  # sub-env 0 became 2 before
        assert vec.get_attr("max_episode_steps") == [10, 10, 10]
        vec._set_attr_at([2, 0], "max_episode_steps", [4, 5])
        assert vec.get_attr("max_episode_steps") == [5, 10, 4]


@pytest.mark.parametrize("cls", IN_PROCESS)
def test_a_max_episode_steps_of_the_env_itself_is_not_checked_as_a_time_limit(
    cls: type[SyncVecEnv],
) -> None:
    def probe() -> Probe:
        env = Probe()
        env.max_episode_steps = 1.5  # type: ignore[attr-defined]  # the env's own rules
        return env

    with cls([probe] * 2) as vec:
        vec.set_attr("max_episode_steps", [2.5, "long"])
        assert vec.get_attr("max_episode_steps") == [2.5, "long"]


@pytest.mark.parametrize("cls", IN_PROCESS)
def test_call_calls_methods_and_reads_other_attributes(cls: type[SyncVecEnv]) -> None:
    with cls([lambda: TimeLimit(Probe(), 10)] * 2) as vec:
        vec.set_attr("level", [1.0, 2.0])
        assert vec.call("scaled", 3.0, offset=1.0) == [4.0, 7.0]
        assert vec.call("level") == [1.0, 2.0]


@pytest.mark.parametrize("cls", IN_PROCESS)
def test_call_passes_a_keyword_argument_called_name_to_the_method(cls: type[SyncVecEnv]) -> None:
    with cls([lambda: TimeLimit(Probe(), 10)] * 2) as vec:
        vec.set_attr("level", [1.0, 2.0])
        assert vec.call("get_attr", name="level") == [1.0, 2.0]
        assert sekai.VecWrapper(vec).call("get_attr", name="level") == [1.0, 2.0]


@pytest.mark.parametrize("cls", IN_PROCESS)
def test_sub_env_error_is_raised_after_the_others_stepped(cls: type[SyncVecEnv]) -> None:
    fns = [Probe, lambda: Probe(fail_step=True), lambda: Probe(fail_step=True), Probe]
    with cls(fns) as vec:
        vec.reset(seed=0)
        with pytest.raises(KeyError, match=r"step failed \(1\)"):
            vec.step([0, 1, 0, 0])
        assert [env.steps for env in vec.envs] == [1, 1, 1, 1]
        for env in vec.envs:
            env.fail_step = False
        assert vec.step([0, 0, 0, 0]).rewards.tolist() == [1.0] * 4  # still usable


class Failing(Probe):
    def fail(self) -> None:
        raise KeyError(f"sub-env {self.level:g} failed")


@pytest.mark.parametrize("cls", IN_PROCESS)
def test_targeted_calls_raise_the_lowest_sub_envs_error_whatever_the_order(
    cls: type[SyncVecEnv],
) -> None:
    # Rule 9, as ProcVecEnv and RayVecEnv do: the order of env_ids does not pick the error.
    with cls([Failing] * 3) as vec:
        vec.set_attr("level", [0.0, 1.0, 2.0])
        with pytest.raises(KeyError, match="sub-env 0 failed"):
            vec._call_at([2, 0], "fail", (), {})
        with pytest.raises(KeyError, match="sub-env 1 failed"):
            vec._call_at([2, 1], "fail", (), {})
        with pytest.raises(KeyError, match="sub-env 0 failed"):
            vec.call("fail")


@pytest.mark.parametrize("cls", IN_PROCESS)
def test_close_closes_every_sub_env_then_raises_the_first_error(cls: type[SyncVecEnv]) -> None:
    fns = [Probe, lambda: Probe(fail_close=True), lambda: Probe(fail_close=True)]
    vec = cls(fns)
    envs = vec.envs
    with pytest.raises(OSError, match=f"close failed {id(envs[1])}"):
        vec.close()
    assert vec.closed and all(env.closed for env in envs)
    vec.close()


@pytest.mark.parametrize("cls", IN_PROCESS)
def test_failing_factory_closes_the_sub_envs_already_built(cls: type[SyncVecEnv]) -> None:
    built: list[Probe] = []

    def make() -> Probe:
        if len(built) == 2:
            raise RuntimeError("factory failed")
        built.append(Probe())
        return built[-1]

    with pytest.raises(RuntimeError, match="factory failed"):
        cls([make] * 4)
    assert len(built) == 2 and all(env.closed for env in built)


@pytest.mark.parametrize("cls", IN_PROCESS)
def test_constructor_rejects_bad_env_fns(cls: type[SyncVecEnv]) -> None:
    with pytest.raises(ValueError, match="at least one"):
        cls([])
    with pytest.raises(TypeError, match="callable"):
        cls([Probe(), Probe()])  # type: ignore[list-item]
    with pytest.raises(TypeError, match="list of zero-argument callables"):
        cls(Probe)  # type: ignore[arg-type]
    built: list[Probe] = []

    def make() -> Any:
        built.append(Probe())
        return built[-1] if len(built) == 1 else object()

    with pytest.raises(TypeError, match=r"not a sekai\.Env"):
        cls([make, make])
    assert built[0].closed


@pytest.mark.parametrize("cls", IN_PROCESS)
@pytest.mark.parametrize("unordered", [set, frozenset])
def test_constructor_refuses_unordered_env_fns(cls: type[SyncVecEnv], unordered: type) -> None:
    built: list[Probe] = []

    def make() -> Probe:
        built.append(Probe())
        return built[-1]

    with pytest.raises(
        TypeError,
        match=rf"^{cls.__name__}: env_fns must be given in order, got a {unordered.__name__} of "
        r"1 item, which has no order; pass a list or tuple in the order wanted\.$",
    ):
        cls(unordered([make]))
    assert built == []


@pytest.mark.parametrize("cls", IN_PROCESS)
def test_constructor_takes_env_fns_from_a_generator(cls: type[SyncVecEnv]) -> None:
    with cls(Probe for _ in range(2)) as vec:
        assert vec.num_envs == 2


@pytest.mark.parametrize("cls", IN_PROCESS)
def test_factories_returning_the_same_env_object_are_refused(cls: type[SyncVecEnv]) -> None:
    # `env = make(...); SyncVecEnv([lambda: env] * n)` would step one env n times per call.
    env, other = Probe(), Probe()
    expected = (
        rf"^{cls.__name__}: env_fns\[0\]\(\) and env_fns\[2\]\(\) returned the same env "
        r"object .*each factory must build a new env"
    )
    with pytest.raises(ValueError, match=expected):
        cls([lambda: env, lambda: other, lambda: env])
    assert env.closed and other.closed


@pytest.mark.parametrize("cls", IN_PROCESS)
@pytest.mark.parametrize(
    "wrap",
    [
        lambda env: (TimeLimit(env, 5), TimeLimit(env, 5)),  # each factory wraps one env
        lambda env: (env, TimeLimit(env, 5)),
        lambda env: (TimeLimit(env, 5), env),  # as `lambda: env, lambda: env.unwrapped`
    ],
    ids=["both-wrapped", "then-wrapped", "then-unwrapped"],
)
def test_factories_returning_one_env_behind_wrappers_are_refused(
    cls: type[SyncVecEnv], wrap: Any
) -> None:
    env = Probe()
    first, second = wrap(env)
    expected = (
        rf"^{cls.__name__}: env_fns\[0\]\(\) and env_fns\[1\]\(\) returned envs on the same "
        r"base env object \(.*Probe, their \.unwrapped\); each factory must build a new env"
    )
    with pytest.raises(ValueError, match=expected):
        cls([lambda: first, lambda: second])
    assert env.closed


@pytest.mark.parametrize("cls", IN_PROCESS)
def test_sub_envs_with_different_spaces_are_rejected(cls: type[SyncVecEnv]) -> None:
    def other() -> Probe:
        env = Probe()
        env.action_space = sekai.Discrete(3)
        return env

    first = Probe()
    with pytest.raises(ValueError, match=r"sub-env 1 has action_space Discrete\(3\)"):
        cls([lambda: first, other])
    assert first.closed


def test_sync_vec_env_rejects_non_bool_autoreset() -> None:
    with pytest.raises(TypeError, match="autoreset must be a bool"):
        SyncVecEnv([Probe], autoreset="yes")  # type: ignore[arg-type]


def test_async_routes_to_the_sync_methods() -> None:
    import asyncio

    async def go() -> Any:
        with SyncVecEnv([Probe] * 2) as vec:
            await vec.async_reset(seed=0)
            return await vec.async_step([0, 0])

    assert asyncio.run(go()).rewards.tolist() == [1.0, 1.0]


def test_ctrl_c_in_one_sub_env_records_the_sub_envs_that_stepped_before_it() -> None:
    from sekai.testing.envs import LineEnv

    class Interrupts(LineEnv):
        def step(self, action: Any) -> Any:
            raise KeyboardInterrupt

    vec = SyncVecEnv([LineEnv, Interrupts], autoreset=False)
    vec.reset(seed=0, options={"start": 3})  # one step right from the end
    with pytest.raises(KeyboardInterrupt):
        vec.step([1, 1])
    assert vec.frozen.tolist() == [True, False]  # sub-env 0 ended, and froze, before Ctrl-C
    vec.close()


def test_ctrl_c_after_another_sub_env_raised_is_raised_as_keyboard_interrupt() -> None:
    """The Ctrl-C wins over the error of a sub-env before it, and only the sub-envs that
    stepped are recorded: not the one that raised, nor those after the interrupted one."""
    from sekai.testing.envs import LineEnv

    class Raises(LineEnv):
        def step(self, action: Any) -> Any:
            raise ValueError("sub-env 1 failed")

    class Interrupts(LineEnv):
        def step(self, action: Any) -> Any:
            raise KeyboardInterrupt

    vec = SyncVecEnv([LineEnv, Raises, Interrupts, LineEnv], autoreset=False)
    vec.reset(seed=0, options={"start": 3})  # one step right from the end
    with pytest.raises(KeyboardInterrupt):
        vec.step([1, 1, 1, 1])
    assert vec.frozen.tolist() == [True, False, False, False]
    vec.close()
