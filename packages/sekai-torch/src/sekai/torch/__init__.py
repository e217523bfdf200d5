"""sekai on PyTorch: the ``"torch"`` vectorization mode (array kernels on tensors, any device).

``make_vec(id, n, vectorization_mode="torch", vector_kwargs={"device": "cuda"})`` gives a
:class:`TorchVecEnv`. Names are imported on first use: plugin discovery imports
``sekai.torch._plugin``, and that must not import torch.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from sekai.utils._lazy import lazy_exports

__all__ = ["TorchBackend", "TorchVecEnv"]

_LAZY: dict[str, str] = {
    "TorchBackend": "sekai.torch.backend",
    "TorchVecEnv": "sekai.torch.vec_env",
}

# Hidden from type checkers, which would type every unknown name as Any: they see the imports
# below.
if not TYPE_CHECKING:
    __getattr__, __dir__ = lazy_exports(globals(), _LAZY)

if TYPE_CHECKING:  # pragma: no cover - names for type checkers and IDEs
    from sekai.torch.backend import TorchBackend
    from sekai.torch.vec_env import TorchVecEnv
