"""The "jax" vectorization mode and the functional API, on CPU."""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import sekai
from sekai.jax import FunctionalEnv, JaxVecEnv, make_functional
from sekai.registry.spec import EnvSpec, WrapperSpec
from sekai.spaces import Box, Discrete
from sekai.testing.kernel_modes import MODE_CHECKS, ModeCase
from sekai.testing.kernels import kernel_backend
from sekai.vector.kernel import ArrayKernel, Draw


@pytest.mark.parametrize("check", MODE_CHECKS.values(), ids=list(MODE_CHECKS))
def test_the_jax_mode_passes_every_kernel_mode_check(check: Callable[[ModeCase], None]) -> None:
    check(ModeCase("jax", jnp.asarray, "jax"))


def test_make_vec_jax_gives_jitted_envs_returning_jax_arrays() -> None:
    envs = sekai.make_vec("CartPole-v1", 4, vectorization_mode="jax")
    assert isinstance(envs, JaxVecEnv)
    assert repr(envs) == "JaxVecEnv(CartPole-v1, num_envs=4, backend=jax, float32)"
    first = envs.reset(seed=0)
    assert isinstance(first.observations, jax.Array) and first.observations.shape == (4, 4)
    step = envs.step(np.ones(4, dtype=np.int64))
    assert step.observations.dtype == jnp.float32 and step.rewards.dtype == jnp.float32
    assert isinstance(step.terminated, jax.Array) and step.terminated.dtype == jnp.bool_
    assert step.infos[0]["elapsed_steps"] == 1  # the registered 500-step limit counts
    envs.close()


def test_synchronize_blocks_until_the_last_step_is_computed(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # A jitted call returns before its outputs are computed: a timer must wait for them.
    waited: list[Any] = []
    block = jax.block_until_ready
    monkeypatch.setattr(jax, "block_until_ready", lambda x: waited.append(x) or block(x))
    envs = sekai.make_vec("CartPole-v1", 4096, vectorization_mode="jax")
    envs.reset(seed=0)
    step = envs.step(np.ones(4096, dtype=np.int64))
    envs.unwrapped.synchronize()
    [(carry, last)] = waited
    assert last.observation is step.observations
    leaves = jax.tree_util.tree_leaves((carry, last))
    assert leaves and all(leaf.is_ready() for leaf in leaves)
    envs.close()


def test_the_functional_api_runs_inside_jit_and_scan_with_autoreset() -> None:
    env = make_functional("CartPole-v1", 16, max_episode_steps=20)
    assert isinstance(env, FunctionalEnv)
    state, _, _ = env.reset(jax.random.PRNGKey(0))

    @jax.jit
    def rollout(state: dict, key: jax.Array) -> tuple[dict, jax.Array]:
        def body(carry: tuple, key: jax.Array) -> tuple:
            state, params = carry
            t = env.step(key, state, jnp.zeros(16, jnp.int32), params)
            return (t.state, params), (t.reward, t.done, t.observation)

        keys = jax.random.split(key, 50)
        (state, _), out = jax.lax.scan(body, (state, env.default_params), keys)
        return state, out

    state, (rewards, dones, observations) = rollout(state, jax.random.PRNGKey(1))
    assert rewards.shape == (50, 16) and bool(dones.any())
    restarted = np.asarray(observations)[np.asarray(dones)]
    assert np.abs(restarted).max() <= 0.05  # the new episodes' first observations
    assert int(np.asarray(state["elapsed"]).max()) < 20


def test_the_functional_api_vmaps_over_parameters() -> None:
    env = make_functional("CartPole-v1", 4)
    state, _, _ = env.reset(jax.random.PRNGKey(0))
    forces = jnp.array([5.0, 10.0, 20.0])
    params = {**env.default_params, "force_mag": forces}
    axes = {name: (0 if name == "force_mag" else None) for name in params}
    step = jax.vmap(env.step, in_axes=(None, None, None, axes))
    out = step(jax.random.PRNGKey(1), state, jnp.ones(4, jnp.int32), params)
    x_dot = np.asarray(out.state["state"]["x_dot"])
    assert x_dot.shape == (3, 4) and (np.diff(x_dot, axis=0) > 0).all()


def test_a_dtype_is_the_one_x64_gives_or_refused_with_the_switch() -> None:
    def make(dtype: Any) -> Any:
        return sekai.make_vec(
            "CartPole-v1", 2, vectorization_mode="jax", vector_kwargs={"dtype": dtype}
        )

    assert make("float32").backend.float_dtype == jnp.float32
    with pytest.raises(ValueError, match=r"jax\.config\.update\('jax_enable_x64', True\)"):
        make("float64")
    with pytest.raises(TypeError, match=r"^dtype must be 'float32' or 'float64' .*'bfloat16'"):
        make("bfloat16")
    jax.config.update("jax_enable_x64", True)
    try:
        assert make(jnp.float64).backend.float_dtype == jnp.float64
        with pytest.raises(ValueError, match=r"'jax_enable_x64', False\)"):
            make("float32")
    finally:
        jax.config.update("jax_enable_x64", False)


def test_floats_are_float64_when_x64_is_on() -> None:
    jax.config.update("jax_enable_x64", True)
    try:
        envs = sekai.make_vec("CartPole-v1", 2, vectorization_mode="jax")
        envs.reset(seed=0)
        out = envs.step(np.zeros(2, dtype=np.int64))
        assert out.rewards.dtype == jnp.float64 and envs.state["x"].dtype == jnp.float64
        assert out.observations.dtype == jnp.float32  # the observation space's dtype
    finally:
        jax.config.update("jax_enable_x64", False)


def test_a_float64_env_refuses_to_run_once_x64_is_turned_off() -> None:
    # JAX would run it in float32 (and int32) while it reports float64.
    jax.config.update("jax_enable_x64", True)
    try:
        envs = sekai.make_vec("CartPole-v1", 2, vectorization_mode="jax")
        envs.reset(seed=0)
        env = make_functional("CartPole-v1", 2)
        state, _, _ = env.reset(jax.random.PRNGKey(0))
        step = jax.jit(env.step)
        action = jnp.zeros(2, jnp.int32)
        step(jax.random.PRNGKey(1), state, action)
        jax.config.update("jax_enable_x64", False)
        message = (
            r"^this env was built in float64, with jax_enable_x64 on, which is now off: JAX "
            r"computes in float32 unless its 64-bit mode is on; call "
            r"jax\.config\.update\('jax_enable_x64', True\) again before resetting or stepping it"
        )
        calls: list[Callable[[], object]] = [
            lambda: envs.step(np.zeros(2, dtype=np.int64)),
            lambda: envs.step(action),
            lambda: envs.reset(seed=1),
            lambda: env.reset(jax.random.PRNGKey(0)),
            lambda: env.step(jax.random.PRNGKey(1), state, action),
            lambda: step(jax.random.PRNGKey(1), state, action),  # traced again
        ]
        for call in calls:
            with pytest.raises(ValueError, match=message):
                call()
        jax.config.update("jax_enable_x64", True)
        assert envs.step(np.zeros(2, dtype=np.int64)).rewards.dtype == jnp.float64
    finally:
        jax.config.update("jax_enable_x64", False)


@pytest.mark.parametrize(
    ("kwargs", "error", "message"),
    [
        ({"num_envs": -1}, ValueError, "num_envs must be >= 1, got -1."),
        ({"num_envs": 2.5}, TypeError, "num_envs must be an int, got float."),
        ({"num_envs": 2, "max_episode_steps": 0}, ValueError, "max_episode_steps must be >= 1"),
    ],
)
def test_make_functional_checks_its_sizes(kwargs: dict, error: type, message: str) -> None:
    with pytest.raises(error, match=f"^{re.escape(message)}"):
        make_functional("CartPole-v1", **kwargs)


def test_functional_params_with_an_unknown_name_are_refused() -> None:
    env = make_functional("CartPole-v1", 2)
    state, _, _ = env.reset(jax.random.PRNGKey(0))
    with pytest.raises(ValueError, match=r"^unknown params \['force_magg'\] for CartPoleKernel"):
        env.step(jax.random.PRNGKey(1), state, jnp.zeros(2, jnp.int32), {"force_magg": 100.0})


def test_the_device_may_be_a_platform_name() -> None:
    envs = sekai.make_vec(
        "CartPole-v1", 2, vectorization_mode="jax", vector_kwargs={"device": "cpu"}
    )
    assert envs.reset(seed=0).observations.devices() == {jax.devices("cpu")[0]}
    with pytest.raises(ValueError, match=r"^device 'cpu:7': the index must be one of 0\.\.0"):
        sekai.make_vec(
            "CartPole-v1", 2, vectorization_mode="jax", vector_kwargs={"device": "cpu:7"}
        )
    with pytest.raises(TypeError, match=r"^device must be a jax\.Device or a platform name"):
        sekai.make_vec("CartPole-v1", 2, vectorization_mode="jax", vector_kwargs={"device": 3})


@dataclass(frozen=True)
class _NoiseParams:
    scale: float = 1.0


class _NoisyReset(ArrayKernel[_NoiseParams]):
    """Resets from seven normals a sub-env (a shape nothing else has); episodes last 3 steps."""

    def __init__(self) -> None:
        self.observation_space = Box(-100.0, 100.0, (1,))
        self.action_space = Discrete(2)
        self.params = _NoiseParams()

    def reset_draws(self, params: _NoiseParams) -> tuple[Draw, ...]:
        return (Draw("noise", "normal", (7,)),)

    def reset(self, xp: Any, params: Any, draws: Any, mask: Any, state: Any) -> Any:
        x = params.scale * draws["noise"][:, 3]
        t = xp.zeros(mask.shape, dtype=xp.int32)
        if state is not None:
            x, t = xp.where(mask, x, state["x"]), xp.where(mask, t, state["t"])
        return {"x": x, "t": t}, x[:, None], {}

    def step(self, xp: Any, params: Any, state: Any, action: Any, draws: Any) -> Any:
        x, t = state["x"] + 1.0, state["t"] + 1
        return {"x": x, "t": t}, x[:, None], x, t >= 3, t < 0, {}


class _Labelled(_NoisyReset):
    """Infos whose keys are not in sorted order."""

    def reset(self, xp: Any, params: Any, draws: Any, mask: Any, state: Any) -> Any:
        state, obs, _ = super().reset(xp, params, draws, mask, state)
        return state, obs, {"x": state["x"], "at": state["t"]}

    def step(self, xp: Any, params: Any, state: Any, action: Any, draws: Any) -> Any:
        *head, _ = super().step(xp, params, state, action, draws)
        return (*head, {"t": head[0]["t"], "moved": head[0]["x"]})


@dataclass(frozen=True)
class _ScaleParams:
    scale: float = 1.0

    def __post_init__(self) -> None:
        if not float(self.scale) >= 0.0:
            raise ValueError(f"scale must be >= 0, got {self.scale}.")


class _Scaled(_NoisyReset):
    """Refuses, as check_params, a scale whose square its float dtype cannot hold."""

    def __init__(self) -> None:
        super().__init__()
        self.params = _ScaleParams()  # type: ignore[assignment]

    def check_params(self, xp: Any, params: Any, float_dtype: Any) -> None:
        if float(params.scale) ** 2 > float(xp.finfo(float_dtype).max):
            raise ValueError(
                f"scale={float(params.scale)!r} squared overflows {np.dtype(float_dtype).name}."
            )


def test_concrete_functional_params_are_checked_as_set_attr_checks_them() -> None:
    env = FunctionalEnv(_Scaled(), 2)
    key, action = jax.random.PRNGKey(0), jnp.zeros(2, jnp.int32)
    state, _, _ = env.reset(key, {"scale": 2.0})
    huge, negative = {"scale": 1e20}, {"scale": jnp.float32(-1.0)}
    calls = {
        "reset": lambda params: env.reset(key, params),
        "step": lambda params: env.step(key, state, action, params),
        # Constants under jit are known when the step is traced: checked then, for free.
        "jitted step": lambda params: jax.jit(lambda s: env.step(key, s, action, params))(state),
    }
    for call in calls.values():  # (JAX adds a note below the message of an error in a trace)
        with pytest.raises(ValueError, match=r"^scale=1e\+20 squared overflows float32\.(\n|$)"):
            call(huge)
        with pytest.raises(ValueError, match=r"^scale must be >= 0, got -1\.0\.(\n|$)"):
            call(negative)
    # Traced values are not checked (accelerators.md): that would take a host sync per call.
    out = jax.jit(env.step)(key, state, action, huge)
    assert out.reward.shape == (2,)


def test_an_int_too_large_for_a_float64_is_refused_naming_the_param() -> None:
    key = jax.random.PRNGKey(0)
    cartpole = make_functional("CartPole-v1", 2)  # a dataclass that checks nothing
    with pytest.raises(
        ValueError,
        match=r"^params of CartPoleKernel: kernel parameter 'gravity' must be a finite number, "
        r"got an int too large for a float64\.$",
    ):
        cartpole.reset(key, {"gravity": 10**400})


def test_an_int_functional_param_is_used_as_a_float() -> None:
    key = jax.random.PRNGKey(0)
    cartpole = make_functional("CartPole-v1", 2)
    state, _, _ = cartpole.reset(key)
    action = jnp.zeros(2, jnp.int32)
    as_int = cartpole.step(key, state, action, {"gravity": 10})  # an int for a float, as a float
    as_float = cartpole.step(key, state, action, {"gravity": 10.0})
    np.testing.assert_array_equal(as_int.observation, as_float.observation)


@pytest.mark.parametrize(
    "value", [None, np.array([9.8, 1.0]), "9.8", [9.8]], ids=["None", "array", "str", "list"]
)
def test_concrete_functional_params_of_another_kind_or_shape_are_refused_as_set_attr_does(
    value: Any,
) -> None:
    vec = sekai.make_vec("CartPole-v1", 3, vectorization_mode="jax")
    with pytest.raises(TypeError) as refused:
        vec.set_attr("gravity", value)
    assert "same kind and shape" in str(refused.value)
    expected = f"params of CartPoleKernel: {refused.value}"
    env = make_functional("CartPole-v1", 3)
    key, action = jax.random.PRNGKey(0), jnp.zeros(3, jnp.int32)
    state, _, _ = env.reset(key)
    with pytest.raises(TypeError, match=f"^{re.escape(expected)}$"):
        env.reset(key, {"gravity": value})
    with pytest.raises(TypeError, match=f"^{re.escape(expected)}$"):
        env.step(key, state, action, {"gravity": value})


def test_infos_keep_the_kernels_key_order_out_of_jit() -> None:
    envs = JaxVecEnv(_Labelled(), 2)
    assert list(envs.reset(seed=0).infos[0]) == ["x", "at"]
    for _ in range(3):  # the third step ends the episodes: an autoreset
        info = envs.step(np.zeros(2, dtype=np.int64)).infos[0]
    assert list(info)[:2] == ["t", "moved"]
    assert list(info["final_info"]) == ["t", "moved"] and list(info["reset_info"]) == ["x", "at"]


def _shapes_outside_cond(jaxpr: Any) -> set[tuple[int, ...]]:
    """The shapes of the values the top level of a jaxpr makes (not those inside a cond)."""
    return {
        tuple(var.aval.shape)
        for eqn in jaxpr.jaxpr.eqns
        if eqn.primitive.name != "cond"
        for var in eqn.outvars
    }


def test_reset_noise_is_drawn_inside_the_autoreset_branch_only() -> None:
    env = FunctionalEnv(_NoisyReset(), 5)
    state, _, _ = env.reset(jax.random.PRNGKey(0))
    jaxpr = jax.make_jaxpr(env.step)(jax.random.PRNGKey(1), state, jnp.zeros(5, jnp.int32))
    assert (5, 7) not in _shapes_outside_cond(jaxpr)  # drawn only in steps that reset
    assert any(eqn.primitive.name == "cond" for eqn in jaxpr.jaxpr.eqns)


def test_make_functional_takes_minus_one_to_remove_the_time_limit() -> None:
    assert make_functional("CartPole-v1", 2).max_episode_steps == 500
    assert make_functional("CartPole-v1", 2, max_episode_steps=-1).max_episode_steps is None
    with pytest.raises(ValueError, match=r"^max_episode_steps must be >= 1, or -1 to remove"):
        make_functional("CartPole-v1", 2, max_episode_steps=-2)


def test_make_functional_refuses_a_time_limit_beyond_its_int32_step_counter() -> None:
    with pytest.raises(
        ValueError, match=r"^max_episode_steps=2147483648 exceeds 2\*\*31 - 1 = 2147483647: the "
        r"functional API \(sekai\.jax\.make_functional\) counts each episode's steps in int32"
    ):  # fmt: skip
        make_functional("CartPole-v1", 2, max_episode_steps=2**31)
    assert make_functional("CartPole-v1", 2, max_episode_steps=2**31 - 1).max_episode_steps == (
        2**31 - 1
    )


def test_a_static_param_passed_to_step_is_named_static() -> None:
    env = make_functional("CartPole-v1", 2)
    state, _, _ = env.reset(jax.random.PRNGKey(0))
    params = {**env.default_params, "sutton_barto_reward": True}
    with pytest.raises(
        ValueError, match=r"^params \['sutton_barto_reward'\] of CartPoleKernel are fixed when "
        r"the FunctionalEnv is built \(static: .*make_functional\(\)"
    ):  # fmt: skip
        env.step(jax.random.PRNGKey(1), state, jnp.zeros(2, jnp.int32), params)


def test_functional_params_must_be_a_dict() -> None:
    env = make_functional("CartPole-v1", 2)
    state, _, _ = env.reset(jax.random.PRNGKey(0))
    # (JAX adds a note below the message of an error raised while it traces.)
    with pytest.raises(TypeError, match=r"^params must be a dict of CartPoleKernel's params .*"
                       r"got float\."):  # fmt: skip
        env.step(jax.random.PRNGKey(1), state, jnp.zeros(2, jnp.int32), 3.0)
    for params, name in (([1.0], "list"), ("gravity", "str"), (jnp.ones(3), "ArrayImpl")):
        with pytest.raises(TypeError, match=rf"^params must be a dict .* got {name}\.$"):
            env.reset(jax.random.PRNGKey(0), params)


def _rolled(env: FunctionalEnv, action: Any) -> np.ndarray:
    state, _, _ = env.reset(jax.random.PRNGKey(0))
    return np.asarray(jax.jit(env.step)(jax.random.PRNGKey(1), state, action).observation)


def test_functional_actions_are_checked_and_cast_from_their_shape_and_dtype() -> None:
    env = make_functional("CartPole-v1", 4)
    state, _, _ = env.reset(jax.random.PRNGKey(0))
    shape = r"^actions must have shape \(4,\) \(4 sub-envs, action space Discrete\(2\)\), got "
    for wrong, given in ((jnp.ones((4, 1), jnp.int32), r"\(4, 1\)"), (jnp.int32(1), r"\(\)")):
        with pytest.raises(ValueError, match=shape + rf"shape {given}\."):
            jax.jit(env.step)(jax.random.PRNGKey(1), state, wrong)
    with pytest.raises(TypeError, match=r"^actions of Discrete\(2\) cannot be of dtype bool"):
        env.step(jax.random.PRNGKey(1), state, jnp.ones(4, bool))
    # Integral floats and other integer widths act as the space's integers, as in the jax mode.
    want = _rolled(env, jnp.array([0, 1, 1, 0], jnp.int32))
    for same in (jnp.array([0.0, 1.0, 1.0, 0.0]), jnp.array([0, 1, 1, 0], jnp.int8)):
        np.testing.assert_array_equal(_rolled(env, same), want)


def test_make_functional_refuses_a_spec_with_additional_wrappers() -> None:
    cartpole = sekai.spec("CartPole-v1")
    scaled = dataclasses.replace(
        cartpole,
        id="test/ScaledCartPole-v1",
        additional_wrappers=(
            WrapperSpec("TransformReward", "sekai.wrappers:TransformReward", {"fn": abs}),
        ),
    )
    with pytest.raises(
        ValueError, match=r"^make_functional runs the array kernel of test/ScaledCartPole-v1, "
        r"which has no per-env objects to wrap; register the env without them"
    ):  # fmt: skip
        make_functional(scaled, 2)


def test_make_functional_names_itself_and_the_env_for_a_keyword_it_refuses() -> None:
    with pytest.raises(TypeError, match=r"sekai\.jax\.make_functional\(\) passes keyword"):
        make_functional("CartPole-v1", 2, render_mode="rgb_array")
    with pytest.raises(TypeError, match=r"^CartPole-v1: its kernel_entry_point .* 'render_mod'"):
        make_functional("CartPole-v1", 2, render_mod=1)


class _Listed(_NoisyReset):
    """Keeps the list it is built with (a registered mutable default)."""

    def __init__(self, values: list[float]) -> None:
        super().__init__()
        self.values = values


def test_make_functional_gives_the_kernel_its_own_copy_of_the_registered_kwargs() -> None:
    values = [1.0, 2.0]
    spec = EnvSpec(
        id="test/Listed-v0", entry_point=_Listed, kernel_entry_point=_Listed,
        kwargs={"values": values},
    )  # fmt: skip
    kernel = make_functional(spec, 2).kernel
    assert isinstance(kernel, _Listed) and kernel.values == values
    assert kernel.values is not values  # appending to it leaves the registry's default alone


def test_the_jax_mode_seeds_whatever_prng_implementation_is_the_default() -> None:
    def first(seed: int) -> np.ndarray:
        envs = sekai.make_vec("CartPole-v1", 2, vectorization_mode="jax")
        return np.asarray(envs.reset(seed=seed).observations)

    threefry = first(3)
    jax.config.update("jax_default_prng_impl", "rbg")
    try:
        np.testing.assert_array_equal(first(3), threefry)  # the same key: the same episodes
        envs = sekai.make_vec("CartPole-v1", 2, vectorization_mode="jax")
        envs.reset(seed=0)
        assert envs.step(np.zeros(2, np.int64)).rewards.shape == (2,)
    finally:
        jax.config.update("jax_default_prng_impl", "threefry2x32")


def test_the_cpu_backend_is_in_the_dtype_asked_for_or_refused() -> None:
    assert kernel_backend("jax", "float32").float_dtype == jnp.float32
    with pytest.raises(ValueError, match=r"^dtype='float64': .*'jax_enable_x64', True\)"):
        JaxVecEnv.cpu_backend("float64")
    with pytest.raises(TypeError, match=r"^dtype must be 'float32' or 'float64' .*'int8'"):
        kernel_backend("jax", "int8")


def test_a_time_limit_assigned_directly_reaches_the_compiled_step() -> None:
    envs = sekai.make_vec("CartPole-v1", 2, vectorization_mode="jax", max_episode_steps=10)
    envs.unwrapped.max_episode_steps = 2  # type: ignore[attr-defined]
    envs.reset(seed=0)
    steps = [bool(np.asarray(envs.step(np.zeros(2, np.int64)).truncated).all()) for _ in range(2)]
    assert steps == [False, True]


def test_set_attr_of_a_static_param_rebuilds_the_compiled_step() -> None:
    envs = sekai.make_vec("CartPole-v1", 2, vectorization_mode="jax")
    envs.reset(seed=0)
    assert np.asarray(envs.step(np.zeros(2, np.int64)).rewards).tolist() == [1.0, 1.0]
    envs.set_attr("sutton_barto_reward", True)  # a Python branch of the kernel, compiled in
    assert envs.get_attr("sutton_barto_reward") == [True, True]
    out = envs.step(np.zeros(2, np.int64))
    assert not np.asarray(out.terminated).any()
    assert np.asarray(out.rewards).tolist() == [0.0, 0.0]  # Sutton and Barto's: 0 until it falls
