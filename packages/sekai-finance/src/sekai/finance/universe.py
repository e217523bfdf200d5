"""SlotMap: stable slot assignment for a changing set of instruments (Market-v0's universe)."""

from __future__ import annotations

import numbers
from collections import Counter
from collections.abc import Hashable, Iterable

import numpy as np

__all__ = ["SlotMap"]


class SlotMap:
    """Assign a changing set of instruments to ``max_slots`` fixed slots.

    An instrument keeps its slot for as long as it is present; newcomers take the lowest free
    slots in the order given. A policy that sees one slot per instrument therefore sees the same
    instrument in the same place until it leaves.

    Args:
        max_slots: number of slots (int >= 1).
    """

    def __init__(self, max_slots: int) -> None:
        if (
            isinstance(max_slots, (bool, np.bool_))
            or not isinstance(max_slots, numbers.Integral)
            or max_slots < 1
        ):
            raise ValueError(f"max_slots must be an int >= 1, got {max_slots!r}.")
        self.max_slots: int = int(max_slots)
        self.reset()

    def reset(self) -> None:
        """Empty every slot."""
        self._owners: list[Hashable | None] = [None] * self.max_slots
        self._slot: dict[Hashable, int] = {}
        self._changed = np.zeros(self.max_slots, np.bool_)

    def update(self, present: Iterable[Hashable]) -> np.ndarray:
        """Assign slots to the instruments now ``present`` and free the slots of the others.

        Returns:
            int64 array: the slot of each instrument of ``present``, in the order given.

        Raises:
            ValueError: ``present`` has duplicates or more instruments than slots.
        """
        ids = list(present)
        if len(set(ids)) != len(ids):
            duplicates = sorted(str(i) for i, n in Counter(ids).items() if n > 1)
            raise ValueError(f"present has duplicate instruments: {', '.join(duplicates)}.")
        if len(ids) > self.max_slots:
            raise ValueError(
                f"{len(ids)} instruments are present but there are only {self.max_slots} slots; "
                "pass at most max_slots of them."
            )
        before = list(self._owners)
        keep = {i for i in ids if i in self._slot}
        owners: list[Hashable | None] = [o if o in keep else None for o in before]
        slot_of = {o: s for s, o in enumerate(owners) if o is not None}
        free = (s for s, o in enumerate(owners) if o is None)
        for instrument in ids:
            if instrument not in slot_of:
                s = next(free)
                owners[s] = instrument
                slot_of[instrument] = s
        self._owners = owners
        self._slot = slot_of
        self._changed = np.array([a != b for a, b in zip(before, owners)], np.bool_)
        return np.array([slot_of[i] for i in ids], np.int64)

    def slot_of(self, instrument: Hashable) -> int | None:
        """The slot holding ``instrument``, or None."""
        return self._slot.get(instrument)

    @property
    def assets(self) -> list[Hashable | None]:
        """The instrument in each slot (None where empty)."""
        return list(self._owners)

    @property
    def changed(self) -> np.ndarray:
        """Bool mask of the slots whose instrument changed in the last ``update``."""
        changed: np.ndarray = self._changed.copy()
        return changed

    @property
    def mask(self) -> np.ndarray:
        """Bool mask of the occupied slots."""
        mask: np.ndarray = np.array([o is not None for o in self._owners], np.bool_)
        return mask

    def __repr__(self) -> str:
        return f"SlotMap(max_slots={self.max_slots})"
