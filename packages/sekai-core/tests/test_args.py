"""The shared argument checks of ``sekai._args``."""

from __future__ import annotations

from collections.abc import Iterator, Set as AbstractSet
from typing import Any

import pytest

from sekai._args import check_ordered


class _Bag(AbstractSet[int]):
    """A Set that is not a builtin set."""

    def __contains__(self, x: object) -> bool:
        return x in (1, 2, 3)

    def __iter__(self) -> Iterator[int]:
        return iter((3, 1, 2))

    def __len__(self) -> int:
        return 3


@pytest.mark.parametrize(
    "value, described",
    [
        ({1, 2}, "set of 2 items"),
        (frozenset({1}), "frozenset of 1 item"),
        (_Bag(), f"{__name__}._Bag of 3 items"),
    ],
)
def test_check_ordered_refuses_unordered_collections(value: Any, described: str) -> None:
    with pytest.raises(
        TypeError,
        match=rf"^Owner: things must be given in order, got a {described}, which has no "
        r"order; pass a list or tuple in the order wanted\.$",
    ):
        check_ordered("Owner", "things", value)
    with pytest.raises(TypeError, match=r"^things must be given in order"):
        check_ordered(None, "things", value)


@pytest.mark.parametrize(
    "value",
    [[1, 2], (1, 2), {1: 0}.keys(), {1: 0}.items(), {1: 0}.values(), iter([1]), "ab", 5, None],
)
def test_check_ordered_passes_ordered_values_and_others(value: Any) -> None:
    check_ordered("Owner", "things", value)
