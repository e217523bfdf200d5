"""Array kernels on accelerators: JAX and PyTorch env-steps/s, in one table.

Run on the GPU host (``python benchmarks/bench_accel.py``, see docs/pages/accelerators.md and
benchmarks/device/run1.sh): under 5 minutes, every row measured in the same run, rows whose
library, kernel or device is missing print ``n/a: <reason>`` instead of failing the run.

- JAX ``Portfolio-v0`` at 2^20 sub-envs inside ``jit`` + ``lax.scan`` (observations built and
  read), and through ``vec.step()`` calls of the ``"jax"`` mode. Bars: >= 1e9 and >= 2e8.
  The GPU table's ``vec.step()`` rows step one fixed action already on the device with the
  action checks off (``[fixed action, checks off]`` in their labels).
- torch ``Portfolio-v0`` at 2^22 and 2^14 through ``vec.step()``: eager, CUDA graph,
  ``torch.compile``. Bars: >= 5e8 (2^22) and >= 5e7 (2^14), one verdict per size, on the best
  mode measured (a row per mode, then a ``best: <mode>`` row per size with the verdict).
- JAX ``CartPole-v1`` against gymnax's ``CartPole-v1`` at 2^20 (jit + vmap + scan, the same
  random actions). Bar: >= 0.8x gymnax.
- ``Trading-v0``, ``MarketMaking-v0``, ``OptimalExecution-v0`` at 2^20 (JAX scan, torch step).

Without a GPU (the CI machine, ``nox -s bench``) it reports ``Portfolio-v0`` and ``CartPole-v1``
x1024 on the CPU: numpy native next to the JAX-CPU and torch-CPU modes stepping the same random
host actions with the checks on (``[random host actions, checks on]``), then the kernel modes
on the GPU bars' inputs (``[fixed action, checks off]``), which numpy native cannot run.
``--quick`` runs the GPU table's code paths at tiny sizes on whatever device there is (a smoke
test of this script).
"""

from __future__ import annotations

import argparse
import datetime
import functools
import gc
import os
import platform
import signal
import sys
import time
import traceback
from collections.abc import Callable
from typing import Any

import numpy as np

# JAX would otherwise take 75% of the GPU's memory at its first array, and the torch rows after
# it would run out of memory: allocate on demand (read when JAX initialises its backend).
os.environ.setdefault("XLA_PYTHON_CLIENT_PREALLOCATE", "false")

BUDGET_S = 270.0  # the whole table; rows past it print n/a (the host run must end < 5 min)
ROW_LIMIT_S = 75.0  # one row (compilation included); past it the row prints n/a
MIN_TIME_S = 0.5  # each measurement: repeat until this much time has passed (3 runs at least)
START = time.perf_counter()

Row = tuple[str, str, Callable[[], float], float | None]  # (what, size, measure, bar)

# What a vec.step() row steps, in its label: only rows with the same tag do the same work.
FIXED = "[fixed action, checks off]"  # one action already on the device, not checked
LIKE_NUMPY = "[random host actions, checks on]"  # numpy native's (and sekai bench's) inputs
WIDTH = 76  # the "what" column


def _elapsed() -> float:
    return time.perf_counter() - START


def _best_rate(run: Callable[[], Any], sync: Callable[[Any], None], steps: int) -> float:
    """Env-steps/s of ``run`` (``steps`` env-steps per call): best of the timed calls."""
    sync(run())  # compile / warm up
    best = float("inf")
    began = time.perf_counter()
    count = 0
    while count < 3 or time.perf_counter() - began < MIN_TIME_S:
        start = time.perf_counter()
        sync(run())
        best = min(best, time.perf_counter() - start)
        count += 1
        if count >= 50:
            break
    return steps / best


# -- JAX ---------------------------------------------------------------------------------------


def _jax_action(env_id: str, n: int) -> Any:
    import jax.numpy as jnp

    from sekai.spaces import Box, Discrete

    fenv = _functional(env_id, 1)
    space = fenv.action_space
    if isinstance(space, Discrete):
        return jnp.zeros((n,), jnp.int32) + space.start
    if isinstance(space, Box):
        mid = (np.clip(space.low, -1.0, 1.0) + np.clip(space.high, -1.0, 1.0)) / 2
        return jnp.broadcast_to(jnp.asarray(mid, jnp.float32), (n, *space.shape))
    raise TypeError(f"no benchmark action for {space!r}")


def _functional(env_id: str, n: int) -> Any:
    from sekai.jax import make_functional

    return make_functional(env_id, n)


def jax_scan(env_id: str, n: int, steps: int, random_discrete: bool = False) -> float:
    """``steps`` env steps of ``n`` sub-envs in one jitted ``lax.scan``; every observation is
    reduced into the carry (so that it is built)."""
    import jax
    import jax.numpy as jnp

    env = _functional(env_id, n)
    params = env.default_params
    fixed = _jax_action(env_id, n)

    def body(carry: Any, key: Any) -> Any:
        state, acc = carry
        step_key, action_key = jax.random.split(key)
        action = (
            jax.random.bernoulli(action_key, 0.5, (n,)).astype(jnp.int32)
            if random_discrete
            else fixed
        )
        t = env.step(step_key, state, action, params)
        leaves = jax.tree_util.tree_leaves(t.observation)
        return (t.state, acc + sum(jnp.sum(x) for x in leaves)), None

    @jax.jit
    def run(state: Any, key: Any) -> Any:
        keys = jax.random.split(key, steps)
        (state, acc), _ = jax.lax.scan(body, (state, jnp.float32(0.0)), keys)
        return state, acc

    state = env.reset(jax.random.PRNGKey(0)).state
    box = {"state": state}

    def call() -> Any:
        box["state"], acc = run(box["state"], jax.random.PRNGKey(1))
        return acc

    return _best_rate(call, lambda x: x.block_until_ready(), n * steps)


def gymnax_scan(n: int, steps: int) -> float:
    """gymnax's CartPole-v1, vmapped over ``n`` and scanned like :func:`jax_scan`."""
    import gymnax
    import jax
    import jax.numpy as jnp

    env, env_params = gymnax.make("CartPole-v1")
    reset = jax.vmap(env.reset, in_axes=(0, None))
    step = jax.vmap(env.step, in_axes=(0, 0, 0, None))

    def body(carry: Any, key: Any) -> Any:
        state, acc = carry
        step_key, action_key = jax.random.split(key)
        action = jax.random.bernoulli(action_key, 0.5, (n,)).astype(jnp.int32)
        # (obs, state, reward, done, info), or gymnax 1.x's (..., terminated, truncated, info)
        obs, state = step(jax.random.split(step_key, n), state, action, env_params)[:2]
        return (state, acc + jnp.sum(obs)), None

    @jax.jit
    def run(state: Any, key: Any) -> Any:
        keys = jax.random.split(key, steps)
        (state, acc), _ = jax.lax.scan(body, (state, jnp.float32(0.0)), keys)
        return state, acc

    _, state = reset(jax.random.split(jax.random.PRNGKey(0), n), env_params)
    box = {"state": state}

    def call() -> Any:
        box["state"], acc = run(box["state"], jax.random.PRNGKey(1))
        return acc

    return _best_rate(call, lambda x: x.block_until_ready(), n * steps)


def jax_vec_step(env_id: str, n: int, steps: int, like_numpy: bool = False) -> float:
    """The ``"jax"`` mode's stateful ``step()``, ``steps`` calls: one fixed on-device action with
    action checks off (the GPU bar's path), or, ``like_numpy``, what :func:`numpy_native` steps:
    random host actions, checked."""
    import sekai

    envs = sekai.make_vec(
        env_id, n, vectorization_mode="jax", vector_kwargs={"check_actions": like_numpy}
    )
    envs.reset(seed=0)
    actions = _host_pool(envs) if like_numpy else [_jax_action(env_id, n)]
    return _step_rate(envs, actions, n, steps)


# -- torch -------------------------------------------------------------------------------------


def torch_vec_step(
    env_id: str, n: int, steps: int, device: str, compile: str | None, like_numpy: bool = False
) -> float:
    """The ``"torch"`` mode's ``step()`` on ``device``, ``steps`` calls: one fixed on-device
    action with action checks off, or, ``like_numpy``, random host actions, checked."""
    import torch

    import sekai
    from sekai.spaces import Box, Discrete

    envs = sekai.make_vec(
        env_id,
        n,
        vectorization_mode="torch",
        vector_kwargs={"device": device, "compile": compile, "check_actions": like_numpy},
    )
    try:
        envs.reset(seed=0)
        space = envs.action_space
        if like_numpy:
            actions = _host_pool(envs)
        elif isinstance(space, Discrete):
            actions = [torch.full((n,), space.start, dtype=torch.int64, device=device)]
        elif isinstance(space, Box):
            mid = (np.clip(space.low, -1.0, 1.0) + np.clip(space.high, -1.0, 1.0)) / 2
            fixed = torch.as_tensor(mid, dtype=torch.float32, device=device)
            actions = [fixed.expand(n, *space.shape)]
        else:
            raise TypeError(f"no benchmark action for {space!r}")
        return _step_rate(envs, actions, n, steps)
    finally:
        envs.close()  # _free_gpu() then collects it once this frame is gone


def _free_gpu() -> None:
    """Collect the last row's envs: a torch VecEnv's buffers (and a captured graph's pool) go
    only with the garbage collector, so GiBs would stay held on the GPU for the next rows."""
    gc.collect()
    torch = sys.modules.get("torch")
    if torch is not None and torch.cuda.is_available():
        torch.cuda.empty_cache()


# -- numpy -------------------------------------------------------------------------------------


def numpy_native(env_id: str, n: int, steps: int) -> float:
    """The native numpy vector env's ``step()``: random host actions, checked (it has no way
    to turn the checks off)."""
    import sekai

    envs = sekai.make_vec(env_id, n, vectorization_mode="native")
    envs.reset(seed=0)
    return _step_rate(envs, _host_pool(envs), n, steps)


def _host_pool(envs: Any, size: int = 8) -> list[Any]:
    """``size`` random batches of actions, numpy arrays from ``envs.batch_action_space``
    seeded 0: the action source of every row marked ``LIKE_NUMPY`` (and of ``sekai bench``)."""
    space = envs.batch_action_space
    space.seed(0)
    return [space.sample() for _ in range(size)]


def _step_rate(envs: Any, actions: list[Any], n: int, steps: int) -> float:
    """Env-steps/s of ``steps`` ``envs.step()`` calls cycling through ``actions``; kernel modes
    are synchronised before the clock stops."""
    synchronize = getattr(envs.unwrapped, "synchronize", None)

    def call() -> None:
        for i in range(steps):
            envs.step(actions[i % len(actions)])

    def sync(_: Any) -> None:
        if synchronize is not None:
            synchronize()

    return _best_rate(call, sync, n * steps)


# -- the table ---------------------------------------------------------------------------------


def _has_cuda() -> bool:
    try:
        import torch

        if torch.cuda.is_available():
            return True
    except Exception:
        pass
    try:
        import jax

        return any(d.platform == "gpu" for d in jax.devices())
    except Exception:
        return False


# The torch Portfolio-v0 rows: one per mode and size; their bar is the best mode's.
TORCH_PORTFOLIO = f"torch Portfolio-v0, vec.step() {FIXED}"


def _sizes(quick: bool) -> tuple[int, int, int]:
    """The GPU table's sub-env counts: (big, small, huge)."""
    return (2**6, 2**4, 2**7) if quick else (2**20, 2**14, 2**22)


def torch_bars(quick: bool) -> dict[str, float]:
    """The bar of the best torch mode on ``Portfolio-v0``, by size (as the table prints it)."""
    _, small, huge = _sizes(quick)
    return {f"{huge}": 5e8, f"{small}": 5e7}


def best_torch_modes(
    rates: dict[tuple[str, str], float], quick: bool
) -> list[tuple[str, str, float | None, float]]:
    """Per size of ``torch_bars``: (size, best mode, its rate or None if none ran, bar)."""
    found = []
    for size, bar in torch_bars(quick).items():
        measured = {
            what.rpartition(", ")[2]: rate
            for (what, row_size), rate in rates.items()
            if row_size == size and what.startswith(f"{TORCH_PORTFOLIO}, ")
        }
        if not measured:
            found.append((size, "", None, bar))
            continue
        mode = max(measured, key=measured.__getitem__)
        found.append((size, mode, measured[mode], bar))
    return found


def gpu_rows(quick: bool) -> list[Row]:
    big, small, huge = _sizes(quick)
    scan_steps, call_steps = (4, 3) if quick else (64, 32)
    device = "cuda" if not quick or _has_cuda() else "cpu"
    rows: list[Row] = [
        (
            "JAX Portfolio-v0, jit+scan, obs built [fixed action]",
            f"{big}",
            lambda: jax_scan("Portfolio-v0", big, scan_steps),
            1e9,
        ),
        (
            f"JAX Portfolio-v0, vec.step() {FIXED}",
            f"{big}",
            lambda: jax_vec_step("Portfolio-v0", big, call_steps),
            2e8,
        ),
    ]
    rows += [
        (
            "JAX CartPole-v1, jit+scan [random actions]",
            f"{big}",
            lambda: jax_scan("CartPole-v1", big, scan_steps, random_discrete=True),
            None,
        ),
        (
            "gymnax CartPole-v1, jit+vmap+scan [random actions]",
            f"{big}",
            lambda: gymnax_scan(big, scan_steps),
            None,
        ),
    ]

    def torch_rows(modes: tuple[str | None, ...]) -> list[Row]:
        # No bar per mode: best_torch_modes() judges each size by its best mode.
        return [
            (
                f"{TORCH_PORTFOLIO}, {compile or 'eager'}",
                f"{n}",
                lambda n=n, c=compile: torch_vec_step("Portfolio-v0", n, call_steps, device, c),
                None,
            )
            for n in (huge, small)
            for compile in modes
        ]

    rows += torch_rows((None, "cuda_graph"))
    for env_id in ("Trading-v0", "MarketMaking-v0", "OptimalExecution-v0"):
        rows.append(
            (
                f"JAX {env_id}, jit+scan [fixed action]",
                f"{big}",
                lambda e=env_id: jax_scan(e, big, scan_steps),
                None,
            )
        )
        rows.append(
            (
                f"torch {env_id}, vec.step() {FIXED}, eager",
                f"{big}",
                lambda e=env_id: torch_vec_step(e, big, call_steps, device, None),
                None,
            )
        )
    return rows + torch_rows(("compile",))  # last: compiling takes the longest


def cpu_rows(quick: bool) -> list[Row]:
    """Per env: numpy native, then the kernel modes on its inputs (``LIKE_NUMPY``: the rows to
    compare with it), then the kernel modes on the GPU bars' inputs (``FIXED``)."""
    n, steps = (64, 5) if quick else (1024, 50)
    rows: list[Row] = []
    for env_id, native_id in (
        ("Portfolio-v0", "Portfolio-v0"),
        ("CartPole-v1", "classic/CartPole-v1"),
    ):
        rows.append(
            (
                f"numpy native {env_id}, vec.step() {LIKE_NUMPY}",
                f"{n}",
                functools.partial(numpy_native, native_id, n, steps),
                None,
            )
        )
        for tag, like_numpy in ((LIKE_NUMPY, True), (FIXED, False)):
            rows += [
                (
                    f"JAX-CPU {env_id}, vec.step() {tag}",
                    f"{n}",
                    functools.partial(jax_vec_step, env_id, n, steps, like_numpy),
                    None,
                ),
                (
                    f"torch-CPU {env_id}, vec.step() {tag}, eager",
                    f"{n}",
                    functools.partial(torch_vec_step, env_id, n, steps, "cpu", None, like_numpy),
                    None,
                ),
            ]
        if env_id == "Portfolio-v0":
            rows.append(
                (
                    "JAX-CPU Portfolio-v0, jit+scan [fixed action]",
                    f"{n}",
                    lambda: jax_scan("Portfolio-v0", n, steps),
                    None,
                )
            )
    return rows


def _one_torch_thread() -> None:
    """On a small shared CPU torch's intra-op threads spin against each other (one exp of 16k
    floats measured 31 ms on 2 threads, 0.014 ms on 1): time the CPU rows on one thread."""
    try:
        import torch

        torch.set_num_threads(1)
    except ImportError:
        pass


def _versions() -> str:
    parts = [f"Python {platform.python_version()}", f"numpy {np.__version__}"]
    for name in ("jax", "torch", "gymnax"):
        try:
            module = __import__(name)
            parts.append(f"{name} {getattr(module, '__version__', '?')}")
        except Exception:
            parts.append(f"{name} missing")
    return ", ".join(parts)


def _device() -> str:
    try:
        import torch

        if torch.cuda.is_available():
            return torch.cuda.get_device_name(0)
    except Exception:
        pass
    return f"CPU: {platform.processor() or platform.machine()}"


class RowTimeout(Exception):
    """A row ran past its time limit."""


def _within(seconds: float, measure: Callable[[], float]) -> float:
    """``measure()``, interrupted by SIGALRM after ``seconds`` (where signals exist)."""
    if not hasattr(signal, "SIGALRM"):
        return measure()

    def stop(signum: int, frame: Any) -> None:
        raise RowTimeout(f"over {seconds:.0f} s")

    previous = signal.signal(signal.SIGALRM, stop)
    signal.alarm(max(1, int(seconds)))
    try:
        return measure()
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)


def _reason(exc: BaseException) -> str:
    text = " ".join(str(exc).split())
    return f"{type(exc).__name__}: {text[:90]}"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    group = parser.add_mutually_exclusive_group()
    group.add_argument("--quick", action="store_true", help="tiny sizes: a smoke test, any device")
    group.add_argument("--gpu", action="store_true", help="the GPU table (default with a GPU)")
    group.add_argument("--cpu", action="store_true", help="the CPU table (default without a GPU)")
    parser.add_argument("--verbose", action="store_true", help="print tracebacks of n/a rows")
    parser.add_argument(
        "--budget-seconds", type=float, default=BUDGET_S, help="rows past it print n/a"
    )
    args, _ = parser.parse_known_args(argv)  # nox -s bench passes its posargs to every script
    budget = args.budget_seconds
    gpu = args.gpu or (not args.cpu and not args.quick and _has_cuda())
    rows = gpu_rows(args.quick) if gpu or args.quick else cpu_rows(args.quick)
    if args.quick and not gpu:
        rows += cpu_rows(True)
    title = "GPU" if gpu else ("quick smoke test" if args.quick else "CPU")
    if not gpu:
        title += ", torch on 1 thread"
        _one_torch_thread()
    print(f"bench_accel ({title}), {datetime.date.today()}: {_device()}; {_versions()}")
    print(f"{'what':<{WIDTH}} {'sub-envs':>9} {'env-steps/s':>12}  bar")
    failures = 0
    rates: dict[tuple[str, str], float] = {}
    for what, size, measure, bar in rows:
        if _elapsed() > budget:
            print(f"{what:<{WIDTH}} {size:>9} {'n/a':>12}  time budget of {budget:.0f} s spent")
            continue
        try:
            rate = _within(min(ROW_LIMIT_S, budget - _elapsed() + 10.0), measure)
        except BaseException as exc:  # a missing library, kernel or device: report, go on
            _free_gpu()
            if isinstance(exc, KeyboardInterrupt):
                raise
            failures += 1
            print(f"{what:<{WIDTH}} {size:>9} {'n/a':>12}  {_reason(exc)}", flush=True)
            if args.verbose:
                traceback.print_exc()
            continue
        _free_gpu()
        verdict = ""
        if bar is not None and not args.quick:
            verdict = f">= {bar:.1e}: {'pass' if rate >= bar else 'FAIL'}"
        rates[what, size] = rate
        print(f"{what:<{WIDTH}} {size:>9} {rate:>12.3e}  {verdict}", flush=True)
    if gpu or args.quick:
        for size, mode, best, bar in best_torch_modes(rates, args.quick):
            what = f"{TORCH_PORTFOLIO}, best: {mode or 'none'}"
            if best is None:
                print(f"{what:<{WIDTH}} {size:>9} {'n/a':>12}  no mode was measured")
                continue
            verdict = "" if args.quick else f">= {bar:.1e}: {'pass' if best >= bar else 'FAIL'}"
            print(f"{what:<{WIDTH}} {size:>9} {best:>12.3e}  {verdict}", flush=True)
    big = f"{_sizes(args.quick)[0]}"
    ours, theirs = (
        rates.get(("JAX CartPole-v1, jit+scan [random actions]", big)),
        rates.get(("gymnax CartPole-v1, jit+vmap+scan [random actions]", big)),
    )
    if ours and theirs:
        verdict = "" if args.quick else f" (>= 0.8: {'pass' if ours >= 0.8 * theirs else 'FAIL'})"
        print(f"JAX CartPole-v1 / gymnax CartPole-v1 = {ours / theirs:.2f}{verdict}")
    print(
        f"{FIXED}: one action already on the device, not checked (the GPU bars' path); "
        f"{LIKE_NUMPY}: a pool of 8 seeded random batches from the host, checked, as numpy "
        "native steps them: compare vec.step() rows with the same tag only"
    )
    print(f"total {_elapsed():.0f} s; {failures} row(s) n/a")
    return 0


if __name__ == "__main__":
    sys.exit(main())
