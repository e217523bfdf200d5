"""Ray stays on this machine: every socket of its processes is on loopback.

This holds in the tests' loopback-only network namespace by construction; the check also proves
what RayVecEnv's local cluster does on the host network (``SEKAI_RAY_TESTS_HOST_NETWORK=1``).
"""

from __future__ import annotations

import ipaddress
import os
from pathlib import Path

import pytest

from sekai.ray import RayVecEnv
from sekai.vector._conformance import CounterEnv

pytestmark = pytest.mark.usefixtures("ray_cluster")

_TABLES = ("tcp", "tcp6", "udp", "udp6")


def _descendants(root: int) -> set[int]:
    """``root`` and every process below it (Ray's GCS, raylet, workers...)."""
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:  # it exited meanwhile
            continue
        ppid = int(stat.rsplit(")", 1)[1].split()[1])
        children.setdefault(ppid, []).append(int(entry.name))
    found, todo = set(), [root]
    while todo:
        pid = todo.pop()
        if pid not in found:
            found.add(pid)
            todo.extend(children.get(pid, ()))
    return found


def _socket_inodes(pids: set[int]) -> set[str]:
    inodes: set[str] = set()
    for pid in pids:
        try:
            fds = list(Path(f"/proc/{pid}/fd").iterdir())
        except OSError:
            continue
        for fd in fds:
            try:
                target = os.readlink(fd)
            except OSError:
                continue
            if target.startswith("socket:["):
                inodes.add(target[8:-1])
    return inodes


def _address(field: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address:
    """An address of /proc/net/{tcp,udp}[6]: hex, each 32-bit word in host (little) order."""
    hex_ip = field.split(":")[0]
    raw = b"".join(bytes.fromhex(hex_ip[i : i + 8])[::-1] for i in range(0, len(hex_ip), 8))
    address = ipaddress.ip_address(raw)
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        return address.ipv4_mapped
    return address


def _ray_sockets() -> list[tuple[str, str, str]]:
    """(table, local address, remote address) of every inet socket of this process tree."""
    inodes = _socket_inodes(_descendants(os.getpid()))
    found = []
    for table in _TABLES:
        path = Path("/proc/net") / table
        if not path.exists():
            continue
        for line in path.read_text().splitlines()[1:]:
            fields = line.split()
            if fields[9] in inodes:
                found.append((table, fields[1], fields[2]))
    return found


def test_parse_proc_net_addresses() -> None:
    assert str(_address("0100007F:1F90")) == "127.0.0.1"
    assert str(_address("00000000000000000000000001000000:0050")) == "::1"
    assert str(_address("0000000000000000FFFF00000100007F:0050")) == "127.0.0.1"


def test_every_socket_of_ray_is_on_loopback() -> None:
    with RayVecEnv([CounterEnv] * 2, num_workers=2, resources_per_worker={"CPU": 0.5}) as vec:
        vec.reset(seed=0)
        vec.step([1, 1])
        sockets = _ray_sockets()
    assert any(table.startswith("tcp") for table, _, _ in sockets)  # Ray's gRPC servers
    for table, local, remote in sockets:
        local_ip, remote_ip = _address(local), _address(remote)
        assert local_ip.is_loopback, f"{table} socket bound to {local_ip}"
        assert remote_ip.is_loopback or remote_ip.is_unspecified, f"{table} peer {remote_ip}"
