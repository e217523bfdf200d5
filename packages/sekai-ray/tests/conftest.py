"""One local Ray cluster for the whole session, kept on this machine.

The tests run inside a network namespace that has only loopback (``run-in-netns.sh``; the nox
session does this), so nothing Ray opens can reach beyond this machine. Outside such a namespace
they refuse to run unless ``SEKAI_RAY_TESTS_HOST_NETWORK=1`` says so; ``test_network.py`` then
still proves that every socket of Ray's processes is on loopback.
"""

from __future__ import annotations

import os
import shutil
import socket
import tempfile
from collections.abc import Iterator
from types import ModuleType

import pytest

from sekai.ray._cluster import LOCAL_ENV

# Before anything imports Ray (test modules do, at collection): Ray reads these at import.
for _key, _value in LOCAL_ENV.items():
    os.environ.setdefault(_key, _value)

HOST_NETWORK_OPT_IN = "SEKAI_RAY_TESTS_HOST_NETWORK"
_RAY_TMPDIR = pytest.StashKey[str]()


def loopback_only() -> bool:
    """Whether this process's network namespace has no interface but loopback."""
    return {name for _, name in socket.if_nameindex()} <= {"lo"}


def pytest_configure(config: pytest.Config) -> None:
    if not loopback_only() and os.environ.get(HOST_NETWORK_OPT_IN) != "1":
        raise pytest.UsageError(
            "The sekai-ray tests start a Ray cluster and must run in a network namespace that "
            "only has loopback: packages/sekai-ray/tests/run-in-netns.sh python -m pytest "
            f"packages/sekai-ray/tests (or `nox -s 'tests(sekai-ray)'`). Set {HOST_NETWORK_OPT_IN}"
            "=1 to run them on the host network anyway."
        )
    # Every local cluster leaves a session folder (logs, sockets: about 1 MB) in Ray's temp
    # folder, /tmp/ray by default. RAY_TMPDIR moves it into a folder of this run, removed at
    # its end, for the clusters of this process and of the subprocesses the tests start. (The
    # fixture cannot pass ray.init's _temp_dir: connect() starts the cluster as RayVecEnv does.)
    # mkdtemp, not pytest's tmp_path: Ray's Unix sockets live there, and their paths must stay
    # under 108 bytes.
    if "RAY_TMPDIR" not in os.environ:
        folder = tempfile.mkdtemp(prefix="sekai-ray-")
        config.stash[_RAY_TMPDIR] = folder
        os.environ["RAY_TMPDIR"] = folder


def pytest_unconfigure(config: pytest.Config) -> None:
    folder = config.stash.get(_RAY_TMPDIR, None)
    if folder is not None:  # after the session fixtures: ray_cluster has shut Ray down
        os.environ.pop("RAY_TMPDIR", None)
        shutil.rmtree(folder, ignore_errors=True)


@pytest.fixture(scope="session")
def ray_cluster() -> Iterator[ModuleType]:
    """The ``ray`` module, connected to a local cluster started once (as RayVecEnv starts it).

    Test modules that use Ray ask for it with ``pytestmark = pytest.mark.usefixtures(...)``.
    """
    from sekai.ray._cluster import connect

    ray = connect(None)
    try:
        yield ray
    finally:
        ray.shutdown()
