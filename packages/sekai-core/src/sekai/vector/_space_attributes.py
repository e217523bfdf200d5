"""The ``observation_space`` and ``action_space`` that ``set_attr`` gives the sub-envs of the
array-based vector envs (native and kernel), which have no sub-env objects to hold them.

On a SyncVecEnv, ``set_attr("action_space", space)`` changes the attribute of every sub-env
and leaves the VecEnv's own ``action_space`` as it was: the actions are still checked against
it, so the same batch is refused (``InvalidAction``) before and after. The array-based envs
keep that split: ``set_attr`` of a space changes what ``get_attr`` reports, never the spaces the
env checks actions and builds observations with, which its arrays (a native kernel indexing a
table by action) were built for.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from sekai.spaces import Space
from sekai.spaces.space import check_space
from sekai.vector._contract.subenv import call_attribute

__all__ = ["SPACE_NAMES", "SubEnvSpaces"]

SPACE_NAMES = frozenset({"observation_space", "action_space"})


class SubEnvSpaces:
    """Mixin of a VecEnv without sub-env objects: ``_set_attribute`` keeps the spaces that
    ``set_attr`` sets apart from the env's own, and ``_sub_env_spaces`` reports them."""

    num_envs: int
    _spaces_set: dict[str, list[Space[Any]]] | None = None

    def _sub_env_spaces(self, name: str) -> list[Space[Any]] | None:
        """What ``get_attr(name)`` gives for a space that ``set_attr`` set (one per sub-env);
        None for any other attribute, or a space never set (the env's own is every sub-env's)."""
        spaces = self._spaces_set
        if spaces is None or name not in spaces:
            return None
        return list(spaces[name])

    def _sub_env_call(
        self, name: str, args: Sequence[Any], kwargs: Mapping[str, Any] | None
    ) -> list[Any] | None:
        """What ``call(name, ...)`` gives for a space that ``set_attr`` set: the sub-envs'
        spaces, as ``get_attr`` reports them; None when ``name`` is no such space."""
        spaces = self._sub_env_spaces(name)
        if spaces is None:
            return None
        return [call_attribute(name, space, args, kwargs) for space in spaces]

    def _set_attribute(self, name: str, values: Any) -> None:
        """``setattr(self, name, values)``, but ``observation_space`` and ``action_space`` set
        the sub-envs' attribute: one Space for all, or a list of one Space per sub-env, every
        one checked before any is kept.

        Raises:
            TypeError: a value for a space that is not a sekai.Space (as the wrappers of a
                SyncVecEnv's sub-envs refuse it).
        """
        if name not in SPACE_NAMES:
            setattr(self, name, values)
            return
        owner = type(self).__name__
        if isinstance(values, list) and len(values) == self.num_envs:
            spaces = [check_space(owner, name, value) for value in values]
        else:
            spaces = [check_space(owner, name, values)] * self.num_envs
        if self._spaces_set is None:
            self._spaces_set = {}
        self._spaces_set[name] = spaces
