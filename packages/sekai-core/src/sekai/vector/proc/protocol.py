"""The messages between a ProcVecEnv and its workers.

A command is ``seq`` and ``op`` (``HEAD`` bytes) then the pickled argument; its reply is the same
``seq`` (8 bytes) then the pickled ``(entries, errors)``: the same bytes whether they travel
through the worker's pipe or its mailbox (``mail``). Both sides read the numbers without
unpickling anything, so a message that cannot be unpickled is still answered and matched:

- ``seq`` numbers the commands of one worker; the parent drops a reply whose ``seq`` is not the
  one it waits for (the reply of a call interrupted in the parent, e.g. by Ctrl-C).
- ``entries`` holds one entry per sub-env of the worker (None where it failed), or None;
- ``errors`` is None or a list of ``(local index, ErrorInfo)``.

The entries of each operation:

=========  =========================================  ===========================================
op         argument                                   entry of a sub-env
=========  =========================================  ===========================================
INIT       (cloudpickled factories, autoreset, first  reply ``entries`` is (observation_space,
           sub-env index)                             action_space, metadata, [resets_itself])
ATTACH     (block name, observation space, num_envs)  None
RESET      (seeds, options), one per sub-env          (info,) or (info, observation)
STEP       (positions or None: all, encoded actions)  one reply for the slice: (packed infos,
                                                      None or (rewards, terminated, truncated,
                                                      packed observations))
GET        name                                       the value
SET        (name, values), one value per sub-env      None
CALL       (name, args, kwargs)                       the value
CLOSE      None                                       None
=========  =========================================  ===========================================

Observations travel in the entries only without shared memory; with it, a STEP's rewards and
flags are in shared memory too. STEP's encoding is ``sekai.vector._batches``' and ``_remote``'s,
shared with RayVecEnv's actors.
"""

from __future__ import annotations

__all__ = [
    "ATTACH",
    "CALL",
    "CLOSE",
    "GET",
    "HEAD",
    "INIT",
    "NAMES",
    "RESET",
    "SET",
    "STEP",
    "head",
    "name",
    "read_head",
]

INIT, ATTACH, RESET, STEP, GET, SET, CALL, CLOSE = range(8)

NAMES = ("init", "attach", "reset", "step", "get_attr", "set_attr", "call", "close")

HEAD = 9  # bytes: seq (8, little-endian, signed), then op (1)


def name(op: int) -> str:
    """The name of command ``op`` (for messages)."""
    return NAMES[op] if 0 <= op < len(NAMES) else f"command {op}"


def head(seq: int, op: int) -> bytes:
    """The first ``HEAD`` bytes of a command."""
    return seq.to_bytes(8, "little", signed=True) + bytes((op,))


def read_head(message: bytes | memoryview) -> tuple[int, int]:
    """``(seq, op)`` of a command."""
    return int.from_bytes(message[:8], "little", signed=True), message[8]
