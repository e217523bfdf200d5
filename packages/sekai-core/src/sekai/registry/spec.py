"""EnvSpec, WrapperSpec and SpecSource: what the registry stores about an environment."""

from __future__ import annotations

import dataclasses
import json
import math
import numbers
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from sekai._args import check_bool, type_name
from sekai._equal import structurally_equal
from sekai.registry._build import build_env
from sekai.registry.entry_points import EntryPoint, check_entry_point, load_entry_point
from sekai.registry.ids import parse_env_id
from sekai.vector._time_limit import check_max_episode_steps

if TYPE_CHECKING:
    from sekai.core.env import Env

__all__ = [
    "EntryPoint",
    "EnvSpec",
    "SpecSource",
    "WrapperSpec",
    "check_entry_point",
    "load_entry_point",
    "wrapper_tuple",
]


def _describe(value: object) -> str:
    return value if isinstance(value, str) else repr(value)


# How to_json writes a tuple, which JSON would otherwise give back as a list.
_TUPLE = "__tuple__"


def _jsonable(value: Any, where: str) -> Any:
    """``value`` (kwargs) as ``to_json()`` writes it, so that ``from_json()`` gives back an equal
    value: NumPy scalars as Python numbers, tuples tagged; anything else JSON cannot hold (NaN
    and infinities included), or would give back changed (a dict key that is not a str), is
    refused naming ``where``."""
    if value is None or isinstance(value, (bool, str)):
        return value
    if isinstance(value, np.bool_):
        return bool(value)
    if isinstance(value, (int, np.integer)):
        return int(value)
    if isinstance(value, (float, np.floating)):
        number = float(value)
        if math.isinf(number) and np.isfinite(value):  # a longdouble beyond float64
            raise ValueError(f"{where} is {value!r}, too large for JSON's float64.")
        if not math.isfinite(number):  # as reward_threshold: JSON has no NaN or infinity
            raise ValueError(
                f"{where} is {value!r}; JSON has no NaN or infinity (strict parsers refuse "
                "the NaN and Infinity tokens): use a finite number or None."
            )
        return number
    if isinstance(value, (list, tuple)):
        items = [_jsonable(item, f"{where}[{i}]") for i, item in enumerate(value)]
        return items if isinstance(value, list) else {_TUPLE: items}
    if isinstance(value, Mapping):
        for key in value:
            if not isinstance(key, str):
                raise ValueError(
                    f"{where} has the key {key!r} ({type(key).__name__}); JSON keys are strings, "
                    f"so it would {_key_fate(key)}: use str keys."
                )
        if set(value) == {_TUPLE} and isinstance(value[_TUPLE], (list, tuple)):
            raise ValueError(
                f"{where} is a dict whose only key is {_TUPLE!r}, which is how to_json() writes a "
                "tuple: it would come back as a tuple."
            )
        return {key: _jsonable(item, f"{where}[{key!r}]") for key, item in value.items()}
    raise ValueError(
        f"{where} is of type {type_name(value)}; JSON holds None, bool, int, float, str, and "
        "lists, tuples and dicts (str keys) of them; NumPy scalars are written as numbers."
    )


def _key_fate(key: object) -> str:
    """What JSON makes of a dict key that is not a str (``None`` comes back as ``'null'``)."""
    try:
        (written,) = json.loads(json.dumps({key: 0}))
    except TypeError:
        return "not be written"
    return f"come back as {written!r}"


def _no_constant(token: str) -> Any:
    """``json.loads``' hook for the ``NaN`` / ``Infinity`` tokens: refused, as ``to_json()``
    refuses non-finite numbers (strict JSON has none)."""
    raise ValueError(
        f"An EnvSpec JSON document holds {token}, which strict JSON does not have (to_json() "
        "writes only finite numbers)."
    )


def _restore_tuple(obj: dict[str, Any]) -> Any:
    """The ``json.loads`` object hook undoing ``_jsonable``'s tag of a tuple."""
    if len(obj) == 1 and isinstance(obj.get(_TUPLE), list):
        return tuple(obj[_TUPLE])
    return obj


def _same_fields(a: Any, b: Any) -> bool:
    """The dataclass ``==`` of two specs of one type, but with kwargs compared structurally:
    an array in them (``prices=history``) made ``==`` raise instead of answering."""
    return all(
        structurally_equal(getattr(a, f.name), getattr(b, f.name))
        for f in dataclasses.fields(a)
        if f.compare
    )


@dataclass(frozen=True)
class SpecSource:
    """Who registered a spec: the plugin, its distribution and that distribution's version."""

    plugin: str
    distribution: str
    version: str


def keyword_dict(value: object, what: str) -> dict[str, Any]:
    """``value`` (keyword arguments ``what``) as a new dict; ``TypeError`` unless it is a
    mapping whose keys are all str (the names of keyword arguments)."""
    if not isinstance(value, Mapping):
        raise TypeError(f"{what} must be a dict, got {type(value).__name__}.")
    for key in value:
        if not isinstance(key, str):
            raise TypeError(
                f"{what} must have str keys (keyword argument names), got the key {key!r} "
                f"({type(key).__name__})."
            )
    return dict(value)


@dataclass(frozen=True, eq=False)
class WrapperSpec:
    """A wrapper ``make()`` applies after building an env: ``entry_point(env, **kwargs)``.

    Attributes:
        name: a label (usually the wrapper class name).
        entry_point: ``"module.path:Class"`` or the wrapper class/callable itself.
        kwargs: keyword arguments for the wrapper.
    """

    name: str
    entry_point: EntryPoint
    kwargs: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if not isinstance(self.name, str):
            raise TypeError(f"WrapperSpec name must be a str, got {type(self.name).__name__}.")
        check_entry_point(self.entry_point, f"entry_point of wrapper {self.name!r}")
        object.__setattr__(self, "kwargs", keyword_dict(self.kwargs, "WrapperSpec kwargs"))

    def __eq__(self, other: object) -> bool:  # unhashable, as before: kwargs is a dict
        if type(other) is not type(self):
            return NotImplemented
        return _same_fields(self, other)

    def to_dict(self) -> dict[str, Any]:
        """The JSON-ready form used by ``EnvSpec.to_json()``.

        Raises:
            ValueError: the entry point is a callable, which JSON cannot hold.
        """
        if not isinstance(self.entry_point, str):
            raise ValueError(
                f"Wrapper {self.name!r} has a callable entry point, which JSON cannot hold; "
                "register it with a 'module.path:ClassName' string to serialise the spec."
            )
        try:
            kwargs = _jsonable(dict(self.kwargs), "kwargs")
        except ValueError as exc:
            raise ValueError(
                f"The kwargs of wrapper {self.name!r} cannot be serialised to JSON: {exc}"
            ) from None
        return {"name": self.name, "entry_point": self.entry_point, "kwargs": kwargs}


def wrapper_tuple(value: Iterable[WrapperSpec]) -> tuple[WrapperSpec, ...]:
    """``value`` as a tuple of WrapperSpec (a lone WrapperSpec or string is refused)."""
    if isinstance(value, (str, WrapperSpec)) or not isinstance(value, Iterable):
        raise TypeError(
            f"additional_wrappers must be a sequence of WrapperSpec, got {type(value).__name__}."
        )
    wrappers = tuple(value)
    for item in wrappers:
        if not isinstance(item, WrapperSpec):
            raise TypeError(
                f"additional_wrappers must hold WrapperSpec objects, got {type(item).__name__}."
            )
    return wrappers


_SPEC_KEYS = frozenset(
    {
        "id", "entry_point", "reward_threshold", "nondeterministic", "max_episode_steps",
        "kwargs", "additional_wrappers", "vector_entry_point", "kernel_entry_point",
    }
)  # fmt: skip
_WRAPPER_KEYS = frozenset({"name", "entry_point", "kwargs"})


def _refuse_unknown_keys(data: Mapping[str, Any], known: frozenset[str], what: str) -> None:
    # A misspelt key would otherwise be dropped without a word, and the spec rebuilt without it.
    unknown = sorted(set(data) - known)
    if unknown:
        raise ValueError(f"{what} has unknown keys {unknown}; expected only {sorted(known)}.")


def _wrapper_from_json(item: object, index: int) -> WrapperSpec:
    what = f"additional_wrappers[{index}] of an EnvSpec JSON document"
    if not isinstance(item, dict):
        raise ValueError(f"{what} must be an object, got {type(item).__name__}.")
    _refuse_unknown_keys(item, _WRAPPER_KEYS, what)
    missing = [key for key in ("name", "entry_point") if key not in item]
    if missing:
        raise ValueError(f"{what} lacks {missing}.")
    return WrapperSpec(**item)


# Called with (spec, new_id) before a constructed spec's id changes; may raise to refuse it
# (the registry refuses renaming a spec it stores, which would leave it under the old ID).
_RENAME_CHECKS: list[Callable[[EnvSpec, str], None]] = []


class _EnvId:
    """``EnvSpec.id``: validated, and ``namespace``/``name``/``version`` derived from it, on
    every assignment, the constructor's included. A descriptor, so that the spec's other
    fields are set at plain attribute speed (``make()`` copies the spec)."""

    def __get__(self, spec: EnvSpec | None, owner: type[Any] | None = None) -> str:
        if spec is None:  # on the class: dataclass then sees a field without a default
            raise AttributeError("id")
        env_id: str = spec.__dict__["id"]
        return env_id

    def __set__(self, spec: EnvSpec, value: str) -> None:
        parts = parse_env_id(value)
        fields = spec.__dict__
        if "id" in fields and value != fields["id"]:
            for check in _RENAME_CHECKS:
                check(spec, value)
        fields["id"] = value
        fields["namespace"], fields["name"], fields["version"] = parts


@dataclass(repr=False, eq=False)
class EnvSpec:
    """A registry entry: how to build one environment.

    Attributes:
        id: ``[namespace/]Name[-vN]``.
        entry_point: ``"module.path:Class"`` or a callable returning the env.
        reward_threshold: the return at which the task counts as solved.
        nondeterministic: whether the env is stochastic beyond its seed.
        max_episode_steps: the ``TimeLimit`` ``make()`` applies (None = no limit).
        kwargs: keyword arguments for the entry point.
        additional_wrappers: wrappers ``make()`` applies after the time limit, innermost first.
        vector_entry_point: a native vector implementation (``NativeVecEnv`` subclass).
        kernel_entry_point: the env's array kernel (an ``ArrayKernel`` built with ``kwargs``),
            which the ``jax`` and ``torch`` vectorization modes run.
        source: the plugin that registered the spec, or None for ``sekai.register()``; not part of
            equality, ``to_json()`` or ``pprint()``.
        namespace, name, version: the parts of ``id``, derived again whenever ``id`` is
            assigned (an invalid ID raises as the constructor does).
    """

    if TYPE_CHECKING:  # a plain required str to type checkers
        id: str
    else:
        id: _EnvId = _EnvId()
    entry_point: EntryPoint | None = None
    reward_threshold: float | None = None
    nondeterministic: bool = False
    max_episode_steps: int | None = None
    kwargs: dict[str, Any] = field(default_factory=dict)
    additional_wrappers: tuple[WrapperSpec, ...] = ()
    vector_entry_point: EntryPoint | None = None
    kernel_entry_point: EntryPoint | None = None
    source: SpecSource | None = field(default=None, compare=False)
    namespace: str | None = field(init=False)
    name: str = field(init=False)
    version: int | None = field(init=False)

    def __post_init__(self) -> None:
        if self.entry_point is not None:
            check_entry_point(self.entry_point, "entry_point")
        if self.vector_entry_point is not None:
            check_entry_point(self.vector_entry_point, "vector_entry_point")
        if self.kernel_entry_point is not None:
            check_entry_point(self.kernel_entry_point, "kernel_entry_point")
        self.kwargs = {} if self.kwargs is None else keyword_dict(self.kwargs, "kwargs")
        self.additional_wrappers = wrapper_tuple(self.additional_wrappers)
        threshold = self.reward_threshold
        if threshold is not None and (
            isinstance(threshold, bool) or not isinstance(threshold, numbers.Real)
        ):
            raise TypeError(
                f"reward_threshold must be a number or None, got {type(threshold).__name__}."
            )
        if threshold is not None:
            if not math.isfinite(threshold):  # JSON has no NaN/inf, and no return reaches NaN
                raise ValueError(f"reward_threshold must be finite or None, got {threshold}.")
            self.reward_threshold = float(threshold)  # a NumPy scalar would not serialise
        self.nondeterministic = check_bool(None, "nondeterministic", self.nondeterministic)
        # make()'s -1 ("remove the limit") has no meaning here: None registers no limit.
        self.max_episode_steps = check_max_episode_steps(self.max_episode_steps)

    def __repr__(self) -> str:
        return f"EnvSpec(id={self.id!r})"

    def __eq__(self, other: object) -> bool:  # unhashable, as before: the spec is mutable
        if type(other) is not type(self):
            return NotImplemented
        return _same_fields(self, other)

    def make(self, **kwargs: Any) -> Env[Any, Any]:
        """Build this env: ``sekai.make(self, **kwargs)``."""
        max_episode_steps = kwargs.pop("max_episode_steps", None)
        return build_env(self, max_episode_steps, kwargs)

    def to_json(self) -> str:
        """Serialise the spec (string entry points only; callables are left out).

        ``from_json()`` gives back an equal spec: NumPy scalars in the kwargs are written as
        Python numbers and tuples stay tuples.

        Raises:
            ValueError: the kwargs (the env's or a wrapper's) hold a value JSON cannot give back,
                or a wrapper has a callable entry point.
        """
        try:
            kwargs = _jsonable(self.kwargs, "kwargs")
        except ValueError as exc:
            raise ValueError(
                f"The kwargs of {self.id!r} cannot be serialised to JSON: {exc}"
            ) from None
        data: dict[str, Any] = {
            "id": self.id,
            "reward_threshold": self.reward_threshold,
            "nondeterministic": self.nondeterministic,
            "max_episode_steps": self.max_episode_steps,
            "kwargs": kwargs,
            "additional_wrappers": [w.to_dict() for w in self.additional_wrappers],
        }
        if isinstance(self.entry_point, str):
            data["entry_point"] = self.entry_point
        if isinstance(self.vector_entry_point, str):
            data["vector_entry_point"] = self.vector_entry_point
        if isinstance(self.kernel_entry_point, str):
            data["kernel_entry_point"] = self.kernel_entry_point
        return json.dumps(data, indent=2, allow_nan=False)  # strict JSON, as checked above

    @classmethod
    def from_json(cls, json_spec: str) -> EnvSpec:
        """Rebuild a spec from ``to_json()`` output.

        Raises:
            ValueError: the text is not strict JSON (``NaN`` and ``Infinity``, which
                ``to_json()`` never writes, are refused), not an object with an ``'id'``, or
                holds a key ``to_json()`` does not write (at the top or in a wrapper), or its
                ``'additional_wrappers'`` is not a list (or null).
            TypeError: a field has the wrong type (``'kwargs'`` not an object or null),
                as the constructor refuses it.
        """
        data = json.loads(json_spec, object_hook=_restore_tuple, parse_constant=_no_constant)
        if not isinstance(data, dict) or "id" not in data:
            raise ValueError("An EnvSpec JSON document must be an object with an 'id' key.")
        _refuse_unknown_keys(data, _SPEC_KEYS, "An EnvSpec JSON document")
        # Only null means "none": a falsy value of another type ([] for kwargs, "" or false)
        # is as malformed as a truthy one.
        raw_wrappers = data.get("additional_wrappers")
        if raw_wrappers is None:
            raw_wrappers = []
        if not isinstance(raw_wrappers, list):
            raise ValueError(
                "'additional_wrappers' of an EnvSpec JSON document must be a list, "
                f"got {type(raw_wrappers).__name__}."
            )
        wrappers = tuple(_wrapper_from_json(w, i) for i, w in enumerate(raw_wrappers))
        return cls(
            id=data["id"],
            entry_point=data.get("entry_point"),
            reward_threshold=data.get("reward_threshold"),
            nondeterministic=data.get("nondeterministic", False),
            max_episode_steps=data.get("max_episode_steps"),
            kwargs=data["kwargs"] if data.get("kwargs") is not None else {},
            additional_wrappers=wrappers,
            vector_entry_point=data.get("vector_entry_point"),
            kernel_entry_point=data.get("kernel_entry_point"),
        )

    def pprint(self) -> str:
        """A multi-line ``key=value`` description (the first lines of ``sekai info``)."""
        lines = [f"id={self.id}", f"entry_point={_describe(self.entry_point)}"]
        if self.vector_entry_point is not None:
            lines.append(f"vector_entry_point={_describe(self.vector_entry_point)}")
        if self.kernel_entry_point is not None:
            lines.append(f"kernel_entry_point={_describe(self.kernel_entry_point)}")
        if self.max_episode_steps is not None:
            lines.append(f"max_episode_steps={self.max_episode_steps}")
        if self.reward_threshold is not None:
            lines.append(f"reward_threshold={self.reward_threshold}")
        if self.nondeterministic:
            lines.append("nondeterministic=True")
        if self.kwargs:
            lines.append(f"kwargs={self.kwargs}")
        lines.extend(
            f"wrapper={w.name} ({_describe(w.entry_point)}) {w.kwargs}"
            for w in self.additional_wrappers
        )
        return "\n".join(lines)

    def with_source(self, source: SpecSource | None) -> EnvSpec:
        """A copy attributed to ``source``."""
        return dataclasses.replace(self, source=source)
