import asyncio

import pytest

import sekai
from sekai.wrappers.order_enforcing import OrderEnforcing


class Simple(sekai.Env):
    def reset(self, *, seed=None, options=None):
        return sekai.ResetResult(0, {})

    def step(self, action):
        return sekai.StepResult(1, 1.0, False, False, {})


def test_step_before_reset_raises_reset_required_with_the_default_message():
    env = OrderEnforcing(Simple())
    assert env.has_reset is False
    with pytest.raises(sekai.ResetRequired) as info:
        env.step(0)
    assert str(info.value) == (
        "reset() must be called before the first call to step(). See Env.reset() for usage."
    )


def test_step_after_reset_passes_through():
    env = OrderEnforcing(Simple())
    env.reset()
    assert env.has_reset is True
    assert env.step(0).observation == 1


def test_async_step_before_async_reset_raises_and_after_it_passes():
    env = OrderEnforcing(Simple())
    with pytest.raises(sekai.ResetRequired):
        asyncio.run(env.async_step(0))

    async def go():
        await env.async_reset()
        return await env.async_step(0)

    assert asyncio.run(go()).observation == 1


def test_order_enforcing_str():
    assert str(OrderEnforcing(Simple())) == "<OrderEnforcing(<Simple>)>"


def test_gymnasiums_render_flag_is_taken():
    """The migration page says OrderEnforcing takes gymnasium's arguments."""
    env = OrderEnforcing(Simple(), disable_render_order_enforcing=True)
    assert env.disable_render_order_enforcing is True
    with pytest.raises(sekai.ResetRequired):
        env.step(0)
