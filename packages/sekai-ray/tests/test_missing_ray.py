"""sekai-ray without Ray (installed with ``--no-deps``, or Ray removed later): RayVecEnv built
directly and ``make_vec(..., vectorization_mode="ray")`` raise the same MissingDependency.

No cluster is started here: Ray is made unimportable for each test.
"""

from __future__ import annotations

import sys

import pytest

import sekai
from sekai.ray import RayVecEnv
from sekai.registry.spec import EnvSpec
from sekai.testing.envs import KStepEnv


def test_ray_vec_env_without_ray_raises_make_vecs_missing_dependency(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setitem(sys.modules, "ray", None)  # `import ray` fails, as when not installed
    with pytest.raises(sekai.MissingDependency) as direct:
        RayVecEnv([KStepEnv] * 2, num_workers=1)
    spec = EnvSpec("raytest/KStep-v0", KStepEnv)
    with pytest.raises(sekai.MissingDependency) as through_make_vec:
        sekai.make_vec(spec, 2, vectorization_mode="ray")
    assert str(direct.value) == str(through_make_vec.value)
    assert str(direct.value).startswith("vectorization_mode 'ray' needs ray, which is not ")
    assert str(direct.value).endswith(
        "sekai-ray, which provides the mode, depends on it. Install it with: pip install 'ray>=2.9'"
    )
    assert isinstance(direct.value, ImportError) and direct.value.package == "ray"
