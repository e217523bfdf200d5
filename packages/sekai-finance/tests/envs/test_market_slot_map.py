"""SlotMap: instruments keep their slots, newcomers take the lowest free ones."""

from __future__ import annotations

import pytest

from sekai.finance.universe import SlotMap


def test_newcomers_take_the_lowest_free_slots_in_order() -> None:
    slots = SlotMap(3)
    assert slots.update(["b", "a"]).tolist() == [0, 1]
    assert slots.assets == ["b", "a", None]
    assert slots.mask.tolist() == [True, True, False]


def test_instruments_keep_their_slot_while_present() -> None:
    slots = SlotMap(3)
    slots.update(["a", "b", "c"])
    assert slots.update(["c", "d"]).tolist() == [2, 0]  # d takes a's freed slot 0
    assert slots.assets == ["d", None, "c"]
    assert slots.changed.tolist() == [True, True, False]
    assert slots.slot_of("c") == 2 and slots.slot_of("a") is None


def test_update_refuses_duplicates_and_too_many_instruments() -> None:
    slots = SlotMap(2)
    with pytest.raises(ValueError, match="duplicate"):
        slots.update(["a", "a"])
    with pytest.raises(ValueError, match="only 2 slots"):
        slots.update(["a", "b", "c"])


def test_reset_empties_every_slot() -> None:
    slots = SlotMap(2)
    slots.update([7, 8])
    slots.reset()
    assert slots.assets == [None, None] and not slots.changed.any()


@pytest.mark.parametrize("bad", [0, -1, 2.0, True])
def test_max_slots_must_be_a_positive_int(bad: object) -> None:
    with pytest.raises(ValueError, match="max_slots"):
        SlotMap(bad)  # type: ignore[arg-type]
