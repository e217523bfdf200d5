"""Connecting to Ray: an existing cluster by address, or a local one kept on this machine."""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Mapping
from types import ModuleType
from typing import Any

import numpy as np

from sekai.registry.api import mode_library_imports

__all__ = [
    "LOCAL_ENV",
    "actor_options",
    "actors_killed",
    "check_feasible",
    "cluster_id",
    "connect",
    "default_num_workers",
]

# Environment defaults applied before Ray is first imported for a local cluster (a user's own
# setting always wins). Ray reads them at import time:
# - RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER=0: single-machine mode (Ray's default on macOS and
#   Windows). The node address is then 127.0.0.1, so every Ray process listens on loopback only;
#   otherwise Ray asks the routing table for the machine's outward address and listens there.
# - RAY_USAGE_STATS_ENABLED=0: never report usage statistics to Ray's servers.
LOCAL_ENV: dict[str, str] = {
    "RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER": "0",
    "RAY_USAGE_STATS_ENABLED": "0",
}

# The mode RayVecEnv provides and the distribution that declares Ray: without Ray, building a
# RayVecEnv raises the MissingDependency of make_vec(..., vectorization_mode="ray").
MODE, DISTRIBUTION = "ray", "sekai-ray"

SETTLE_SECONDS = 10.0  # how long check_feasible() waits for busy resources to be freed
RELEASE_SECONDS = 1.0  # how long Ray may take to free the resources of actors killed here
_POLL_SECONDS = 0.05

_killed_at = -float("inf")  # when this process last killed worker actors (actors_killed())

_local_cluster: str | None = None  # the cluster_id() of the local cluster connect() started

_RESOURCES_TYPE = (
    "resources_per_worker must be a dict of resource name -> amount, such as "
    '{{"CPU": 2}}, {{"CPU": 1, "GPU": 0.5}} or {{"CPU": 1, "memory": 2**30, "my_resource": 1}}, '
    "got {got}."
)


def connect(address: str | None) -> ModuleType:
    """The ``ray`` module, connected to a cluster.

    - Ray already initialised in this process: that connection is used as it is.
    - ``address`` given: ``ray.init(address=address)`` (``"auto"``, ``"host:port"`` or
      ``"ray://host:port"`` for Ray Client).
    - Otherwise a new local cluster: dashboard off, and (when Ray is first imported here)
      loopback-only and without usage reporting (``LOCAL_ENV``). It is never an existing
      cluster found through ``RAY_ADDRESS`` or a running ``ray start``: pass ``address="auto"``
      for that. It stays up for later RayVecEnvs until ``ray.shutdown()`` or the process exits.

    Raises:
        TypeError: ``address`` is not a string or None.
        sekai.MissingDependency: Ray is not installed (sekai-ray installed with ``--no-deps``,
            or Ray removed later), with the command that installs it.
    """
    if address is not None and not isinstance(address, str):
        raise TypeError(
            f"address must be a Ray cluster address (str) or None, got {type(address).__name__}."
        )
    if address is None and "ray" not in sys.modules:
        for key, value in LOCAL_ENV.items():
            os.environ.setdefault(key, value)
    with mode_library_imports(MODE, DISTRIBUTION):
        import ray

    global _local_cluster
    if not ray.is_initialized():
        if address is None:
            # "local": start a new instance even when RAY_ADDRESS or a running cluster exists.
            ray.init(address="local", include_dashboard=False)
            _local_cluster = cluster_id(ray)
        else:
            ray.init(address=address)
    module: ModuleType = ray
    return module


def _check_amount(name: str, amount: Any) -> float:
    real = (int, float, np.integer, np.floating)
    if isinstance(amount, (bool, np.bool_)) or not isinstance(amount, real) or not amount >= 0:
        raise ValueError(f"resources_per_worker[{name!r}] must be a number >= 0, got {amount!r}.")
    return float(amount)


def actor_options(resources: Mapping[str, Any] | None) -> dict[str, Any]:
    """The ``ray.remote(...).options()`` of one worker actor for ``resources_per_worker``.

    The keys are Ray's resource names, as in Ray Train's ``resources_per_worker``: ``"CPU"``,
    ``"GPU"``, ``"memory"`` (bytes) and any custom resource. ``"CPU"`` defaults to 1, so each
    actor reserves a CPU for its sub-envs.

    Raises:
        TypeError: not a mapping of str keys.
        ValueError: an amount that is not a number >= 0.
    """
    if resources is None:
        resources = {}
    if not isinstance(resources, Mapping):
        raise TypeError(_RESOURCES_TYPE.format(got=type(resources).__name__))
    options: dict[str, Any] = {"num_cpus": 1.0}
    custom: dict[str, float] = {}
    for name, amount in resources.items():
        if not isinstance(name, str):
            raise TypeError(_RESOURCES_TYPE.format(got=f"a key {name!r}"))
        value = _check_amount(name, amount)
        if name == "CPU":
            options["num_cpus"] = value
        elif name == "GPU":
            options["num_gpus"] = value
        elif name == "memory":
            options["memory"] = value
        else:
            custom[name] = value
    if custom:
        options["resources"] = custom
    return options


def actors_killed() -> None:
    """Note that this process has just killed worker actors: Ray frees their resources a
    moment later (``default_num_workers`` waits for them)."""
    global _killed_at
    _killed_at = time.monotonic()


def default_num_workers(ray: ModuleType, num_envs: int, options: Mapping[str, Any]) -> int:
    """One actor per sub-env, but no more than the cluster's free CPUs can hold (at least
    one), so that a second RayVecEnv takes what the first left.

    CPUs that actors this process killed less than ``RELEASE_SECONDS`` ago still hold are
    waited for (a RayVecEnv closed just before is not left fewer actors than it had).
    """
    per_worker = float(options.get("num_cpus", 1.0))
    if per_worker <= 0:
        return num_envs

    def fitting(resources: Mapping[str, Any]) -> int:
        return max(1, min(num_envs, int(float(resources.get("CPU", 0.0)) // per_worker)))

    most = fitting(ray.cluster_resources())
    while True:
        free = fitting(ray.available_resources())
        if free >= most or time.monotonic() >= _killed_at + RELEASE_SECONDS:
            return free
        time.sleep(_POLL_SECONDS)


def cluster_id(ray: ModuleType) -> str | None:
    """The Ray session this process is connected to (unique per cluster start, where a GCS
    address may be reused), or None where Ray does not say (Ray Client) or is not connected."""
    if not ray.is_initialized():
        return None
    try:
        return str(ray.get_runtime_context().get_session_name())
    except Exception:
        return None


def _shortage(asked: Mapping[str, float], have: Mapping[str, Any], label: str) -> list[str]:
    return [
        f"{need:g} {name} ({label} {float(have.get(name, 0.0)):g})"
        for name, need in asked.items()
        if need > 0 and need > float(have.get(name, 0.0)) + 1e-9
    ]


def check_feasible(ray: ModuleType, options: Mapping[str, Any], num_workers: int) -> None:
    """On a local cluster started here, whose resources are fixed, fail at once when the actors
    cannot be scheduled, rather than wait for them forever.

    Waits up to ``SETTLE_SECONDS`` for resources that are only busy (the actors of a RayVecEnv
    closed a moment ago are still being stopped). A cluster that Ray connected to may grow
    (autoscaler), so there Ray waits for the resources as usual.

    Raises:
        ValueError: naming what the actors ask for and what the cluster has (or has free).
    """
    if _local_cluster is None or cluster_id(ray) != _local_cluster:
        return
    per_worker = {
        "CPU": float(options.get("num_cpus", 0.0)),
        "GPU": float(options.get("num_gpus", 0.0)),
        "memory": float(options.get("memory", 0.0)),
        **{name: float(amount) for name, amount in options.get("resources", {}).items()},
    }
    asked = {name: amount * num_workers for name, amount in per_worker.items()}
    each = "{" + ", ".join(f"{k}: {v:g}" for k, v in per_worker.items() if v > 0) + "}"
    where = f"{num_workers} worker actor{'s' if num_workers != 1 else ''} x {each}"
    short = _shortage(asked, ray.cluster_resources(), "it has")
    if short:
        raise ValueError(
            f"RayVecEnv needs {', '.join(short)} for {where}, more than the local Ray cluster "
            "has. Use fewer workers (num_workers), ask for less per worker "
            "(resources_per_worker), or connect to a larger cluster (address=...)."
        )
    deadline = time.monotonic() + SETTLE_SECONDS
    while True:
        short = _shortage(asked, ray.available_resources(), "free:")
        if not short:
            return
        if time.monotonic() >= deadline:
            raise ValueError(
                f"RayVecEnv needs {', '.join(short)} for "
                f"{where}: other actors (another RayVecEnv that is not closed?) hold the rest "
                "of the local Ray cluster. Close them, use fewer workers (num_workers), or ask "
                "for less per worker (resources_per_worker)."
            )
        time.sleep(_POLL_SECONDS)
