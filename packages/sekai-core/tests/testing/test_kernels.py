"""``sekai.testing.kernels`` without the accelerator distributions installed."""

from __future__ import annotations

import sys

import pytest

from sekai.plugins._host import PluginHost
from sekai.testing import registry_sandbox
from sekai.testing.kernels import assert_kernel_equivalent
from sekai.vector.kernel_check import KStepKernel


@pytest.mark.parametrize("backend", ["jax", "torch"])
def test_a_missing_backend_names_the_distribution_to_install(
    monkeypatch: pytest.MonkeyPatch, backend: str
) -> None:
    # Before: the jax backend imported jax first and failed with a bare ModuleNotFoundError.
    monkeypatch.setitem(sys.modules, backend, None)  # the library is absent, too
    monkeypatch.setattr(PluginHost, "is_installed", lambda self, distribution: False)
    with (
        registry_sandbox(),
        pytest.raises(
            ValueError,
            match=rf"^Unknown vectorization_mode '{backend}'; .* It is provided by "
            rf"sekai-{backend}, which is not installed: ",
        ),
    ):
        assert_kernel_equivalent(lambda: KStepKernel([2, 3]), backends=(backend,), num_envs=2)
