"""Vector seeding and reset options (core.md §3 and §14 rule 5), checked in the parent process."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import numpy as np

from sekai.core._rng import check_seed, make_seed_sequence
from sekai.error import _noted

__all__ = [
    "check_native_seed",
    "draw_native_seed",
    "generator_for_all",
    "native_seed",
    "refuse_rng_per_sub_env",
    "vector_options",
    "vector_seeds",
]


def generator_for_all(
    what: str, num_envs: int, instead: str, why: str = "", got: str = "a numpy Generator"
) -> str:
    """The message that refuses one numpy Generator given (as ``what``, which ``got`` it) for
    ``num_envs`` sub-envs: ``why`` it cannot serve them, then what to pass ``instead``."""
    return (
        f"{what} got {got}: one generator cannot seed {num_envs} sub-envs "
        f"independently{why}. {instead}"
    )


def refuse_rng_per_sub_env(
    env: object, name: str, values: Any, *, what: str = "a native vector env"
) -> None:
    """``set_attr(name, values)`` of an env with one generator for all its sub-envs (``what``):
    refuse one per sub-env for ``rng``, the form the per-env backends take.

    Raises:
        TypeError: ``name`` is ``"rng"`` and ``values`` a list or tuple.
    """
    if name == "rng" and isinstance(values, (list, tuple)):
        raise TypeError(
            f"{type(env).__name__}.set_attr('rng', values) got a {type(values).__name__} of "
            f"{len(values)}: {what} draws from one Generator for all its sub-envs. Pass one "
            "Generator (e.g. np.random.default_rng(seed)), or seed it with reset(seed=...); one "
            "generator per sub-env is for the sync, async and proc backends."
        )


# gymnasium's vector-level option; a sub-env would ignore it (or refuse it as unknown).
_RESET_MASK = (
    "reset(options={'reset_mask': ...}) is gymnasium's selective reset; a sekai VecEnv's "
    "reset() resets every sub-env. Finished sub-envs reset themselves within the same step "
    "(same-step autoreset, the default), or, with autoreset=False, stay frozen until the next "
    "reset(): keep stepping until every sub-env has finished, then reset them all."
)


def _seed_list(seed: Any, num_envs: int) -> list[Any] | None:
    """The entries of a seed list (validated), or None when ``seed`` is not a list."""
    if isinstance(seed, np.ndarray) and seed.ndim == 1:
        seed = seed.tolist()
    if not isinstance(seed, (list, tuple)):
        return None
    if len(seed) != num_envs:
        raise ValueError(
            f"reset(seed=...) got a list of {len(seed)} seeds for {num_envs} sub-envs; "
            f"pass exactly {num_envs} (None keeps a sub-env's stream)."
        )
    for index, entry in enumerate(seed):
        check_seed(entry, what=f"seed[{index}]")
    return list(seed)


def _check_single(seed: Any, num_envs: int) -> int:
    if isinstance(seed, np.random.Generator):
        raise TypeError(
            generator_for_all(
                "reset(seed=...)",
                num_envs,
                "Pass an int (independent child seeds are spawned from it) or a list of "
                f"{num_envs} seeds.",
            )
        )
    check_seed(
        seed,
        what="reset(seed=...)",
        allow_generator=False,
        accepted=f"None, a non-negative int or a list of {num_envs} seeds",
    )
    return int(seed)


def _draw(generator: np.random.Generator) -> int:
    return int(generator.integers(2**63))


def vector_seeds(seed: Any, num_envs: int) -> list[int | None]:
    """The seed each sub-env's ``reset()`` receives, everything checked before anything is used.

    An int gives ``make_seed_sequence(seed, num_envs)``; a list of ``num_envs`` entries passes
    ints as they are, keeps ``None`` and turns a Generator into one draw
    ``int(g.integers(2**63))``; ``None`` gives ``None`` for every sub-env.

    Raises:
        TypeError: a Generator (alone), or a float/bool/str seed anywhere.
        ValueError: a negative seed, or a list whose length is not ``num_envs``.
    """
    if seed is None:
        return [None] * num_envs
    entries = _seed_list(seed, num_envs)
    if entries is None:
        return list(make_seed_sequence(_check_single(seed, num_envs), num_envs))
    return [
        _draw(entry)
        if isinstance(entry, np.random.Generator)
        else (None if entry is None else int(entry))
        for entry in entries
    ]


def native_seed(
    seed: Any, num_envs: int, current: Callable[[], np.random.Generator]
) -> tuple[int | np.random.Generator | None, list[int | None]]:
    """What a native env passes to ``_set_rng`` for ``reset(seed=...)``, and the seed each
    sub-env counts as reset with (what ``VecRecordEpisodeStatistics`` tells trackers).

    An int seeds the one generator, and every sub-env counts as reset with it. A list is
    combined into one ``SeedSequence`` of its entries (``None`` contributes a draw from
    ``current()``, a Generator a draw from itself), except that an all-``None`` list is the same
    as ``None`` (the stream continues); each sub-env counts as reset with its own entry, as
    ``vector_seeds`` gives it to a sub-env of another backend (a Generator's one draw, None
    kept). The two steps, ``check_native_seed`` then ``draw_native_seed``, can be taken apart
    to check the seed before something else and draw only once that is known to be fine.
    """
    return draw_native_seed(check_native_seed(seed, num_envs), num_envs, current)


def check_native_seed(seed: Any, num_envs: int) -> int | list[Any] | None:
    """``reset(seed=...)`` of a native env checked, nothing drawn yet: ``None`` (the stream
    continues; also an all-``None`` list), the one int, or the list's entries.

    Raises:
        TypeError: a Generator (alone), or a float/bool/str seed anywhere.
        ValueError: a negative seed, or a list whose length is not ``num_envs``.
    """
    if seed is None:
        return None
    entries = _seed_list(seed, num_envs)
    if entries is None:
        return _check_single(seed, num_envs)
    return None if all(entry is None for entry in entries) else entries


def draw_native_seed(
    checked: int | list[Any] | None, num_envs: int, current: Callable[[], np.random.Generator]
) -> tuple[int | np.random.Generator | None, list[int | None]]:
    """``native_seed``'s result for a seed ``check_native_seed`` returned (``checked``): the
    draws from ``current()`` and from Generators in a seed list happen here."""
    if checked is None:
        return None, [None] * num_envs
    if isinstance(checked, int):
        return checked, [checked] * num_envs
    given: list[int | None] = []
    entropy: list[int] = []
    for entry in checked:  # in order: a Generator entry may be current() itself
        if entry is None:
            given.append(None)
            entropy.append(_draw(current()))
        else:
            value = _draw(entry) if isinstance(entry, np.random.Generator) else int(entry)
            given.append(value)
            entropy.append(value)
    return np.random.default_rng(np.random.SeedSequence(entropy)), given


def vector_options(options: Any, num_envs: int) -> list[dict[str, Any] | None]:
    """One options dict (or None) per sub-env from ``reset(options=...)``.

    A single dict is given to every sub-env (each its own shallow copy); a list must have
    ``num_envs`` dicts or ``None``.

    Raises:
        ValueError: a list of another length, or gymnasium's ``reset_mask`` in a dict for all.
        TypeError: anything else than a dict, a list of dicts/None, or None.
    """
    if options is None:
        return [None] * num_envs
    if isinstance(options, Mapping):
        if "reset_mask" in options:
            raise ValueError(_RESET_MASK)
        return [dict(options) for _ in range(num_envs)]
    if isinstance(options, (list, tuple)):
        if len(options) != num_envs:
            raise ValueError(
                f"reset(options=...) got a list of {len(options)} entries for {num_envs} "
                f"sub-envs; pass one dict for all, or exactly {num_envs} dicts (or None)."
            )
        per_env: list[dict[str, Any] | None] = []
        for index, entry in enumerate(options):
            if entry is not None and not isinstance(entry, Mapping):
                raise TypeError(
                    f"reset(options=...)[{index}] must be a dict or None, "
                    f"got {type(entry).__name__}."
                )
            per_env.append(None if entry is None else dict(entry))
        return per_env
    raise TypeError(
        "reset(options=...) must be a dict, a list with one dict (or None) per sub-env, or "
        f"None, got {type(options).__name__}."
    )


def options_entry_noted(error: BaseException, options: Any, index: int) -> BaseException:
    """``error``, raised by sub-env ``index``'s reset, with a note naming the entry of
    ``options`` (as ``reset(options=...)`` got it) that sub-env was reset with, when that was
    a list with one entry per sub-env; ``error`` as it was otherwise (one dict for all names
    no entry). The error's class and message stay the sub-env's own."""
    if isinstance(options, (list, tuple)):
        return _noted(error, [f"raised by sub-env {index}, reset with reset(options=...)[{index}]"])
    return error
