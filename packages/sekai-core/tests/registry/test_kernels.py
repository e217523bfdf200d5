"""load_kernel (make_vec's kernel modes, make_functional): keyword arguments that the env or
its kernel refuses are named with the env, as make() names them."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pytest

from sekai.registry.kernels import load_kernel
from sekai.registry.spec import EnvSpec
from sekai.spaces import Box, Discrete
from sekai.testing.envs import LineEnv, LineVecEnv
from sekai.vector.kernel import ArrayKernel, KernelReset, KernelStep

LINE = "sekai.testing.envs:LineEnv"


@dataclass(frozen=True)
class _Params:
    size: int = 5


class _NoSizeKernel(ArrayKernel[_Params]):
    """A kernel for LineEnv without its size argument (built, never run)."""

    def __init__(self) -> None:
        self.observation_space = Box(0.0, 4.0, (1,))
        self.action_space = Discrete(2)
        self.params = _Params()

    def reset(self, xp: Any, params: Any, draws: Any, mask: Any, state: Any) -> KernelReset:
        raise NotImplementedError

    def step(self, xp: Any, params: Any, state: Any, action: Any, draws: Any) -> KernelStep:
        raise NotImplementedError


class _FromEnvKernel(_NoSizeKernel):
    """A kernel built from the env's own object, which checks the arguments (as the finance
    kernels are)."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__()
        self.params = _Params(LineEnv(**kwargs).size)


def _spec(kernel: Any, **extra: Any) -> EnvSpec:
    return EnvSpec("Line-v0", entry_point=LINE, kernel_entry_point=kernel, **extra)


def test_a_keyword_the_kernel_refuses_names_the_env_and_the_kernel() -> None:
    with pytest.raises(TypeError) as caught:
        load_kernel(_spec(_NoSizeKernel), {"sise": 3})
    assert str(caught.value) == (
        "Line-v0: its kernel_entry_point _NoSizeKernel does not take the keyword argument "
        "'sise' (given: sise): _NoSizeKernel.__init__() got an unexpected keyword argument 'sise'"
    )


def test_a_keyword_the_env_refuses_inside_its_kernel_gives_makes_error() -> None:
    # Before: "LineEnv.__init__() got an unexpected keyword argument 'sise'", naming no env.
    with pytest.raises(TypeError) as caught:
        load_kernel(_spec(_FromEnvKernel), {"sise": 3})
    expected = (
        f"Line-v0: its entry point {LINE!r} does not take the keyword argument 'sise' (given: "
        "sise): LineEnv.__init__() got an unexpected keyword argument 'sise'"
    )
    # Python 3.13's own message goes on with a suggestion.
    assert str(caught.value) in (expected, f"{expected}. Did you mean 'size'?")
    assert load_kernel(_spec(_FromEnvKernel), {"size": 3}).params.size == 3


@pytest.mark.parametrize(
    ("extra", "modes"), [({}, "'sync'"), ({"vector_entry_point": LineVecEnv}, "'native' or 'sync'")]
)
def test_a_keyword_the_env_takes_but_its_kernel_does_not_names_the_modes_that_take_it(
    extra: dict[str, Any], modes: str
) -> None:
    with pytest.raises(TypeError) as caught:
        load_kernel(_spec(_NoSizeKernel, **extra), {"size": 3})
    assert str(caught.value) == (
        "Line-v0: its kernel_entry_point _NoSizeKernel does not take the keyword argument "
        f"'size' (given: size), which its entry point {LINE!r} takes: the kernel modes build "
        f"the kernel, not the env; use vectorization_mode={modes} for the env's own arguments: "
        "_NoSizeKernel.__init__() got an unexpected keyword argument 'size'"
    )


def test_a_keyword_only_the_env_takes_points_a_caller_without_modes_to_make_and_make_vec() -> None:
    # make_functional has no vectorization_mode to switch: it used to advise one anyway.
    with pytest.raises(TypeError) as caught:
        load_kernel(_spec(_NoSizeKernel), {"size": 3}, call="sekai.jax.make_functional()")
    assert str(caught.value) == (
        "Line-v0: its kernel_entry_point _NoSizeKernel does not take the keyword argument "
        f"'size' (given: size), which its entry point {LINE!r} takes: "
        "sekai.jax.make_functional() builds the kernel, not the env; use sekai.make(), or "
        "sekai.make_vec() with vectorization_mode='sync', for the env's own arguments: "
        "_NoSizeKernel.__init__() got an unexpected keyword argument 'size'"
    )


def test_render_mode_in_a_kernel_mode_points_to_renderers() -> None:
    with pytest.raises(TypeError) as caught:
        load_kernel(_spec(_NoSizeKernel), {"render_mode": "human"}, call="make_functional()")
    assert str(caught.value).startswith(
        "Line-v0 takes no render_mode='human': make_functional() passes keyword arguments"
    )


@pytest.mark.parametrize("entry_point", [None, "sekai_no_such_module:LineEnv"])
def test_a_spec_without_a_loadable_env_entry_point_keeps_the_kernels_error(
    entry_point: str | None,
) -> None:
    spec = EnvSpec("Line-v0", entry_point=entry_point, kernel_entry_point=_FromEnvKernel)
    with pytest.raises(TypeError, match=r"^LineEnv.__init__\(\) got an unexpected keyword"):
        load_kernel(spec, {"sise": 3})


def test_a_kernel_entry_point_that_builds_no_array_kernel_is_refused_naming_what_it_built() -> None:
    with pytest.raises(TypeError) as caught:
        load_kernel(_spec(LineEnv), {})  # the env's class where its kernel's belongs
    assert str(caught.value) == (
        "kernel_entry_point of Line-v0 built a LineEnv, not an ArrayKernel."
    )
