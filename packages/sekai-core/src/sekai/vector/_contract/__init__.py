"""The one implementation of the vector contract (core.md §3, §14) that every backend reuses.

Parent side (where ``VecEnv.step()`` is called), used through ``VecEnv``'s helpers:

- ``seeding``: ``vector_seeds`` (int → ``make_seed_sequence``, list, Generator → TypeError),
  ``native_seed`` (one generator; ``check_native_seed`` then ``draw_native_seed``, its two
  steps), ``vector_options`` (one dict or one per sub-env), ``generator_for_all`` (why one
  Generator cannot serve every sub-env; ``set_attr`` too).
- ``actions``: ``ActionChecker`` (structure → ValueError, values → InvalidAction(index), frozen
  sub-envs not checked) and the split into per-env actions.
- ``batching``: ``stacker`` / ``caster`` (rule 3: the space's dtypes; the stacker refuses
  observations that do not fit the space, ``checked_caster`` a native env's batch that does
  not) and row replacement.
- ``checks``: what a sub-env returns: ``observation_checker``, ``ResultCheck`` (for
  ``CheckedSubEnv`` in workers), ``batch_rewards`` / ``batch_flags`` (used by ``_step_result``),
  ``snapshot`` (the terminal observation kept across a same-step autoreset).
- ``VecEnv`` helpers: ``_checked_actions`` / ``_per_env_actions`` (ResetRequired, VecEnvClosed,
  action checks), ``_reset_plan`` / ``_reset_done``, ``_stack`` / ``_cast`` (observation
  dtypes), ``_step_result`` / ``_failed_step`` (result dtypes, frozen mask, rule 9).

Sub-env side (where the sub-env lives: this process, a ProcVecEnv worker, a Ray actor):

- ``subenv``: ``SubEnv`` (same-step autoreset with final_observation / final_info / reset_info,
  freezing with ``autoreset=False``, AutoReset detection, get/set/call through the wrapper
  stack), ``call_each`` (every sub-env runs, then the first error is raised) and ``run_each``
  (every sub-env runs; each failure is returned with its index, for a worker to report).

A backend that runs sub-envs elsewhere builds a ``SubEnv`` per sub-env there, sends it the
seeds/options from ``_reset_plan`` and the per-env actions from ``_per_env_actions``, and passes
the replies to ``_reset_done`` / ``_step_result`` (reporting ``SubEnv.resets_itself`` once, for
``VecEnv._set_self_resetting``).
"""
