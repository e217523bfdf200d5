import re

import numpy as np
import pytest

import sekai
from sekai.core._rng import check_seed, make_seed_sequence, np_random


def test_make_seed_sequence_matches_the_reference_values():
    assert sekai.make_seed_sequence(0, 3) == [3757552657, 673228719, 3241444873]


@pytest.mark.parametrize(
    ("n", "error", "message"),
    [
        (-1, ValueError, "n must be >= 0, got -1."),
        (2.0, TypeError, "n must be an int, got float."),
        (True, TypeError, "n must be an int, got bool."),
    ],
)
def test_make_seed_sequence_checks_n(n, error, message):
    with pytest.raises(error, match=f"^{re.escape(message)}$"):
        make_seed_sequence(0, n)


@pytest.mark.parametrize(
    ("seed", "message"),
    [
        (None, "base_seed must be a non-negative int, got None."),
        (1.0, "base_seed must be a non-negative int, got float 1.0."),
        (np.random.default_rng(0), "base_seed must be a non-negative int, got a numpy Generator."),
    ],
)
def test_make_seed_sequence_names_what_base_seed_accepts(seed, message):
    with pytest.raises(TypeError, match=f"^{re.escape(message)}$"):
        make_seed_sequence(seed, 2)


def test_make_seed_sequence_children_do_not_depend_on_n():
    assert make_seed_sequence(5, 2) == make_seed_sequence(5, 4)[:2]
    assert all(type(s) is int for s in make_seed_sequence(5, 4))


@pytest.mark.parametrize("bad", [None, np.random.default_rng(0), 1.0])
def test_make_seed_sequence_requires_an_int_base_seed(bad):
    with pytest.raises(TypeError):
        make_seed_sequence(bad, 2)


def test_np_random_with_an_int_is_pcg64_default_rng():
    generator, seed = sekai.np_random(3)
    assert seed == 3
    assert generator.random() == np.random.default_rng(3).random()


def test_np_random_with_a_generator_returns_it_and_minus_one():
    g = np.random.default_rng(0)
    assert np_random(g) == (g, -1)


def test_np_random_without_seed_draws_128_bit_entropy():
    generator, seed = np_random(None)
    assert isinstance(generator, np.random.Generator)
    assert 0 <= seed < 2**128


@pytest.mark.parametrize("seed", [1.5, True, np.float64(2.0), "1", [1]])
def test_check_seed_rejects_non_integers_with_type_error(seed):
    with pytest.raises(TypeError, match="must be a non-negative int"):
        check_seed(seed)


def test_check_seed_rejects_negative_values_naming_them():
    with pytest.raises(ValueError, match=re.escape("seed must be a non-negative integer, got -5.")):
        check_seed(-5)


def test_check_seed_can_refuse_generators():
    with pytest.raises(TypeError, match="got a numpy Generator"):
        check_seed(np.random.default_rng(), allow_generator=False)


def test_check_seed_accepts_numpy_integers_and_none():
    check_seed(np.uint32(4))
    check_seed(None)
