"""``sekai check ID``: the issues, the summary line and the exit status."""

from __future__ import annotations

import pytest

NOT_SEEDED = (
    "WARNING: reset(seed=0) returned different observations on two calls. Call "
    "self._set_rng(seed) at the start of reset() and draw all randomness from self.rng; state "
    "kept across episodes (a counter, or a sequential episode sampler that moves on every "
    "reset) does the same."
)


def test_a_conforming_env_passes_with_exit_0(sekai_cli) -> None:
    done = sekai_cli("check", "CartPole-v1")
    assert done.returncode == 0
    assert done.stdout == "CartPole-v1: all checks passed.\n"
    assert done.stderr == ""


def test_warnings_only_exit_0_and_end_with_a_summary(sekai_cli, my_envs: str) -> None:
    done = sekai_cli("-m", my_envs, "check", "mine/Unseeded-v0")
    assert done.returncode == 0
    assert done.stdout == f"{NOT_SEEDED}\nmine/Unseeded-v0: 0 errors, 1 warning.\n"


def test_strict_exits_1_on_warnings(sekai_cli, my_envs: str) -> None:
    done = sekai_cli("-m", my_envs, "check", "mine/Unseeded-v0", "--strict")
    assert done.returncode == 1
    assert done.stdout.endswith("mine/Unseeded-v0: 0 errors, 1 warning.\n")


@pytest.mark.parametrize("strict", [(), ("--strict",)])
def test_errors_exit_1(sekai_cli, my_envs: str, strict: tuple[str, ...]) -> None:
    done = sekai_cli("-m", my_envs, "check", "mine/OutOfSpace-v0", *strict)
    assert done.returncode == 1
    lines = done.stdout.splitlines()
    assert lines[0].startswith(
        "ERROR: Observation from step() at step 0 is not within observation_space."
    )
    assert lines[-1] == "mine/OutOfSpace-v0: 2 errors, 0 warnings."


def test_a_failing_close_is_reported_after_the_issues_with_exit_2(sekai_cli, my_envs: str) -> None:
    done = sekai_cli("-m", my_envs, "check", "mine/CloseFails-v0", "--steps", "5")
    assert done.returncode == 2  # the worse of 1 (an ERROR found) and 2 (close() raised)
    lines = done.stdout.splitlines()
    assert lines[0].startswith("ERROR: Observation from step() at step 0 is not within")
    assert lines[-1] == "mine/CloseFails-v0: 2 errors, 0 warnings."
    assert done.stderr == "error: RuntimeError: close failed\n"


def test_an_exception_in_step_is_an_error_line_of_the_report(sekai_cli, my_envs: str) -> None:
    done = sekai_cli("-m", my_envs, "check", "mine/StepFails-v0")
    assert done.returncode == 1
    assert "ERROR: step() raised RuntimeError at step 0: boom at step" in done.stdout
    assert done.stderr == ""


@pytest.mark.parametrize(("args", "steps"), [(("--steps", "7"), 7), ((), 500)])
def test_steps_sets_how_many_random_steps_are_taken(
    sekai_cli, my_envs: str, args: tuple[str, ...], steps: int
) -> None:
    done = sekai_cli("-m", my_envs, "check", "mine/BoolReward-v0", *args)
    assert done.returncode == 0
    assert done.stdout.splitlines()[0] == (
        f"WARNING: reward at step 0 is bool, expected float. (seen at {steps} steps; first shown)"
    )


@pytest.mark.parametrize("value", ["0", "-3", "many"])
def test_steps_below_1_is_a_usage_error(sekai_cli, value: str) -> None:
    done = sekai_cli("check", "CartPole-v1", "--steps", value)
    assert done.returncode == 2
    assert "argument --steps" in done.stderr


def test_determinism_compares_two_seeded_rollouts_only_when_asked(sekai_cli, my_envs: str) -> None:
    plain = sekai_cli("-m", my_envs, "check", "mine/Drifting-v0")
    assert plain.stdout == "mine/Drifting-v0: all checks passed.\n"
    asked = sekai_cli("-m", my_envs, "check", "mine/Drifting-v0", "--determinism")
    assert asked.returncode == 0
    assert asked.stdout.startswith("WARNING: Two rollouts with the same seed and actions differed.")
    assert asked.stdout.endswith("mine/Drifting-v0: 0 errors, 1 warning.\n")


def test_issue_levels_are_coloured_on_a_terminal(terminal_cli, tmp_path, my_envs: str) -> None:
    code, out, _ = terminal_cli("-m", my_envs, "check", "mine/OutOfSpace-v0", stream="stdout")
    assert code == 1
    assert out.startswith("\x1b[31mERROR\x1b[0m: Observation from step()")


BAD_ENV_PLUGIN = """
from sekai.plugins import hookimpl


@hookimpl
def sekai_register_envs(registry):
    registry.register("fakebad/Bad-v0", "sekai_fake_bad_env_module:Env")
"""


@pytest.mark.parametrize(
    "command",
    [["check"], ["check", "--mode", "sync"], ["info"], ["bench", "--steps", "5"]],
    ids=["check", "check-mode", "info", "bench"],
)
def test_an_env_whose_module_fails_to_import_names_the_id_entry_point_and_distribution(
    sekai_cli, fake_dist, tmp_path, command
) -> None:
    env = fake_dist("sekai-fake-bad-env", "fakebad", "sekai_fake_bad_plugin", BAD_ENV_PLUGIN)
    module = tmp_path / "site" / "sekai_fake_bad_env_module.py"
    module.write_text('raise RuntimeError("config missing")\n')
    done = sekai_cli(command[0], "fakebad/Bad-v0", *command[1:], env=env)
    assert done.returncode == 2
    assert done.stdout == ""
    assert done.stderr == (
        "error: cannot import the module of fakebad/Bad-v0 (entry point "
        "'sekai_fake_bad_env_module:Env', registered by plugin 'fakebad' (sekai-fake-bad-env "
        "0.1.0)): RuntimeError: config missing. Fix or reinstall sekai-fake-bad-env, or report "
        "it to its maintainers.\n"
    )


PACK_PLUGIN = """
from sekai import WrapperSpec
from sekai.plugins import hookimpl

CARTPOLE = "sekai.envs.classic_control.cartpole:CartPoleEnv"


@hookimpl
def sekai_register_envs(registry):
    guard = WrapperSpec("Guard", "sekai_fake_pack_wrappers:Guard")
    registry.register("fakepack/Wrapped-v0", CARTPOLE, additional_wrappers=(guard,))
    registry.register("fakepack/Fast-v0", CARTPOLE, vector_entry_point="sekai_fake_pack_vec:Vec")
"""
PACK_OWNER = "registered by plugin 'fakepack' (sekai-fake-pack-mods 0.1.0)"
PACK_FIX = "Fix or reinstall sekai-fake-pack-mods, or report it to its maintainers.\n"


@pytest.mark.parametrize(
    ("command", "what", "error"),
    [
        (["check", "fakepack/Wrapped-v0"], "wrapper", "RuntimeError: config missing"),
        (["info", "fakepack/Wrapped-v0"], "wrapper", "RuntimeError: config missing"),
        (["bench", "fakepack/Fast-v0", "--num-envs", "2", "--steps", "5"], "vector", "dep"),
        (["bench", "fakepack/Fast-v0", "--mode", "native", "--steps", "5"], "vector", "dep"),
    ],
    ids=["check", "info", "bench-auto", "bench-native"],
)
def test_a_wrapper_or_vector_module_that_fails_to_import_names_the_id_entry_point_and_pack(
    sekai_cli, fake_dist, tmp_path, command, what, error
) -> None:
    env = fake_dist("sekai-fake-pack-mods", "fakepack", "sekai_fake_pack_mods", PACK_PLUGIN)
    site = tmp_path / "site"
    (site / "sekai_fake_pack_wrappers.py").write_text('raise RuntimeError("config missing")\n')
    (site / "sekai_fake_pack_vec.py").write_text("import sekai_fake_pack_missing_dep\n")
    done = sekai_cli(*command, env=env)
    assert done.returncode == 2
    assert done.stdout == ""
    if what == "wrapper":
        expected = (
            "error: cannot import the module of wrapper 'Guard' of fakepack/Wrapped-v0 (entry "
            f"point 'sekai_fake_pack_wrappers:Guard', {PACK_OWNER}): {error}. {PACK_FIX}"
        )
    else:
        expected = (
            "error: cannot import the module of the native vector env of fakepack/Fast-v0 "
            f"(vector_entry_point 'sekai_fake_pack_vec:Vec', {PACK_OWNER}): "
            "ModuleNotFoundError: No module named 'sekai_fake_pack_missing_dep'. " + PACK_FIX
        )
    assert done.stderr == expected


@pytest.mark.parametrize("options", [["--mode", "sync"], ["--num-envs", "1"]])
def test_bench_imports_only_the_vector_module_it_builds_with(
    sekai_cli, fake_dist, tmp_path, options
) -> None:
    env = fake_dist("sekai-fake-pack-mods", "fakepack", "sekai_fake_pack_mods", PACK_PLUGIN)
    (tmp_path / "site" / "sekai_fake_pack_vec.py").write_text("import sekai_fake_missing\n")
    done = sekai_cli("bench", "fakepack/Fast-v0", *options, "--steps", "5", "--json", env=env)
    assert done.returncode == 0, done.stderr


def test_num_envs_without_mode_is_a_usage_error(sekai_cli) -> None:
    done = sekai_cli("check", "CartPole-v1", "--num-envs", "64", "--steps", "5")
    assert done.returncode == 2
    assert done.stderr.endswith("error: --num-envs applies to --mode only\n")


def test_mode_checks_refuse_an_env_without_a_kernel_with_exit_2(sekai_cli) -> None:
    done = sekai_cli("check", "Pendulum-v1", "--mode", "jax")
    assert done.returncode == 2
    # Without sekai-jax the mode is unknown (and named with its distribution); with it, the
    # env has no kernel: either way the message says what to do.
    assert (
        "no array kernel" in done.stderr
        or "It is provided by sekai-jax, which is not installed" in done.stderr
    )


MODES_PLUGIN = """
from sekai.plugins import hookimpl


@hookimpl
def sekai_register_vector_backends(registry):
    registry.register("npk", "sekai_fake_modes:NumpyMode")
    registry.register("stale", "sekai_fake_modes:StaleAutoresetMode")
"""

MODES = """
import numpy as np

from sekai.vector.kernel_vec_env import KernelVecEnv


class NumpyMode(KernelVecEnv):
    '''A correct kernel mode: the numpy driver under its own name.'''


class StaleAutoresetMode(KernelVecEnv):
    '''Broken: the step that ends an episode returns the terminal observation, not the reset
    one (the final_* infos are still there).'''

    def step(self, actions):
        out = super().step(actions)
        done = np.asarray(self.last_transition.done)[:, None]
        final = np.asarray(self.last_transition.final_observation)
        return out._replace(observations=np.where(done, final, out.observations))
"""


@pytest.mark.parametrize("mode", ["npk", "stale"])
def test_mode_checks_run_the_exact_autoreset_check_of_a_kernel_mode(
    sekai_cli, fake_dist, tmp_path, mode: str
) -> None:
    # Before: only the autoreset info keys were looked for, so the stale mode passed.
    env = fake_dist("sekai-fake-modes", "fakemodes", "sekai_fake_modes_plugin", MODES_PLUGIN)
    (tmp_path / "site" / "sekai_fake_modes.py").write_text(MODES)
    done = sekai_cli("check", "CartPole-v1", "--mode", mode, "--steps", "100", env=env)
    if mode == "npk":
        assert (done.returncode, done.stdout) == (0, "CartPole-v1: all checks passed.\n")
        return
    assert done.returncode == 1
    assert done.stdout == (
        "ERROR: autoreset of KStepKernel([1, 2, 3, 5]) in this mode: step 0, sub-env 0 (k=1, "
        "episode 0): observation [0.0, 1.0], expected [1, 0].\n"
        "CartPole-v1: 1 error, 0 warnings.\n"
    )
