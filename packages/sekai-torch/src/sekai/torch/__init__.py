"""sekai on PyTorch: the ``"torch"`` vectorization mode (array kernels on tensors, any device).

``make_vec(id, n, vectorization_mode="torch", vector_kwargs={"device": "cuda"})`` gives a
:class:`TorchVecEnv`.
"""

from __future__ import annotations

from sekai.torch.backend import TorchBackend
from sekai.torch.vec_env import TorchVecEnv

__all__ = ["TorchBackend", "TorchVecEnv"]
