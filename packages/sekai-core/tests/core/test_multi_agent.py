"""MultiAgentEnv, the parallel multi-agent base class (core.md §10)."""

from __future__ import annotations

import asyncio
from typing import Any

import numpy as np
import pytest

import sekai
from sekai.core.result import MAResetResult, MAStepResult


class Duo(sekai.MultiAgentEnv[np.ndarray, int, str]):
    """Two agents; ``a`` is done after one step, ``b`` after two."""

    def __init__(self) -> None:
        self.possible_agents = ["a", "b"]
        self.agents = []
        self.observation_spaces = {a: sekai.Box(0, 1, (1,)) for a in self.possible_agents}
        self.action_spaces = {a: sekai.Discrete(2) for a in self.possible_agents}
        self.closed = False
        self.t = 0

    def reset(self, *, seed: Any = None, options: Any = None) -> MAResetResult[np.ndarray]:
        self._set_rng(seed)
        self.agents, self.t = list(self.possible_agents), 0
        return MAResetResult({a: self.rng.random(1) for a in self.agents}, {})

    def step(self, actions: dict[str, int]) -> MAStepResult[np.ndarray]:
        self.t += 1
        terminated = {a: self.t >= (1 if a == "a" else 2) for a in self.agents}
        observations = {a: self.rng.random(1) for a in self.agents}
        self.agents = [a for a in self.agents if not terminated[a]]
        return MAStepResult(observations, dict.fromkeys(terminated, 1.0), terminated, {}, {})

    def close(self) -> None:
        self.closed = True


def test_the_spec_example_all_done_and_any_done() -> None:
    env = Duo()
    env.reset(seed=0)
    s = env.step({"a": 0, "b": 1})
    assert (s.all_done, s.any_done) == (False, True)
    assert env.step({"b": 0}).all_done
    assert sekai.MAStepResult({}, {}, {}, {}, {}).all_done is False


def test_counts_spaces_repr_and_the_env_like_attributes() -> None:
    env = Duo()
    assert str(env) == repr(env) == "<Duo agents=[]>"
    env.reset(seed=0)
    assert repr(env) == "<Duo agents=['a', 'b']>"
    assert (env.num_agents, env.max_num_agents) == (2, 2)
    env.step({"a": 0, "b": 0})
    assert (env.num_agents, env.max_num_agents) == (1, 2)
    assert env.observation_space("a") == sekai.Box(0, 1, (1,))
    assert env.action_space("b") == sekai.Discrete(2)
    assert (Duo.metadata, env.spec, env.unwrapped) == ({}, None, env)
    assert not isinstance(env, sekai.Env)


def test_a_repr_works_before_agents_are_set() -> None:
    class Early(Duo):
        def __init__(self) -> None:
            self.seen = repr(self)  # as a debugger shows it mid-__init__
            super().__init__()

    assert Early().seen == "<Early>"


def test_an_unknown_agent_names_the_agents_there_are() -> None:
    env = Duo()
    with pytest.raises(KeyError, match=r"Duo\.action_spaces has no agent 'c'; it has \['a', 'b'\]"):
        env.action_space("c")
    with pytest.raises(KeyError, match=r"observation_spaces has no agent 0"):
        env.observation_space(0)  # type: ignore[arg-type]


def test_seeding_is_envs() -> None:
    first, second = Duo(), Duo()
    assert first.reset(seed=3).observations["a"] == second.reset(seed=3).observations["a"]
    assert first._set_rng(np.random.default_rng(0)) == -1
    with pytest.raises(TypeError):
        first.reset(seed=1.5)


def test_async_defaults_call_the_overridden_sync_methods_and_close_on_exit() -> None:
    async def run(env: Duo) -> tuple[Any, Any]:
        return await env.async_reset(seed=5), await env.async_step({"a": 0, "b": 0})

    reset, step = asyncio.run(run(Duo()))
    env = Duo()
    assert reset.observations["b"] == env.reset(seed=5).observations["b"]
    assert step.terminated == {"a": True, "b": False}
    with Duo() as env:
        pass
    assert env.closed


def test_reset_and_step_are_abstract() -> None:
    class Half(sekai.MultiAgentEnv[Any, Any, str]):
        def reset(self, *, seed: Any = None, options: Any = None) -> Any: ...

    with pytest.raises(TypeError, match="step"):
        Half()  # type: ignore[abstract]


@pytest.mark.parametrize("method", ["reset", "step"])
def test_a_sync_method_that_runs_its_own_loop_fails_inside_one_without_a_stray_warning(
    method: str,
) -> None:
    import gc
    import warnings

    class Runs(Duo):
        async def _reset(self) -> Any:
            return super().reset(seed=0)

        async def _step(self, actions: dict[str, int]) -> Any:
            return super().step(actions)

        def reset(self, *, seed: Any = None, options: Any = None) -> Any:
            return asyncio.run(self._reset())

        def step(self, actions: dict[str, int]) -> Any:
            return asyncio.run(self._step(actions))

    async def main() -> None:
        env = Runs()
        with pytest.raises(RuntimeError, match=r"asyncio\.run\(\) cannot be called"):
            if method == "reset":
                await env.async_reset(seed=0)
            else:
                await env.async_step({"a": 0, "b": 0})

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        asyncio.run(main())
        gc.collect()
    assert not [w for w in caught if "never awaited" in str(w.message)]


def _make_registered() -> object:
    sekai.register("ma/Duo-v0", Duo)
    return sekai.make("ma/Duo-v0")


@pytest.mark.parametrize(
    "use",
    [
        pytest.param(lambda: sekai.TimeLimit(Duo(), 5), id="wrapper"),
        pytest.param(lambda: sekai.SyncVecEnv([Duo]), id="SyncVecEnv"),
        pytest.param(_make_registered, id="make"),
        pytest.param(lambda: sekai.VecWrapper(Duo()), id="VecWrapper"),
    ],
)
def test_single_agent_apis_give_a_multi_agent_env_the_multi_agent_route(
    use: Any, sekai_registry: Any
) -> None:
    with pytest.raises(TypeError, match=r"not a sekai\.Env|expected a sekai(\.| Vec)Env") as caught:
        use()
    message = str(caught.value)
    assert message.endswith(
        "Duo is a multi-agent env, and sekai's wrappers, registry and vector envs take "
        "single-agent envs only: use a sekai.MultiAgentEnv directly, or with PettingZoo-based "
        "tools through sekai.compat.to_pettingzoo(env)."
    )
    assert "from_gymnasium" not in message


def test_multi_agent_metadata_written_by_one_env_stays_with_its_own_class() -> None:
    class Market(Duo):  # no metadata of its own: writes into the inherited dict
        def __init__(self) -> None:
            super().__init__()
            self.metadata["name"] = "market_v0"

    class Auction(Duo):
        pass

    Market()
    assert Auction.metadata == {} and Duo.metadata == {} and sekai.MultiAgentEnv.metadata == {}
    assert Market.metadata == {"name": "market_v0"}
