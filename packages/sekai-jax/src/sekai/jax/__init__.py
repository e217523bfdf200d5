"""sekai on JAX: the ``"jax"`` vectorization mode and the functional API of array kernels.

``make_vec(id, n, vectorization_mode="jax")`` gives a :class:`JaxVecEnv` (stateful, jitted,
``jax.Array`` results); :func:`make_functional` gives a :class:`FunctionalEnv` whose ``reset``
and ``step`` are pure functions of a key, composing with ``jit``, ``vmap`` and ``lax.scan``.
Names are imported on first use: plugin discovery imports ``sekai.jax._plugin``, and that must
not import JAX.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from sekai.utils._lazy import lazy_exports

__all__ = [
    "FunctionalEnv",
    "JaxBackend",
    "JaxVecEnv",
    "float_dtype",
    "key_from_generator",
    "make_functional",
]

_LAZY: dict[str, str] = {
    "FunctionalEnv": "sekai.jax.functional",
    "JaxBackend": "sekai.jax.backend",
    "JaxVecEnv": "sekai.jax.vec_env",
    "float_dtype": "sekai.jax.functional",
    "key_from_generator": "sekai.jax.backend",
    "make_functional": "sekai.jax.functional",
}

# Hidden from type checkers, which would type every unknown name as Any: they see the imports
# below.
if not TYPE_CHECKING:
    __getattr__, __dir__ = lazy_exports(globals(), _LAZY)

if TYPE_CHECKING:  # pragma: no cover - names for type checkers and IDEs
    from sekai.jax.backend import JaxBackend, key_from_generator
    from sekai.jax.functional import FunctionalEnv, float_dtype, make_functional
    from sekai.jax.vec_env import JaxVecEnv
