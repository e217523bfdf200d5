"""sekai-ray without Ray (installed with ``--no-deps``, or Ray removed later): RayVecEnv built
directly and ``make_vec(..., vectorization_mode="ray")`` raise the same MissingDependency. A Ray
that is installed but fails to import raises its own error.

No cluster is started here: Ray is made unimportable for each test.
"""

from __future__ import annotations

import sys
from pathlib import Path

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


def test_a_ray_that_fails_to_import_raises_its_own_module_not_found_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Ray is installed, but a module it imports itself is not (Ray installed with --no-deps):
    # no MissingDependency telling to pip install that module as sekai-ray's dependency
    package = tmp_path / "ray"
    package.mkdir()
    (package / "__init__.py").write_text("import grpc_missing_dep_xyz\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delitem(sys.modules, "ray", raising=False)
    with pytest.raises(ModuleNotFoundError) as direct:
        RayVecEnv([KStepEnv] * 2, num_workers=1)
    spec = EnvSpec("raytest/KStep-v0", KStepEnv)
    with pytest.raises(ModuleNotFoundError) as through_make_vec:
        sekai.make_vec(spec, 2, vectorization_mode="ray")
    for error in (direct.value, through_make_vec.value):
        assert not isinstance(error, sekai.MissingDependency)
        assert error.name == "grpc_missing_dep_xyz"
