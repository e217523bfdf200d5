"""zero_sample: the canonical zero member of every built-in space."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

from sekai.spaces import (
    Box,
    Dict,
    Discrete,
    MaskedBox,
    MultiBinary,
    MultiDiscrete,
    Sequence,
    Space,
    Tuple,
    zero_sample,
)


def test_zero_sample_of_each_space() -> None:
    np.testing.assert_array_equal(zero_sample(Box(1.0, 2.0, shape=(2,))), [1.0, 1.0])
    assert zero_sample(Discrete(3, start=-1)) == -1
    assert type(zero_sample(Discrete(3))) is np.int64
    md = zero_sample(MultiDiscrete([2, 3], start=[1, 2], dtype=np.int32))
    assert md.tolist() == [1, 2] and md.dtype == np.int32
    mb = zero_sample(MultiBinary(3))
    assert mb.tolist() == [0, 0, 0] and mb.dtype == np.int8
    assert zero_sample(Sequence(Discrete(3))) == ()
    assert zero_sample(Sequence(Discrete(3), stack=True)).shape == (0,)


def test_zero_sample_composites_are_members() -> None:
    space = Dict(
        a=Tuple([Discrete(2, start=4), Box(-2.0, -1.0, shape=(1,))]),
        m=MaskedBox(0.5, 1.0, shape=(2,), max_size=2),
        s=Sequence(MultiBinary(2)),
    )
    z = zero_sample(space)
    assert space.contains(z)
    assert z["m"]["mask"].tolist() == [0, 0]


def test_zero_sample_unknown_space_is_type_error(
    make_space_type: Callable[..., type[Space[Any]]],
) -> None:
    odd = make_space_type("Odd", (1,))
    with pytest.raises(TypeError, match="Odd"):
        zero_sample(odd())
