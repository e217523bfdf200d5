import asyncio
import sys
from typing import ClassVar

import numpy as np
import pytest

import sekai
from sekai.core.wrapper import ResultWrapper
from sekai.registry import EnvSpec
from sekai.vector._conformance import CounterEnv
from sekai.wrappers.time_limit import TimeLimit


class Base(sekai.Env):
    observation_space = "obs-space"
    action_space = "act-space"
    metadata: ClassVar[dict[str, int]] = {"render_fps": 50}

    def __init__(self):
        self.x_threshold = 2.4
        self.t = 0
        self.closed = False
        self.actions = []

    def reset(self, *, seed=None, options=None):
        self._set_rng(seed)
        self.t = 0
        return sekai.ResetResult(0, {"reset": True})

    def step(self, action):
        self.t += 1
        self.actions.append(action)
        return sekai.StepResult(self.t, 1.0, False, False, {"t": self.t})

    def action_mask(self):
        return [1, 0]

    def close(self):
        self.closed = True


class Plain(sekai.Wrapper):
    pass


class Tagged(sekai.Wrapper):
    def __init__(self, env):
        super().__init__(env)
        self.tag = "outer"
        self.x_threshold = "wrapper-level"


class Double(sekai.ObservationWrapper):
    def observation(self, observation):
        return 2 * observation


class Bonus(sekai.RewardWrapper):
    def reward(self, reward):
        return reward + 100


class Flip(sekai.ActionWrapper):
    def action(self, action):
        return 1 - action


def test_wrapping_a_non_env_raises_the_spec_message():
    with pytest.raises(TypeError) as info:
        sekai.TimeLimit(object(), 5)
    assert str(info.value) == (
        "TimeLimit expected a sekai.Env, got object. To wrap a gymnasium env, convert it first "
        "with sekai.compat.from_gymnasium(env)."
    )


def test_wrapping_an_env_class_names_the_class_and_asks_for_an_instance():
    with pytest.raises(TypeError) as info:
        sekai.TimeLimit(CounterEnv, 5)
    assert str(info.value) == (
        "TimeLimit expected a sekai.Env, got the class CounterEnv. Pass an instance: CounterEnv()."
    )


def test_a_factory_returning_an_env_class_is_told_to_make_an_instance():
    with pytest.raises(TypeError) as info:
        sekai.SyncVecEnv([lambda: CounterEnv])
    assert str(info.value) == (
        "SyncVecEnv: env_fns[0]() returned the class CounterEnv, not a sekai.Env. "
        "Pass an instance: CounterEnv()."
    )


@pytest.mark.parametrize("attribute", ["env", "observation_space", "unwrapped"])
def test_a_wrapper_that_never_called_super_init_says_to_call_it(attribute):
    class Forgot(sekai.Wrapper):
        def __init__(self, env):
            self.scale = 2.0

    wrapper = Forgot(CounterEnv())
    with pytest.raises(AttributeError) as info:
        getattr(wrapper, attribute)
    assert str(info.value).endswith(
        ": call super().__init__(env) in Forgot.__init__ (it stores the env this wrapper "
        "delegates to)."
    )
    with pytest.raises(AttributeError, match=r"call super\(\)\.__init__\(env\) in Forgot"):
        wrapper.reset(seed=0)


def test_a_missing_attribute_of_an_initialised_wrapper_has_no_such_hint():
    with pytest.raises(AttributeError) as info:
        sekai.TimeLimit(CounterEnv(), 5).no_such_attribute  # noqa: B018
    assert str(info.value) == "'TimeLimit' object has no attribute 'no_such_attribute'"


def test_wrapping_a_vec_env_points_to_the_vector_wrappers():
    with (
        sekai.SyncVecEnv([CounterEnv]) as vec,
        pytest.raises(TypeError) as info,
    ):
        sekai.TimeLimit(vec, 5)
    assert str(info.value) == (
        "TimeLimit expected a sekai.Env, got sekai.vector.sync_vec_env.SyncVecEnv. It is a sekai "
        "VecEnv (several sub-envs), where one env is expected: pass a single env, e.g. "
        "sekai.make(env_id); a VecEnv takes the vector wrappers (sekai.VecWrapper subclasses, "
        "such as those of sekai.vector.wrappers)."
    )


def test_wrapping_a_gymnasium_vector_env_points_to_from_gymnasium_vector():
    gymnasium = pytest.importorskip("gymnasium")
    with pytest.raises(TypeError) as info:
        Plain(gymnasium.make_vec("CartPole-v1", 2))
    message = str(info.value)
    assert message.startswith(
        "Plain expected a sekai.Env, got gymnasium.envs.classic_control.cartpole."
        "CartPoleVectorEnv. It is a gymnasium vector env, where one env is expected"
    )
    assert "sekai.compat.from_gymnasium_vector(envs)" in message


def test_wrapper_delegates_spaces_lazily_unless_assigned():
    env = Base()
    w = Plain(env)
    assert (w.observation_space, w.action_space) == ("obs-space", "act-space")
    env.observation_space = "changed"
    assert w.observation_space == "changed"
    w.action_space = sekai.Discrete(3)
    assert (w.action_space, env.action_space) == (sekai.Discrete(3), "act-space")
    w.action_space = None  # the inner env's again
    assert w.action_space == "act-space"


@pytest.mark.parametrize("name", ["observation_space", "action_space"])
def test_wrapper_space_setters_refuse_what_is_not_a_sekai_space(name):
    # The same check as a VecWrapper's: a gymnasium space would fail later, or never.
    gymnasium = pytest.importorskip("gymnasium")
    w = Plain(Base())
    with pytest.raises(TypeError, match=f"^Plain: {name} must be a sekai.Space, got str.$"):
        setattr(w, name, "Box(3)")
    hint = "got gymnasium.spaces.box.Box. Convert it with sekai.compat.space_from_gymnasium"
    with pytest.raises(TypeError, match=hint):
        setattr(w, name, gymnasium.spaces.Box(-1.0, 1.0, (3,)))
    assert getattr(w, name) == getattr(Base, name)  # nothing was stored


def test_wrapper_delegates_reset_step_close_metadata_and_unwrapped():
    env = Base()
    w = Plain(Plain(env))
    assert w.reset(seed=1).info == {"reset": True}
    assert w.step(5).info == {"t": 1}
    assert env.actions == [5]
    assert w.metadata == {"render_fps": 50}
    assert w.unwrapped is env
    w.close()
    assert env.closed


def test_wrapper_spec_reads_and_writes_the_base_env_spec():
    env = Base()
    w = Plain(env)
    assert w.spec is None
    w.spec = EnvSpec("demo/Base-v0", Base)
    assert env.spec.id == "demo/Base-v0"
    assert str(w) == "<Plain(<demo/Base-v0>)>"


def test_wrapper_metadata_writes_go_to_the_base_env():
    env = Base()
    w = Plain(Plain(env))
    w.metadata = {"render_fps": 25}
    assert env.metadata == {"render_fps": 25} and Base.metadata == {"render_fps": 50}
    w.set_attr("metadata", {"render_fps": 10})
    assert w.metadata == env.metadata == {"render_fps": 10}


def test_wrapper_seeding_uses_the_base_env_generator():
    env = Base()
    w = Plain(env)
    assert w._set_rng(3) == 3
    assert w.rng is env.rng and w._rng_seed == 3
    w._rng_seed = 9
    assert env._rng_seed == 9


def test_assigning_a_wrappers_rng_sets_the_base_envs_generator():
    env = Base()
    w = Plain(Double(env))
    generator = np.random.default_rng(5)
    w.rng = generator
    assert env.rng is generator and w.rng is generator and w.env.rng is generator
    assert "rng" not in vars(w) and "rng" not in vars(w.env)


def test_attributes_are_not_forwarded_through_wrappers():
    with pytest.raises(AttributeError) as info:
        _ = Plain(Base()).x_threshold
    assert str(info.value) == "'Plain' object has no attribute 'x_threshold'"


def test_action_mask_is_forwarded_from_the_layer_that_defines_it():
    assert Plain(Plain(Base())).action_mask() == [1, 0]


def test_get_attr_reads_the_outermost_layer_that_has_it():
    w = Plain(Tagged(Base()))
    assert w.get_attr("x_threshold") == "wrapper-level"
    assert w.get_attr("t") == 0
    with pytest.raises(AttributeError, match="'Base' object has no attribute 'nope'"):
        w.get_attr("nope")


def test_has_attr_looks_through_every_layer():
    w = Plain(Tagged(Base()))
    assert w.has_attr("tag") and w.has_attr("x_threshold") and not w.has_attr("nope")


def test_set_attr_changes_the_layer_that_has_the_attribute_else_the_outermost():
    env = Base()
    w = Plain(Plain(env))
    w.set_attr("x_threshold", 3.0)
    assert env.x_threshold == 3.0
    w.set_attr("new_attr", 1)
    assert w.__dict__["new_attr"] == 1 and not hasattr(env, "new_attr")
    tagged = Plain(Tagged(env))
    tagged.set_attr("x_threshold", 9)
    assert tagged.env.x_threshold == 9 and env.x_threshold == 3.0


def test_set_attr_goes_through_the_base_envs_own_attribute_hooks():
    class Bridge(Base):
        """A base env whose attributes live on another object, as from_gymnasium's do."""

        def __init__(self):
            super().__init__()
            self.inner = {"speed": 1}

        def has_attr(self, name):
            return hasattr(self, name) or name in self.inner

        def set_attr(self, name, value):
            if hasattr(self, name):
                setattr(self, name, value)
            else:
                self.inner[name] = value

    env = Bridge()
    w = Plain(Plain(env))
    w.set_attr("speed", 2)
    assert env.inner["speed"] == 2 and "speed" not in vars(w)
    w.set_attr("x_threshold", 3.0)
    assert env.x_threshold == 3.0


def test_iteration_yields_layers_outermost_first_and_len_counts_them():
    env = Base()
    w = Tagged(Plain(env))
    assert [type(layer).__name__ for layer in w] == ["Tagged", "Plain", "Base"]
    assert len(w) == 3


def test_wrapper_str_nests_inner_str():
    assert str(Plain(Base())) == "<Plain(<Base>)>"
    assert repr(sekai.Wrapper(Base())) == "<Wrapper(<Base>)>"


def test_async_methods_await_the_inner_async_methods():
    calls = []

    class AsyncBase(Base):
        async def async_reset(self, *, seed=None, options=None):
            calls.append("async_reset")
            return self.reset(seed=seed, options=options)

        async def async_step(self, action):
            calls.append("async_step")
            return self.step(action)

    w = Plain(Plain(AsyncBase()))

    async def go():
        await w.async_reset(seed=0)
        return await w.async_step(1)

    assert asyncio.run(go()).observation == 1
    assert calls == ["async_reset", "async_step"]


def test_observation_wrapper_transforms_reset_and_step_on_both_paths():
    w = Double(Base())
    assert w.reset().observation == 0
    result = w.step(0)
    assert (result.observation, result.info) == (2, {"t": 1})

    async def go():
        await w.async_reset()
        return await w.async_step(0)

    assert asyncio.run(go()).observation == 2


def test_reward_wrapper_changes_step_rewards_only():
    w = Bonus(Base())
    assert w.reset().info == {"reset": True}
    assert w.step(0).reward == 101.0
    assert asyncio.run(w.async_step(0)).reward == 101.0


def test_action_wrapper_maps_actions_on_both_paths():
    env = Base()
    w = Flip(env)
    w.step(0)
    asyncio.run(w.async_step(1))
    assert env.actions == [1, 0]


def test_reverse_action_is_not_implemented_by_default():
    with pytest.raises(NotImplementedError) as info:
        Flip(Base()).reverse_action(0)
    assert str(info.value) == (
        "Flip does not implement reverse_action(). "
        "Implement it if you need to map env actions back to wrapper actions."
    )


@pytest.mark.parametrize(
    ("base", "method"),
    [
        (sekai.ObservationWrapper, "observation"),
        (sekai.RewardWrapper, "reward"),
        (sekai.ActionWrapper, "action"),
    ],
)
def test_transforming_wrappers_are_abstract_in_their_method(base, method):
    cls = type("X", (base,), {})
    # Python 3.12 reworded it: "... X without an implementation for abstract method 'reward'"
    with pytest.raises(
        TypeError,
        match=rf"Can't instantiate abstract class X with(out an implementation for)? abstract "
        rf"method '?{method}\b",
    ):
        cls(Base())


class Doubling(ResultWrapper):
    def _step_action(self, action):
        return 2 * action


class InheritsDoubling(Doubling):
    pass


class DoublingTimeLimit(TimeLimit):
    def _step_action(self, action):
        return 2 * action


class PatchedLater(ResultWrapper):
    pass


PatchedLater._step_action = Doubling._step_action  # a class given the hook after its creation


def _given_the_hook(wrapper):
    wrapper._step_action = lambda action: 2 * action  # an instance given the hook (a patch)
    return wrapper


@pytest.mark.parametrize(
    "wrap",
    [
        Doubling,
        InheritsDoubling,
        PatchedLater,
        lambda env: DoublingTimeLimit(env, 10),
        lambda env: _given_the_hook(ResultWrapper(env)),
        lambda env: _given_the_hook(TimeLimit(env, 10)),
    ],
    ids=["class", "subclass", "class-later", "timelimit", "instance", "timelimit-instance"],
)
def test_a_step_action_hook_maps_the_action_wherever_it_is_given(wrap):
    env = Base()
    w = wrap(env)
    w.reset()
    w.step(3)
    asyncio.run(w.async_step(4))
    assert env.actions == [6, 8]


@pytest.mark.parametrize(
    "wrap", [ResultWrapper, Double, Bonus, lambda env: TimeLimit(env, 10), Plain]
)
def test_a_wrapper_keeping_the_identity_hook_passes_the_action_object_itself(wrap):
    env = Base()
    w = wrap(env)
    w.reset()
    sync_action, async_action = object(), object()
    w.step(sync_action)
    asyncio.run(w.async_step(async_action))
    assert env.actions[0] is sync_action and env.actions[1] is async_action


def test_a_sync_step_does_not_call_the_identity_hook():
    # make() adds a TimeLimit to every env: the identity call was a per-step cost.
    w = TimeLimit(Base(), 10)
    w.reset()
    called = []

    def profile(frame, event, arg):
        if event == "call":
            called.append(frame.f_code)

    sys.setprofile(profile)
    try:
        w.step(0)
    finally:
        sys.setprofile(None)
    assert TimeLimit._step_result.__code__ in called  # the profile saw the step
    assert ResultWrapper._step_action.__code__ not in called
