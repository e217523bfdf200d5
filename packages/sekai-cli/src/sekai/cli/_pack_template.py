"""The files ``sekai new-pack`` writes: a complete env pack, with placeholders to fill.

Placeholders: ``__DIST__`` (distribution and folder), ``__PKG__`` (import package), ``__NS__``
(plugin name and ID namespace), ``__BUILD__``, ``__RUN__`` and ``__TEST__`` (the pack's
requirements, ``requirements()``). Parts marked native are written only with ``--native``.
"""

from __future__ import annotations

__all__ = ["files", "requirements"]

_BUILD = ("hatchling",)
_RUN = ("numpy>=2.0",)  # after the sekai-core requirement
_TEST = ("pytest>=8",)

_PYPROJECT = """\
[build-system]
requires = __BUILD__
build-backend = "hatchling.build"

[project]
name = "__DIST__"
version = "0.1.0"
description = "A sekai environment pack: __NS__/Walk-v0"
readme = "README.md"
requires-python = ">=3.10"
dependencies = __RUN__

[project.optional-dependencies]
test = __TEST__

# The plugin: its name is the namespace of every ID the pack registers.
[project.entry-points.sekai]
__NS__ = "__PKG__._plugin"

[tool.hatch.build.targets.wheel]
packages = ["src/__PKG__"]

[tool.pytest.ini_options]
testpaths = ["tests"]
addopts = ["--import-mode=importlib"]

[tool.ruff]
line-length = 100

[tool.ruff.lint.isort]
known-first-party = ["__PKG__"]
"""

_README = """\
# __DIST__

A sekai environment pack. Installed, it registers `__NS__/Walk-v0`
(NATIVE_README) through the `sekai` entry-point group; nothing has to import it.

```bash
pip install -e ./__DIST__     # editable, with its entry point
pytest __DIST__               # the pack's tests (sekai.testing conformance checks)
sekai list --plugins          # shows plugin '__NS__' (__DIST__ 0.1.0)
sekai check __NS__/Walk-v0
```

```python
import sekai

env = sekai.make("__NS__/Walk-v0")
result = env.reset(seed=0)
```

Layout: `src/__PKG__/_plugin.py` registers the IDs by name (it imports no env code, so loading
the plugin costs nothing); `src/__PKG__/walk.py` holds the environment. Rename `Walk`, change
the dynamics, and keep `tests/` passing. See "Writing an env pack" in sekai's docs
(`docs/pages/env-packs.md`).
"""

_PLUGIN = '''\
"""The sekai plugin of __DIST__: registers __NS__/Walk-v0 by name only."""

from sekai.plugins import EnvRegistrar, hookimpl


@hookimpl
def sekai_register_envs(registry: EnvRegistrar) -> None:
    """Register every environment of the pack (strings: nothing is imported here)."""
    registry.register(
        "__NS__/Walk-v0",
        "__PKG__.walk:WalkEnv",
NATIVE_REGISTER        max_episode_steps=100,
    )
'''

_ENV = '''\
"""Walk: step left or right along a line until reaching its right end."""

from __future__ import annotations

NATIVE_IMPORTSfrom typing import Any

import numpy as np
import sekai
from numpy.typing import NDArray
from sekai.spaces import Box, Discrete, DiscreteAction
NATIVE_VEC_IMPORT
__all__ = [NATIVE_ALL]

STEP_REWARD = -0.01
GOAL_REWARD = 1.0


def _spaces(size: int) -> tuple[Box, Discrete]:
    if isinstance(size, bool) or not isinstance(size, (int, np.integer)) or size < 2:
        raise ValueError(f"size must be an int >= 2, got {size!r}.")
    return Box(0, int(size) - 1, shape=(1,), dtype=np.int64), Discrete(2)


def _start(options: dict[str, Any] | None, size: int) -> int | None:
    """``options["start"]`` checked (a position in ``0 .. size-1``), or None when not given."""
    if options is None:
        return None
    if not isinstance(options, dict):
        raise TypeError(f"options must be a dict or None, got {type(options).__name__}.")
    start = options.get("start")
    if start is None:
        return None
    if isinstance(start, bool) or not isinstance(start, (int, np.integer)) or not 0 <= start < size:
        raise ValueError(f"options['start'] must be an int in 0..{size - 1}, got {start!r}.")
    return int(start)


class WalkEnv(sekai.Env[NDArray[np.int64], DiscreteAction]):
    """A walker on positions ``0 .. size-1`` must reach ``size - 1``.

    Observation: ``[position]``. Actions: 0 left, 1 right (the line's ends are walls). Reward
    ``-0.01`` per step and ``1.0`` on reaching the end, which terminates the episode. The start
    is drawn from ``self.rng``; ``reset(options={"start": p})`` chooses it.

    Args:
        size: the number of positions (>= 2).
    """

    def __init__(self, size: int = 5) -> None:
        self.observation_space, self.action_space = _spaces(size)
        self.size = int(size)
        self.position: int | None = None

    def reset(
        self,
        *,
        seed: sekai.SeedLike = None,
        options: dict[str, Any] | None = None,
    ) -> sekai.ResetResult[NDArray[np.int64]]:
        start = _start(options, self.size)  # before seeding: a refused reset changes nothing
        self._set_rng(seed)
        self.position = int(self.rng.integers(0, self.size - 1)) if start is None else start
        return sekai.ResetResult(np.array([self.position], dtype=np.int64), {})

    def step(self, action: DiscreteAction) -> sekai.StepResult[NDArray[np.int64]]:
        if self.position is None:
            raise sekai.ResetRequired()
        if not self.action_space.contains(action):
            raise sekai.InvalidAction(action, self.action_space)
        move = 1 if int(action) == 1 else -1
        self.position = min(max(self.position + move, 0), self.size - 1)
        at_goal = self.position == self.size - 1
        reward = GOAL_REWARD if at_goal else STEP_REWARD
        observation = np.array([self.position], dtype=np.int64)
        return sekai.StepResult(observation, reward, at_goal, False, {})
'''

_VEC_ENV = '''

class WalkVecEnv(NativeVecEnv):
    """``num_envs`` walkers stepped together with array operations.

    Args:
        num_envs: the number of sub-envs.
        size: the number of positions (>= 2).
        autoreset: reset finished sub-envs within the same step.
        max_episode_steps: truncate every sub-env after this many steps.
    """

    def __init__(
        self,
        num_envs: int,
        *,
        size: int = 5,
        autoreset: bool = True,
        max_episode_steps: int | None = None,
    ) -> None:
        observation_space, action_space = _spaces(size)
        super().__init__(
            num_envs,
            observation_space,
            action_space,
            autoreset=autoreset,
            max_episode_steps=max_episode_steps,
        )
        self.size = int(size)
        self.position: NDArray[np.int64] = np.zeros(self.num_envs, dtype=np.int64)

    def _check_reset_options(self, index: int, options: dict[str, Any] | None) -> None:
        # Every sub-env's options are checked before anything is seeded: the valid sub-envs
        # are reset, then the first error is raised; refused for all, the call seeds nothing.
        _start(options, self.size)

    def _reset_envs(
        self, indices: NDArray[np.intp], options: Sequence[dict[str, Any] | None]
    ) -> None:
        starts = self.rng.integers(0, self.size - 1, size=len(indices))
        for row, (index, opts) in enumerate(zip(indices, options, strict=True)):
            start = _start(opts, self.size)  # valid: _check_reset_options checked it
            self.position[index] = int(starts[row]) if start is None else start

    def _observe(self) -> NDArray[np.int64]:
        observation: NDArray[np.int64] = self.position[:, None].copy()  # never a view
        return observation

    def _step(self, actions: Any) -> tuple[Any, Any, Any, dict[str, Any]]:
        moves = np.where(np.asarray(actions) == 1, 1, -1)
        moves[self.frozen] = 0  # a finished sub-env keeps its final position
        self.position = np.clip(self.position + moves, 0, self.size - 1)
        at_goal = self.position == self.size - 1
        rewards = np.where(at_goal, GOAL_REWARD, STEP_REWARD)
        return rewards, at_goal, np.zeros(self.num_envs, dtype=bool), {}
'''

_TESTS = '''\
"""Tests of __DIST__: its env conforms to sekai's contract, registered and directly."""

import numpy as np
import pytest
import sekai
from sekai.testing import assert_env_conforms, registry_sandbox

import __PKG__._plugin as plugin
from __PKG__.walk import WalkEnvNATIVE_TEST_IMPORT

ENV_ID = "__NS__/Walk-v0"


def test_the_plugin_registers_a_conforming_env():
    # A fresh registry holding only this plugin: independent of whatever else is installed.
    with registry_sandbox(("__NS__", plugin), distribution="__DIST__", version="0.1.0"):
        assert [spec.id for spec in sekai.all_specs()] == [ENV_ID]
        assert_env_conforms(ENV_ID)  # check_env, and the native vector env if registered


def test_an_env_instance_conforms():
    assert_env_conforms(WalkEnv(size=3))


def test_the_installed_pack_provides_its_env():
    assert sekai.spec(ENV_ID).source.distribution == "__DIST__"
    env = sekai.make(ENV_ID)
    assert env.reset(seed=0).observation.shape == (1,)


@pytest.mark.parametrize(
    ("options", "error"),
    [([1], TypeError), ({"start": 3}, ValueError), ({"start": "0"}, ValueError)],
)
def test_reset_refuses_options_it_cannot_use(options, error):
    with pytest.raises(error):
        WalkEnv(size=3).reset(options=options)


def test_reaching_the_end_terminates_with_the_goal_reward():
    env = WalkEnv(size=3)
    env.reset(options={"start": 1})
    result = env.step(1)
    assert result.observation.tolist() == [2]
    assert (result.reward, result.terminated) == (1.0, True)
'''

_NATIVE_TEST = """

def test_native_and_single_env_agree_step_by_step():
    env = WalkEnv(size=4)
    vec = WalkVecEnv(1, size=4, autoreset=False)
    env.reset(options={"start": 0})
    vec.reset(options=[{"start": 0}])
    for action in [1, 0, 1, 1, 1]:
        single = env.step(action)
        batch = vec.step(np.array([action]))
        assert batch.observations[0].tolist() == single.observation.tolist()
        assert (batch.rewards[0], batch.terminated[0]) == (single.reward, single.terminated)
        if single.terminated:
            break
    assert single.terminated


def test_the_native_env_resets_the_sub_envs_whose_options_are_valid():
    vec = WalkVecEnv(2, size=4)
    vec.reset(seed=0, options={"start": 0})
    with pytest.raises(ValueError, match="got 9"):
        vec.reset(seed=1, options=[{"start": 9}, {"start": 2}])
    assert vec.position.tolist() == [0, 2]  # sub-env 1 is reset, as a SyncVecEnv's would be
"""

_SINGLE_FILLS = {
    "NATIVE_README": "a single environment",
    "NATIVE_REGISTER": "",
    "NATIVE_IMPORTS": "",
    "NATIVE_VEC_IMPORT": "",
    "NATIVE_ALL": '"WalkEnv"',
    "NATIVE_TEST_IMPORT": "",
}
_NATIVE_FILLS = {
    "NATIVE_README": "a single environment and its native vector version",
    "NATIVE_REGISTER": '        vector_entry_point="__PKG__.walk:WalkVecEnv",\n',
    "NATIVE_IMPORTS": "from collections.abc import Sequence\n",
    "NATIVE_VEC_IMPORT": "from sekai.vector import NativeVecEnv\n",
    "NATIVE_ALL": '"WalkEnv", "WalkVecEnv"',
    "NATIVE_TEST_IMPORT": ", WalkVecEnv",
}


def requirements(core: str) -> dict[str, tuple[str, ...]]:
    """The pack's requirements: ``build`` (its build backend), ``run`` (``core``, the
    ``sekai-core`` requirement, first) and ``test`` (its ``test`` extra)."""
    return {"build": _BUILD, "run": (core, *_RUN), "test": _TEST}


def _toml_list(items: tuple[str, ...]) -> str:
    return "[" + ", ".join(f'"{item}"' for item in items) + "]"


def files(*, dist: str, package: str, namespace: str, core: str, native: bool) -> dict[str, str]:
    """The pack's files, path (relative to its folder) to text, placeholders filled."""
    env = _ENV + (_VEC_ENV if native else "")
    tests = _TESTS + (_NATIVE_TEST if native else "")
    if not native:
        tests = tests.replace("import numpy as np\n", "", 1)  # only the native test uses it
    texts = {
        "pyproject.toml": _PYPROJECT,
        "README.md": _README,
        f"src/{package}/__init__.py": f'"""{dist}: a sekai environment pack."""\n',
        f"src/{package}/py.typed": "",
        f"src/{package}/_plugin.py": _PLUGIN,
        f"src/{package}/walk.py": env,
        "tests/test_walk.py": tests,
    }
    fills = {
        **(_NATIVE_FILLS if native else _SINGLE_FILLS),
        "__DIST__": dist,
        "__PKG__": package,
        "__NS__": namespace,
        **{f"__{kind.upper()}__": _toml_list(items) for kind, items in requirements(core).items()},
    }
    filled = {}
    for path, text in texts.items():
        for placeholder, value in fills.items():  # NATIVE_* first: they hold __PKG__
            text = text.replace(placeholder, value)
        filled[path] = text
    return filled
