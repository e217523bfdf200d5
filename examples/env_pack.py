"""Use a third-party environment pack: the repository's example pack and its example/Gridworld-v0.

Run: ``python examples/env_pack.py``, after installing the pack:

    pip install ./tests-integration/packs/sekai-example-pack

The pack (``tests-integration/packs/sekai-example-pack``) is a complete template for your own:
a ``pyproject.toml`` with one entry point in the ``sekai`` group, a plugin module that registers
its IDs by name, an environment with its native vector version, and tests. The docs page
"Writing an env pack" (``docs/pages/env-packs.md``) walks through it. Nothing in this script
imports the pack: installing it is enough for ``sekai.make()`` to find its environments.
"""

from __future__ import annotations

import sys

import numpy as np
from numpy.typing import NDArray

import sekai

ENV_ID = "example/Gridworld-v0"
INSTALL = "pip install ./tests-integration/packs/sekai-example-pack"


def greedy(observations: NDArray[np.int64], size: int = 5) -> NDArray[np.int64]:
    """Walk down to the last row, then right to the goal (actions: 0 up 1 right 2 down 3 left)."""
    rows = observations[..., 0]
    return np.where(rows < size - 1, 2, 1).astype(np.int64)


def main() -> None:
    try:
        spec = sekai.spec(ENV_ID)
    except sekai.EnvNotFound:
        sys.exit(f"{ENV_ID} is not registered: install the example pack first with\n  {INSTALL}")
    source = spec.source
    provider = "runtime" if source is None else f"{source.distribution} {source.version}"
    print(f"{ENV_ID}: provided by {provider} (plugin {source.plugin if source else '-'})")

    env = sekai.make(ENV_ID)
    result = env.reset(seed=0)
    steps, total = 0, 0.0
    while not result.done:
        result = env.step(greedy(result.observation))
        steps, total = steps + 1, total + result.reward
    print(f"greedy policy, one episode: {steps} steps, return {total:.2f}")

    with sekai.make_vec(ENV_ID, 64, vector_kwargs={"autoreset": False}) as vec:
        batch = vec.reset(seed=0)
        returns, done = np.zeros(64), np.zeros(64, bool)
        while not done.all():
            batch = vec.step(greedy(batch.observations))
            returns += np.where(done, 0.0, batch.rewards)
            done |= batch.dones
        print(f"{type(vec).__name__}: mean return {returns.mean():.3f} over 64 episodes")


if __name__ == "__main__":
    main()
