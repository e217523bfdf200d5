"""ProcVecEnv: sub-envs in worker processes, observations through shared memory."""
