"""``sekai info ID``: an environment's spec, spaces, metadata, wrappers and provider."""

from __future__ import annotations

import argparse
import json
import math
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from sekai.cli._env_module import import_env_modules
from sekai.cli._list import spec_json
from sekai.cli._output import Output

if TYPE_CHECKING:
    from sekai.core.env import Env
    from sekai.registry.spec import EnvSpec

__all__ = ["add_parser", "json_value", "provided_by", "run", "wrapper_chain"]

_EXAMPLES = """\
examples:
  sekai info CartPole-v1
  sekai info Portfolio-v0
  sekai info CartPole-v1 --json | jq .action_space    the same data for scripts
  sekai -m my_envs info mine/Drift-v0    an env registered by your own module
"""


def add_parser(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the ``info`` subcommand."""
    parser = subparsers.add_parser(
        "info",
        help="describe one environment (spec, spaces, wrappers, provider)",
        description=(
            "Describe one environment: its registry entry, then the spaces, metadata and\n"
            "wrappers of the env make(ENV_ID) builds, and the distribution providing it."
        ),
        epilog=_EXAMPLES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("env_id", metavar="ENV_ID", help="a registered ID, e.g. CartPole-v1")
    parser.add_argument("--json", action="store_true", help="print JSON instead of text")
    parser.set_defaults(run=run)


def wrapper_chain(env: Env[Any, Any]) -> list[str]:
    """Class names from the outermost wrapper to the base env (one name if unwrapped)."""
    from sekai.core.wrapper import Wrapper

    names = []
    current: Any = env
    while isinstance(current, Wrapper):
        names.append(type(current).__name__)
        current = current.env
    names.append(type(current).__name__)
    return names


def provided_by(spec: EnvSpec) -> str:
    """``sekai-classic 0.3.0 (plugin classic)``, or ``runtime`` for ``sekai.register()`` IDs."""
    source = spec.source
    if source is None:
        return "runtime"
    return f"{source.distribution} {source.version} (plugin {source.plugin})"


def json_value(value: Any) -> Any:
    """``value`` in the standard JSON that ``--json`` writes (RFC 8259, which has no NaN).

    NumPy scalars become numbers and arrays lists; NaN and the infinities become the strings
    ``"nan"``, ``"inf"`` and ``"-inf"``; a dict key that is not a str becomes its ``repr()``
    (``"(0, 1)"``), as does any other value JSON has no form for (a class in the kwargs).
    """
    import numpy as np

    if isinstance(value, (np.ndarray, np.generic)):
        return json_value(value.tolist())
    if isinstance(value, float):
        return value if math.isfinite(value) else repr(value)
    if value is None or isinstance(value, (str, int)):  # bool is an int
        return value
    if isinstance(value, Mapping):
        return {
            key if isinstance(key, str) else repr(key): json_value(item)
            for key, item in value.items()
        }
    if isinstance(value, (list, tuple)):
        return [json_value(item) for item in value]
    return repr(value)


def run(args: argparse.Namespace, out: Output) -> int:
    """Print the description of ``args.env_id`` (as one JSON object with ``--json``).

    It is printed before the env is closed: a ``close()`` that raises is reported after it
    (``error: ...``, exit status 2) instead of replacing it.
    """
    from sekai.registry import make, spec

    env_spec = spec(args.env_id)
    import_env_modules(args.env_id)
    env = make(args.env_id)
    try:
        _describe(args, env_spec, env, out)
    finally:
        env.close()
    return 0


def _describe(args: argparse.Namespace, env_spec: EnvSpec, env: Env[Any, Any], out: Output) -> None:
    """Print the spec, spaces, metadata, wrappers and provider of ``env`` (JSON with --json)."""
    observation_space, action_space = env.observation_space, env.action_space
    metadata = env.metadata
    chain = wrapper_chain(env)
    if args.json:
        described = {
            **spec_json(env_spec),
            "kwargs": env_spec.kwargs,
            "reward_threshold": env_spec.reward_threshold,
            "observation_space": repr(observation_space),
            "action_space": repr(action_space),
            "metadata": metadata,
            "wrappers": chain,
        }
        out.print(json.dumps(json_value(described), indent=2, allow_nan=False))
        return
    lines = [
        env_spec.pprint(),
        f"observation_space={observation_space!r}",
        f"action_space={action_space!r}",
    ]
    if metadata:
        lines.append(f"metadata={metadata!r}")
    if len(chain) > 1:
        lines.append(f"wrappers={' -> '.join(chain)}")
    lines.append(f"provided_by={provided_by(env_spec)}")
    out.lines(lines)
