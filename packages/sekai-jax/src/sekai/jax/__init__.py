"""sekai on JAX: the ``"jax"`` vectorization mode and the functional API of array kernels.

``make_vec(id, n, vectorization_mode="jax")`` gives a :class:`JaxVecEnv` (stateful, jitted,
``jax.Array`` results); :func:`make_functional` gives a :class:`FunctionalEnv` whose ``reset``
and ``step`` are pure functions of a key, composing with ``jit``, ``vmap`` and ``lax.scan``.
"""

from __future__ import annotations

from sekai.jax.backend import JaxBackend, key_from_generator
from sekai.jax.functional import FunctionalEnv, float_dtype, make_functional
from sekai.jax.vec_env import JaxVecEnv

__all__ = [
    "FunctionalEnv",
    "JaxBackend",
    "JaxVecEnv",
    "float_dtype",
    "key_from_generator",
    "make_functional",
]
