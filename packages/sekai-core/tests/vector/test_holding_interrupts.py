"""Ctrl-C held across sekai's own bookkeeping (``holding_interrupts``) and let through in
the waits inside it (``interruptible``): real SIGINTs sent to this process."""

from __future__ import annotations

import os
import signal
import threading
from collections.abc import Iterator
from typing import Any

import pytest

from sekai.vector._interrupts import holding_interrupts, interruptible


@pytest.fixture(autouse=True)
def sigint() -> Iterator[None]:
    """Python's own SIGINT handler, as in a terminal (the tests may run with SIGINT ignored)."""
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    yield
    signal.signal(signal.SIGINT, previous)


def _ctrl_c() -> None:
    os.kill(os.getpid(), signal.SIGINT)


def test_a_ctrl_c_in_the_block_is_raised_once_the_block_has_ended() -> None:
    done: list[str] = []
    with pytest.raises(KeyboardInterrupt), holding_interrupts():
        _ctrl_c()
        done.append("after the signal")
        done.append("end of the block")
    assert done == ["after the signal", "end of the block"]
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler
    with holding_interrupts():  # nothing is left held for the next block
        done.append("quiet")


def test_a_block_with_no_ctrl_c_raises_nothing_and_nested_blocks_raise_at_the_outermost() -> None:
    done: list[str] = []
    with holding_interrupts():
        done.append("quiet")
    with pytest.raises(KeyboardInterrupt), holding_interrupts():
        with holding_interrupts():
            _ctrl_c()
        done.append("after the inner block")
    assert done == ["quiet", "after the inner block"]


def test_interruptible_raises_a_held_ctrl_c_at_once_and_one_that_comes_in_it() -> None:
    done: list[str] = []
    with pytest.raises(KeyboardInterrupt), holding_interrupts():
        _ctrl_c()
        with interruptible():
            done.append("not reached")
    with pytest.raises(KeyboardInterrupt), holding_interrupts(), interruptible():
        _ctrl_c()
        done.append("not reached either")
    assert done == []


def test_a_block_held_inside_an_interruptible_wait_is_held_and_raised_when_it_ends() -> None:
    done: list[str] = []
    with pytest.raises(KeyboardInterrupt), holding_interrupts(), interruptible():
        with holding_interrupts():
            _ctrl_c()
            done.append("the inner block ran to its end")
        done.append("not reached")
    assert done == ["the inner block ran to its end"]


def test_the_blocks_own_error_stays_as_the_context_of_the_ctrl_c() -> None:
    with pytest.raises(KeyboardInterrupt) as caught, holding_interrupts():
        _ctrl_c()
        raise ValueError("the block failed")
    assert isinstance(caught.value.__context__, ValueError)


def test_outside_a_held_block_interruptible_changes_nothing() -> None:
    done: list[str] = []
    with pytest.raises(KeyboardInterrupt), interruptible():
        _ctrl_c()
        done.append("not reached")
    assert done == []


def test_a_sigint_handler_of_the_users_is_left_alone() -> None:
    calls: list[int] = []

    def handler(signum: int, frame: Any) -> None:
        calls.append(signum)

    signal.signal(signal.SIGINT, handler)
    with holding_interrupts():
        assert signal.getsignal(signal.SIGINT) is handler
        _ctrl_c()
        assert calls == [signal.SIGINT]  # run at once, not held


def test_a_block_in_another_thread_holds_nothing() -> None:
    seen: list[Any] = []

    def run() -> None:
        with holding_interrupts():
            seen.append(signal.getsignal(signal.SIGINT))

    thread = threading.Thread(target=run)
    thread.start()
    thread.join()
    assert seen == [signal.default_int_handler]
