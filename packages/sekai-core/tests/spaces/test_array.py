"""ArraySpace (the base of Box and MultiDiscrete): typed shape/dtype and pickling."""

from __future__ import annotations

import pickle
from typing import Any

import numpy as np
import pytest

from sekai.spaces import Box, Discrete, MultiBinary, MultiDiscrete
from sekai.spaces._array import ArraySpace

SPACES = [
    Box(np.array([0.0, -1.0]), np.array([1.0, np.inf]), dtype=np.float64),
    Box(0, 9, shape=(2, 3), dtype=np.int16),
    MultiDiscrete([[2, 3], [4, 5]], start=[[0, 1], [-1, 0]], dtype=np.int32),
]


@pytest.mark.parametrize("space", SPACES, ids=repr)
def test_array_space_state_leaves_out_derived_attributes(space: ArraySpace[Any]) -> None:
    assert space._derived and all(hasattr(space, key) for key in space._derived)
    state = space.__getstate__()
    assert not set(space._derived) & set(state)
    assert set(space._frozen) <= set(state)


@pytest.mark.parametrize("space", SPACES, ids=repr)
def test_array_space_unpickles_equal_read_only_and_usable(space: ArraySpace[Any]) -> None:
    space.seed(3)
    back = pickle.loads(pickle.dumps(space))
    assert back == space and repr(back) == repr(space)
    assert (back.shape, back.dtype) == (space.shape, space.dtype)
    for key in space._frozen:
        arr = getattr(back, key)
        assert not arr.flags.writeable and arr is not getattr(space, key)
        with pytest.raises(ValueError):
            arr[...] = 0
    np.testing.assert_array_equal(back.sample(), space.sample())  # generator state travels too
    assert back.contains(back.sample())


@pytest.mark.parametrize(
    ("space", "mask"),
    [
        (Box(-1.0, 1.0, (2,)), "0"),
        (Box(-1.0, 1.0, (2,)), ["0", "0"]),
        (Box(-1.0, 1.0, (2,)), [None, None]),
        (Box(-1.0, 1.0, (2,)), object()),
        (Discrete(3), np.array(["1", "1", "1"])),  # read as "all masked" before
        (MultiBinary(2), ["1", "0"]),
        (MultiDiscrete([2, 3]), np.full((2, 3), "1")),
        (MultiDiscrete([2, 3]), (np.ones(2), ["1", "1", "1"])),
    ],
    ids=[
        "box-str",
        "box-strs",
        "box-nones",
        "box-object",
        "discrete-strs",
        "multibinary-strs",
        "multidiscrete-strs",
        "multidiscrete-tuple-strs",
    ],
)
def test_masks_that_are_not_numbers_or_bools_are_refused(space: Any, mask: Any) -> None:
    with pytest.raises(TypeError, match=r"^A mask for .* must hold numbers or bools, got "):
        space.sample(mask=mask)


def test_a_generator_given_as_the_mask_is_explained() -> None:
    # sample(rng) reads like gymnasium-style seeding, and was silently "nothing masked"
    with pytest.raises(TypeError, match=r"^sample\(\) takes a mask, not a random generator"):
        Box(-1.0, 1.0, (2,)).sample(np.random.default_rng(0))
