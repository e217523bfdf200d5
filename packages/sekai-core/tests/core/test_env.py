import asyncio
import gc
import subprocess
import sys
import textwrap
import warnings
from collections import OrderedDict
from typing import Any, ClassVar

import numpy as np
import pytest

import sekai
from sekai.registry import EnvSpec


class Counter(sekai.Env):
    """Counts steps; draws its start from self.rng."""

    def __init__(self):
        self.t = 0
        self.x_threshold = 2.4
        self.closed = False

    def reset(self, *, seed=None, options=None):
        self._set_rng(seed)
        self.t = 0
        return sekai.ResetResult(float(self.rng.random()), {"options": options})

    def step(self, action):
        self.t += 1
        return sekai.StepResult(self.t, float(action), self.t >= 3, False, {})

    def close(self):
        self.closed = True


def test_env_is_abstract_in_reset_and_step():
    with pytest.raises(TypeError, match="Can't instantiate abstract class Env"):
        sekai.Env()


def test_env_can_be_subscripted_for_typing():
    assert sekai.Env[np.ndarray, np.intp] is not None


def test_subclass_needs_no_super_init_and_has_env_defaults():
    env = Counter()
    assert env.metadata == {}
    assert env.spec is None
    assert env.unwrapped is env


def test_env_metadata_is_a_class_attribute_default_empty():
    assert sekai.Env.metadata == {}


def test_metadata_written_by_one_env_stays_with_its_own_class():
    class Ticker(Counter):  # no metadata of its own: writes into the inherited dict
        def __init__(self, fps):
            super().__init__()
            self.metadata["render_fps"] = fps

    class Unrelated(Counter):
        pass

    Ticker(fps=4)
    assert Unrelated().metadata == {} and Counter().metadata == {} and sekai.Env.metadata == {}
    assert Ticker.metadata == {"render_fps": 4}


def test_a_subclass_starts_from_a_copy_of_its_parents_metadata():
    class Base(Counter):
        metadata: ClassVar[dict[str, Any]] = {"render_fps": 50}

    class Child(Base):
        pass

    assert Child.metadata == {"render_fps": 50} and Child.metadata is not Base.metadata
    Child.metadata["render_fps"] = 10
    assert Base.metadata == {"render_fps": 50}


def test_a_subclass_copy_of_metadata_keeps_the_dict_type():
    class Base(Counter):
        metadata: ClassVar[dict[str, Any]] = OrderedDict(render_fps=50)

    class Child(Base):
        pass

    assert type(Child.metadata) is OrderedDict and Child.metadata is not Base.metadata


def test_wrappers_keep_reading_and_writing_the_base_envs_metadata():
    class Base(Counter):
        metadata: ClassVar[dict[str, Any]] = {"render_fps": 50}

    class Doubler(sekai.Wrapper):
        pass

    env = Base()
    wrapped = Doubler(sekai.wrappers.TimeLimit(env, 5))
    assert wrapped.metadata == {"render_fps": 50}
    wrapped.metadata = {"render_fps": 25}
    assert env.metadata == {"render_fps": 25} and Base.metadata == {"render_fps": 50}


def test_async_methods_default_to_the_sync_ones():
    env = Counter()

    async def go():
        first = await env.async_reset(seed=1, options={"a": 1})
        return first, await env.async_step(2)

    first, second = asyncio.run(go())
    assert first.info == {"options": {"a": 1}}
    assert (second.observation, second.reward) == (1, 2.0)


def test_env_is_a_context_manager_that_closes():
    with Counter() as env:
        assert isinstance(env, Counter)
    assert env.closed


def test_base_close_is_a_no_op():
    class Plain(sekai.Env):
        def reset(self, *, seed=None, options=None):
            return sekai.ResetResult(0, {})

        def step(self, action):
            return sekai.StepResult(0, 0.0, False, False, {})

    assert Plain().close() is None


def test_str_is_class_name_or_spec_id():
    env = Counter()
    assert str(env) == repr(env) == "<Counter>"
    env.spec = EnvSpec("demo/Counter-v0", Counter)
    assert str(env) == "<demo/Counter-v0>"


def test_bare_env_iterates_as_itself():
    env = Counter()
    assert list(env) == [env]
    assert len(env) == 1


def test_attribute_helpers_on_a_bare_env():
    env = Counter()
    assert env.has_attr("x_threshold") and not env.has_attr("nope")
    assert env.get_attr("x_threshold") == 2.4
    env.set_attr("x_threshold", 3.0)
    assert env.x_threshold == 3.0
    with pytest.raises(AttributeError, match="'Counter' object has no attribute 'nope'"):
        env.get_attr("nope")


def test_reset_with_a_seed_is_reproducible_and_none_continues_the_stream():
    env = Counter()
    a = env.reset(seed=42).observation
    b = env.reset().observation
    assert env.reset(seed=42).observation == a
    assert env.reset().observation == b
    assert a != b


def test_rng_is_created_lazily_from_entropy():
    env = Counter()
    assert env._rng is None
    assert isinstance(env.rng, np.random.Generator)
    assert env._rng_seed is not None and env._rng_seed >= 0


def test_set_rng_returns_the_seed_used():
    env = Counter()
    assert env._set_rng(7) == 7
    assert env._set_rng(None) == 7
    generator = np.random.default_rng(0)
    assert env._set_rng(generator) == -1
    assert env.rng is generator
    assert env._set_rng(np.int64(3)) == 3


def test_set_rng_without_a_previous_seed_returns_the_drawn_entropy():
    env = Counter()
    seed = env._set_rng(None)
    assert seed == env._rng_seed and seed.bit_length() > 64


def test_assigning_rng_records_seed_minus_one_and_checks_the_type():
    env = Counter()
    env.rng = np.random.default_rng(1)
    assert env._rng_seed == -1
    with pytest.raises(TypeError, match="rng must be a numpy Generator, got int"):
        env.rng = 3


@pytest.mark.parametrize("seed", [1.5, True, np.float64(2.0), "3", np.bool_(True)])
def test_set_rng_rejects_non_integer_seeds(seed):
    with pytest.raises(TypeError):
        Counter()._set_rng(seed)


def test_set_rng_rejects_negative_seeds_naming_the_value():
    with pytest.raises(ValueError, match="non-negative integer, got -1"):
        Counter()._set_rng(-1)


class Scaled(sekai.Wrapper):
    def step(self, action):
        r = self.env.step(action)
        return sekai.StepResult(r.observation, 10 * r.reward, r.terminated, r.truncated, r.info)


def test_async_routing_runs_a_sync_only_override_as_the_spec_example():
    w = Scaled(Counter())

    async def go():
        await w.async_reset(seed=0)
        return await w.async_step(1)

    assert asyncio.run(go()).reward == 10.0


def test_routed_async_method_is_named_after_the_class():
    assert Scaled.async_step.__name__ == "async_step"
    assert Scaled.async_step.__qualname__ == "Scaled.async_step"


def test_routing_calls_the_overriding_class_function_so_chained_overrides_run_once():
    calls = []

    class Base(sekai.Wrapper):
        def step(self, action):
            calls.append("base")
            return self.env.step(action)

    class Both(Base):
        def step(self, action):
            calls.append("both-sync")
            return super().step(action)

        async def async_step(self, action):
            calls.append("both-async")
            return await super().async_step(action)

    env = Both(Counter())
    env.reset(seed=0)
    asyncio.run(env.async_step(1))
    assert calls == ["both-async", "base"]


def _skip_message(subject, sync, owner):
    return (
        f"{subject} overrides async_{sync}() but not {sync}(), so {sync}() would be "
        f"{owner}.{sync}(), which does not run that logic: sync callers (a plain loop, "
        "SyncVecEnv, ProcVecEnv) would get other results than async ones. Override "
        f"{sync}() too, sharing the logic with async_{sync}() through a helper, or running the "
        f"coroutine with asyncio.run(self.async_{sync}(...))."
    )


@pytest.mark.parametrize(
    ("base", "owner"),
    [
        (sekai.Wrapper, "Wrapper"),
        (sekai.RewardWrapper, "ResultWrapper"),
        (sekai.vector.VecWrapper, "VecWrapper"),
        (sekai.VecTransformReward, "VecResultWrapper"),
    ],
)
@pytest.mark.parametrize("sync", ["step", "reset"])
def test_a_wrapper_overriding_only_an_async_method_is_refused_when_defined(base, owner, sync):
    # Before: its sync method passed the call inward without its logic, so step() and
    # async_step() (the sync and the async backends) gave other results, silently.
    async def scaled(self, *args, **kwargs):
        raise AssertionError("not reached")

    with pytest.raises(TypeError) as caught:
        type("AsyncOnly", (base,), {f"async_{sync}": scaled})
    assert str(caught.value) == _skip_message("AsyncOnly", sync, owner)


@pytest.mark.parametrize(
    ("base", "owner"),
    [(sekai.AutoReset, "AutoReset"), (sekai.ActionRepeat, "ActionRepeat")],
)
def test_a_concrete_wrappers_subclass_overriding_only_async_step_is_refused(base, owner):
    # The concrete wrapper's own step() lacks the subclass's async logic just the same.
    async def scaled(self, action):
        raise AssertionError("not reached")

    with pytest.raises(TypeError) as caught:
        type("AsyncOnly", (base,), {"async_step": scaled})
    assert str(caught.value) == _skip_message("AsyncOnly", "step", owner)


def test_a_mixins_async_method_above_a_wrappers_sync_one_is_refused():
    class Bps:
        async def async_step(self, action):
            return await self.env.async_step(action)

    with pytest.raises(TypeError) as caught:

        class Scaled(Bps, sekai.Wrapper):
            pass

    assert str(caught.value) == _skip_message(
        "test_a_mixins_async_method_above_a_wrappers_sync_one_is_refused.<locals>.Scaled "
        "(through test_a_mixins_async_method_above_a_wrappers_sync_one_is_refused.<locals>.Bps)",
        "step",
        "Wrapper",
    )


def test_an_env_may_add_async_behaviour_to_an_inherited_sync_env():
    # The env's own step() is its logic (the async page's feed adds a reader task); an env
    # with only async methods stays abstract, as the async page says.
    class AsyncCounter(Counter):
        async def async_step(self, action):
            await asyncio.sleep(0)
            return self.step(action)

    env = AsyncCounter()
    env.reset(seed=0)
    assert asyncio.run(env.async_step(1)).reward == Counter().step(1).reward

    class OnlyAsync(sekai.Env):
        async def async_step(self, action):
            return sekai.StepResult(0, 0.0, False, False, {})

        def reset(self, *, seed=None, options=None):
            return sekai.ResetResult(0, {})

    with pytest.raises(TypeError, match=r"abstract method '?step"):
        OnlyAsync()


def test_a_class_overriding_both_methods_keeps_its_own_async_method():
    class Native(sekai.Env):
        def reset(self, *, seed=None, options=None):
            return sekai.ResetResult("sync", {})

        async def async_reset(self, *, seed=None, options=None):
            return sekai.ResetResult("async", {})

        def step(self, action):
            return sekai.StepResult(0, 0.0, False, False, {})

    assert asyncio.run(Native().async_reset()).observation == "async"


class _RunsItsCoroutine(sekai.Env):
    """Its sync step() drives its own coroutine with asyncio.run(), as the async page's
    VenueEnv does; only step() is overridden, so async_step() runs it."""

    observation_space = sekai.Discrete(2)
    action_space = sekai.Discrete(2)

    def reset(self, *, seed=None, options=None):
        return sekai.ResetResult(0, {})

    async def _quote(self):
        return sekai.StepResult(0, 0.0, False, False, {})

    def step(self, action):
        return asyncio.run(self._quote())


class _StepOnly(sekai.Wrapper):
    def step(self, action):
        return self.env.step(action)


@pytest.mark.parametrize("wrap", [lambda env: env, _StepOnly], ids=["default", "routed"])
def test_a_sync_step_refused_inside_a_running_loop_leaves_no_unawaited_coroutine(wrap):
    env = wrap(_RunsItsCoroutine())

    async def main():
        with pytest.raises(RuntimeError, match="cannot be called from a running event loop"):
            await env.async_step(0)

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        asyncio.run(main())
        gc.collect()
    assert [str(w.message) for w in caught] == []


def test_an_env_may_store_an_attribute_named_render():
    class Flagged(sekai.Env):
        def __init__(self, render=False):
            self.render = render
            self.observation_space = self.action_space = sekai.Discrete(2)

        def reset(self, *, seed=None, options=None):
            return sekai.ResetResult(0, {})

        def step(self, action):
            return sekai.StepResult(0, 0.0, True, False, {})

    env = Flagged(render=True)
    assert env.render is True and env.get_attr("render") is True
    assert sekai.wrappers.TimeLimit(env, 5).get_attr("render") is True
    with pytest.raises(
        AttributeError, match="has no attribute 'render': sekai envs have no render"
    ):
        Flagged.__new__(Flagged).render  # noqa: B018


def test_a_step_only_wrapper_failing_inside_the_loop_is_named_in_a_note() -> None:
    import asyncio

    class RunsItsOwnLoop(sekai.Env):  # type: ignore[type-arg]
        observation_space = sekai.Discrete(2)
        action_space = sekai.Discrete(2)

        def reset(self, *, seed: Any = None, options: Any = None) -> Any:
            return sekai.ResetResult(0, {})

        def step(self, action: Any) -> Any:
            return asyncio.run(asyncio.sleep(0, sekai.StepResult(0, 0.0, False, False, {})))

    class StepOnly(sekai.Wrapper):  # type: ignore[type-arg]
        def step(self, action: Any) -> Any:
            return self.env.step(action)

    async def main() -> None:
        with pytest.raises(RuntimeError, match=r"^asyncio\.run\(\) cannot be called") as info:
            await StepOnly(RunsItsOwnLoop()).async_step(0)
        assert any(
            "StepOnly overrides step() but not async_step()" in n for n in info.value.__notes__
        )

    asyncio.run(main())


def test_the_context_managers_type_hints_resolve_at_runtime():
    """``__enter__`` gives type checkers the subclass, with hints that resolve at runtime, as
    tools such as pydantic, typeguard and doc generators ask for them."""
    import typing

    from sekai.core.multi_agent import MultiAgentEnv
    from sekai.rendering.renderer import BaseRenderer
    from sekai.vector import VecEnv

    for cls in (sekai.Env, MultiAgentEnv, VecEnv, BaseRenderer):
        hints = typing.get_type_hints(cls.__enter__)
        returned = hints["return"]
        assert isinstance(returned, typing.TypeVar), cls
        assert hints["self"] is returned, cls


def test_the_note_naming_a_step_only_wrapper_is_printed_under_the_traceback() -> None:
    """Printed by Python's own excepthook on every Python (3.10 has no add_note)."""
    script = textwrap.dedent("""
        import asyncio, sekai

        class RunsItsOwnLoop(sekai.Env):
            observation_space = action_space = sekai.Discrete(2)

            def reset(self, *, seed=None, options=None):
                return sekai.ResetResult(0, {})

            def step(self, action):
                return asyncio.run(asyncio.sleep(0))

        class StepOnly(sekai.Wrapper):
            def step(self, action):
                return self.env.step(action)

        asyncio.run(StepOnly(RunsItsOwnLoop()).async_step(0))
    """)
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=120, check=False
    )
    assert done.returncode == 1
    last = done.stderr.rstrip().splitlines()[-2:]
    assert last[0].startswith("RuntimeError: asyncio.run() cannot be called"), done.stderr
    assert last[1].startswith("StepOnly overrides step() but not async_step(), so its"), last
