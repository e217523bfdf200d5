"""``sekai info ID``: an environment's spec, spaces, metadata, wrappers and provider."""

from __future__ import annotations

import argparse
import json
from typing import TYPE_CHECKING, Any

from sekai.cli._env_module import import_env_modules
from sekai.cli._list import spec_json
from sekai.cli._output import Output

if TYPE_CHECKING:
    from sekai.core.env import Env
    from sekai.registry.spec import EnvSpec

__all__ = ["add_parser", "provided_by", "run", "wrapper_chain"]

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


def run(args: argparse.Namespace, out: Output) -> int:
    """Print the description of ``args.env_id`` (as one JSON object with ``--json``)."""
    from sekai.registry import make, spec

    env_spec = spec(args.env_id)
    import_env_modules(args.env_id)
    env = make(args.env_id)
    try:
        observation_space, action_space = env.observation_space, env.action_space
        metadata = env.metadata
        chain = wrapper_chain(env)
    finally:
        env.close()
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
        # repr() for what JSON cannot hold (a class in kwargs, a tuple key in metadata).
        out.print(json.dumps(described, indent=2, default=repr))
        return 0
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
    return 0
