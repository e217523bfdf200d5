"""Array kernels of the classic-control envs (``sekai.vector.kernel.ArrayKernel``), run by the
``jax`` and ``torch`` vectorization modes and by ``sekai.vector.kernel_vec_env.KernelVecEnv``."""
