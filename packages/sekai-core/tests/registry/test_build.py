"""The messages of make()'s helpers for arguments that do not fit a constructor."""

from __future__ import annotations

from typing import Any

import pytest

from sekai.registry._build import construct, keyword_error, unexpected_keywords


def fixed(size: int, depth: int = 1) -> None:
    """Named parameters only."""


def open_ended(size: int, *, shape: Any, **options: Any) -> None:
    """Required ones and ``**options``, which takes any other keyword."""


def _message(fn: Any, kwargs: dict[Any, Any], *args: Any) -> str:
    try:
        fn(*args, **kwargs)
    except TypeError as exc:
        return str(keyword_error("demo/E-v0", "its entry point E", fn, kwargs, exc, args=args))
    raise AssertionError(f"{fn.__name__} took {args} and {kwargs}")


def test_unexpected_keywords_are_none_for_a_callable_that_takes_any_keyword() -> None:
    assert unexpected_keywords(open_ended, ["colour", "size"]) is None
    assert unexpected_keywords(fixed, ["colour", "size", "sise"]) == ["colour", "sise"]
    assert unexpected_keywords(fixed, ["size", "depth"]) is None


@pytest.mark.parametrize(
    ("fn", "kwargs", "args", "expected"),
    [
        (
            fixed,
            {"size": 1, "sise": 2},
            (),
            "does not take the keyword argument 'sise' (given: size, sise)",
        ),
        (
            fixed,
            {"colour": 1, "sise": 2},
            (),
            "does not take the keyword arguments 'colour', 'sise' (given: colour, sise)",
        ),
        (fixed, {"depth": 2}, (), "is missing the required argument 'size' (given: depth)"),
        (fixed, {}, (), "is missing the required argument 'size' (given: none)"),
        (
            open_ended,
            {"colour": "red"},
            (),
            "is missing the required arguments 'size', 'shape' (given: colour)",
        ),
        # The positional arguments count: a wrapper's env, say.
        (open_ended, {"colour": "red"}, (3,), "is missing the required argument 'shape'"),
        # A key that is no str: nothing is refused or missing by name.
        (open_ended, {1: 2, "shape": 3}, (0,), "cannot be called with these arguments"),
    ],
    ids=[
        "unexpected",
        "unexpected-several",
        "missing",
        "missing-none-given",
        "missing-with-kwargs",
        "missing-after-args",
        "no-str-key",
    ],
)
def test_keyword_error_says_what_is_refused_or_missing(
    fn: Any, kwargs: dict[Any, Any], args: tuple[Any, ...], expected: str
) -> None:
    message = _message(fn, kwargs, *args)
    assert message.startswith(f"demo/E-v0: its entry point E {expected}")


def test_keyword_error_ends_with_the_calls_own_error_and_the_hint_on_refused_keywords() -> None:
    def hint(names: list[str]) -> str:
        return f". hint about {names}"

    try:
        fixed(size=1, sise=2)  # type: ignore[call-arg]
    except TypeError as exc:
        message = str(
            keyword_error("demo/E-v0", "E", fixed, {"size": 1, "sise": 2}, exc, hint=hint)
        )
    assert message == (
        "demo/E-v0: E does not take the keyword argument 'sise' (given: size, sise): fixed() "
        "got an unexpected keyword argument 'sise'. hint about ['sise']"
    )
    try:
        fixed()  # type: ignore[call-arg]
    except TypeError as exc:
        message = str(keyword_error("demo/E-v0", "E", fixed, {}, exc, hint=hint))
    assert message == (
        "demo/E-v0: E is missing the required argument 'size' (given: none): fixed() missing 1 "
        "required positional argument: 'size'"
    )


def test_construct_names_what_a_wrapper_was_not_given_after_its_env() -> None:
    def wrapper(env: Any, limit: int) -> Any:
        return env

    with pytest.raises(TypeError) as caught:
        construct("demo/E-v0", "its wrapper 'W'", wrapper, {}, "the env")
    assert str(caught.value).startswith(
        "demo/E-v0: its wrapper 'W' is missing the required argument 'limit' (given: none): "
    )
