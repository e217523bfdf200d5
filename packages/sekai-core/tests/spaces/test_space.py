"""Space base class: seeding rules, seed validation, lazy generator, custom subclasses."""

from __future__ import annotations

import subprocess
import sys
from typing import Any

import numpy as np
import pytest

import sekai
from sekai.spaces import Box, Dict, Discrete, MultiBinary, MultiDiscrete, Sequence, Space, Tuple
from sekai.utils._equal import structurally_equal


class Coin(Space[int]):
    """A custom space with no __eq__: compares by identity."""

    @property
    def is_flattenable(self) -> bool:
        return False

    def sample(self, mask: Any = None) -> int:
        return int(self.rng.integers(2))

    def contains(self, x: Any) -> bool:
        return x in (0, 1)


ALL_SPACES = [
    lambda: Box(-1.0, 1.0, shape=(2,)),
    lambda: Discrete(3),
    lambda: MultiDiscrete([2, 3]),
    lambda: MultiBinary(3),
    lambda: Dict(a=Discrete(2)),
    lambda: Tuple([Discrete(2)]),
    lambda: Sequence(Discrete(2)),
    lambda: sekai.MaskedBox(0.0, 1.0, shape=(2,), max_size=2),
    Coin,
]


def test_space_is_exported_at_top_level() -> None:
    assert sekai.Space is Space
    assert sekai.spaces.Space is Space


def test_space_utils_is_an_importable_module_of_the_utilities() -> None:
    # gymnasium users write ``import gymnasium.spaces.utils``; the name was only an attribute.
    import sekai.space_utils as su
    from sekai import space_utils

    assert su is space_utils is sekai.space_utils is sys.modules["sekai.space_utils"]
    assert su.__all__ == sekai.spaces.utils.__all__
    assert all(getattr(su, name) is getattr(sekai.spaces, name) for name in su.__all__)


def test_import_sekai_leaves_space_utils_unimported() -> None:
    code = (
        "import sys, sekai\n"
        "print([m for m in sys.modules if m.startswith(('sekai.space_utils', 'sekai.spaces'))])\n"
        "import sekai.space_utils as su\n"
        "print(su.flatdim(sekai.Discrete(3)))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["[]", "3"]


def test_space_is_abstract() -> None:
    with pytest.raises(TypeError):
        Space()  # type: ignore[abstract]


def test_custom_space_defaults() -> None:
    coin = Coin()
    assert coin.shape is None and coin.dtype is None
    assert repr(coin) == "Coin()"
    assert coin == coin and coin != Coin()
    assert isinstance(hash(coin), int)
    assert 1 in coin and 2 not in coin


def test_custom_space_constructor_arguments() -> None:
    coin = Coin(shape=(np.int64(2),), dtype="int8", seed=3)
    other = Coin(seed=3)
    assert coin.shape == (2,) and coin.dtype == np.int8
    assert [coin.sample() for _ in range(20)] == [other.sample() for _ in range(20)]


def test_base_space_has_no_json_support() -> None:
    with pytest.raises(NotImplementedError, match="Coin does not support JSON serialization"):
        Coin().to_jsonable()
    with pytest.raises(NotImplementedError, match="Coin does not support JSON serialization"):
        Coin.from_jsonable({"type": "Coin"})


@pytest.mark.parametrize("make", ALL_SPACES)
def test_seed_returns_int_seed_and_reproduces_samples(make: Any) -> None:
    a, b = make(), make()
    assert a.seed(123) == 123
    assert b.seed(np.int64(123)) == 123
    for _ in range(5):
        assert structurally_equal(a.sample(), b.sample())


COMPOSITES = {
    "dict": lambda: Dict(a=Box(0.0, 1.0, shape=(2,)), b=Discrete(1000)),
    "tuple": lambda: Tuple([Discrete(1000), Box(0.0, 1.0, shape=(2,))]),
    "sequence": lambda: Sequence(Discrete(1000), max_length=5),
    "nested": lambda: Dict(t=Tuple([Discrete(1000), Sequence(Box(0.0, 1.0, shape=(2,)))])),
}


@pytest.mark.parametrize("make", COMPOSITES.values(), ids=COMPOSITES.keys())
def test_reseeding_a_composite_with_an_int_reseeds_children_that_have_generators(
    make: Any,
) -> None:
    space = make()
    space.seed(0)
    first = [space.sample() for _ in range(3)]
    # The children now have generators of their own, advanced by the draws: seed(0) must
    # seed them again, not only the children that were never seeded.
    space.seed(0)
    assert all(structurally_equal(space.sample(), want) for want in first)
    seeded_children = make()
    if isinstance(seeded_children, Dict):
        children = list(seeded_children.values())
    elif isinstance(seeded_children, Tuple):
        children = list(seeded_children.spaces)
    else:
        children = [seeded_children.feature_space]
    for child in children:  # seeded on their own before the composite is
        child.seed(99)
    seeded_children.seed(0)
    assert all(structurally_equal(seeded_children.sample(), want) for want in first)


@pytest.mark.parametrize("make", ALL_SPACES)
def test_seed_with_generator_returns_minus_one(make: Any) -> None:
    assert make().seed(np.random.default_rng(0)) == -1


@pytest.mark.parametrize("make", ALL_SPACES)
@pytest.mark.parametrize("bad", [1.5, 2.0, np.float64(2.0), True, np.bool_(True), "3"])
def test_seed_rejects_non_integers_with_type_error(make: Any, bad: object) -> None:
    with pytest.raises(TypeError):
        make().seed(bad)


@pytest.mark.parametrize("make", [m for m in ALL_SPACES if not isinstance(m(), Tuple)])
def test_seed_rejects_lists_except_for_tuple(make: Any) -> None:
    with pytest.raises(TypeError):
        make().seed([1])


@pytest.mark.parametrize("make", ALL_SPACES)
def test_seed_rejects_negative_with_value_error(make: Any) -> None:
    with pytest.raises(ValueError, match="-1"):
        make().seed(-1)


@pytest.mark.parametrize("bad", [1.5, True, "x", -3])
def test_constructor_seed_is_validated(bad: object) -> None:
    with pytest.raises((TypeError, ValueError)):
        Discrete(3, seed=bad)  # type: ignore[arg-type]


def test_rng_is_created_lazily_from_entropy() -> None:
    d = Discrete(3)
    assert d._rng is None
    rng = d.rng
    assert isinstance(rng, np.random.Generator)
    assert d.rng is rng
    assert isinstance(d._rng_seed, int) and d._rng_seed >= 0


def test_seed_none_keeps_existing_stream() -> None:
    a, b = Discrete(100, seed=5), Discrete(100, seed=5)
    a.sample()
    b.sample()
    assert a.seed(None) == 5
    assert int(a.sample()) == int(b.sample())


def test_seed_none_on_fresh_space_returns_entropy() -> None:
    d = Discrete(3)
    used = d.seed()
    assert isinstance(used, int) and used > 0
    assert d.seed() == used


def test_constructor_seed_seeds_immediately() -> None:
    a = Box(0.0, 1.0, shape=(3,), seed=42)
    b = Box(0.0, 1.0, shape=(3,))
    b.seed(42)
    np.testing.assert_array_equal(a.sample(), b.sample())


def test_rng_setter_records_minus_one() -> None:
    d = Discrete(10)
    d.rng = np.random.default_rng(0)
    assert d.seed() == -1
    with pytest.raises(TypeError):
        d.rng = 3  # type: ignore[assignment]


def test_space_generator_is_independent_of_env_generator() -> None:
    d = Discrete(10, seed=0)
    np.random.default_rng(0).integers(10)
    assert [int(d.sample()) for _ in range(5)] == [8, 6, 5, 2, 3]


class Grid(Coin):
    """A custom space that passes its shape to Space.__init__."""

    def __init__(self, shape: Any) -> None:
        super().__init__(shape=shape, dtype=np.int8)


@pytest.mark.parametrize(
    ("shape", "expected"),
    [(3, (3,)), ((2, 3), (2, 3)), ([np.int64(2), 0], (2, 0)), ((), ()), (None, None)],
)
def test_custom_space_shape_follows_box_rules(shape: Any, expected: Any) -> None:
    grid = Grid(shape)
    assert grid.shape == expected
    assert expected is None or all(type(s) is int for s in grid.shape)


@pytest.mark.parametrize(
    ("shape", "error", "message"),
    [
        ((2.5,), TypeError, r"^Grid shape entries must be ints, got \(2\.5,\)\.$"),  # not cut to 2
        ((-3,), ValueError, r"^Grid shape entries must be >= 0, got \(-3,\)\.$"),
        ("ab", TypeError, r"^Grid shape entries must be ints, got 'ab'\.$"),
        (True, TypeError, r"^Grid shape must be a tuple of ints or an int, got True\.$"),
        (2.0, TypeError, r"^Grid shape must be a tuple of ints or an int, got 2\.0\.$"),
    ],
)
def test_custom_space_bad_shape_is_refused_like_a_box_shape(
    shape: Any, error: type[Exception], message: str
) -> None:
    with pytest.raises(error, match=message):
        Grid(shape)
