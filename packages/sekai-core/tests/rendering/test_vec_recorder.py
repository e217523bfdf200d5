"""VecRecordFrames: one sub-env of an in-process vector env, recorded step by step."""

from __future__ import annotations

import asyncio
import re
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import sekai
from sekai.rendering import BaseRenderer, VecRecordFrames, target_env
from sekai.testing.envs import LineEnv, LineVecEnv


class PositionRenderer(BaseRenderer):
    """A 1 x size "image" whose lit pixel is the point's position (easy to read back)."""

    def __init__(self) -> None:
        self.closed = False

    def render(self, env: Any) -> np.ndarray:
        line = target_env(env, LineEnv)
        image = np.zeros((1, line.size, 3), np.uint8)
        image[0, line.position] = 255
        return image

    def close(self) -> None:
        self.closed = True


def _positions(frames: list[Any]) -> list[int]:
    return [int(np.flatnonzero(frame[0, :, 0])[0]) for frame in frames]


def _sync(num_envs: int = 2, **kwargs: Any) -> sekai.SyncVecEnv:
    return sekai.SyncVecEnv([lambda: sekai.TimeLimit(LineEnv(size=4), 10)] * num_envs, **kwargs)


def test_the_chosen_sub_env_is_rendered_after_reset_and_each_step() -> None:
    vec = VecRecordFrames(_sync(), PositionRenderer(), index=1)
    vec.reset(seed=0, options=[{"start": 0}, {"start": 1}])
    vec.step(np.array([1, 1]))
    vec.step(np.array([0, 0]))
    assert _positions(vec.frames) == [1, 2, 1]


def test_an_autoreset_starts_the_next_episode_in_the_same_list() -> None:
    vec = VecRecordFrames(_sync(1), PositionRenderer())
    vec.reset(seed=0, options={"start": 2})
    result = vec.step(np.array([1]))  # reaches the end (position 3) and is reset at once
    assert result.terminated[0]
    assert len(vec.frames) == 2
    assert _positions(vec.frames)[1] == int(result.observations[0][0])


def test_async_vec_envs_are_recorded_too() -> None:
    vec = VecRecordFrames(
        sekai.AsyncVecEnv([lambda: LineEnv(size=4)] * 2), PositionRenderer(), index=0
    )

    async def run() -> None:
        await vec.async_reset(seed=0, options={"start": 0})
        await vec.async_step(np.array([1, 1]))

    asyncio.run(run())
    assert _positions(vec.frames) == [0, 1]
    vec.close()


def test_enabled_max_frames_clear_and_close() -> None:
    renderer = PositionRenderer()
    vec = VecRecordFrames(_sync(), renderer, enabled=False, max_frames=2)
    vec.reset(seed=0)
    assert vec.frames == []
    vec.enabled = True
    for _ in range(3):
        vec.step(np.array([0, 0]))
    assert len(vec.frames) == 2
    vec.clear()
    assert vec.frames == []
    vec.close()
    assert renderer.closed and vec.closed


def test_save_writes_a_gif_at_the_envs_render_fps(tmp_path: Path) -> None:
    from PIL import Image, ImageSequence

    vec = VecRecordFrames(_sync(), PositionRenderer())
    vec.reset(seed=0, options={"start": 0})
    vec.step(np.array([1, 1]))
    path = vec.save(tmp_path / "line.gif")
    with Image.open(path) as gif:
        assert len(list(ImageSequence.Iterator(gif))) == 2
        assert gif.info["duration"] == 100  # LineEnv's render_fps is 10


def test_save_names_itself_when_it_cannot_write_the_suffix(tmp_path: Path) -> None:
    vec = VecRecordFrames(_sync(), PositionRenderer())
    vec.reset(seed=0, options={"start": 0})
    with pytest.raises(ValueError, match=r"^VecRecordFrames\.save\(\) cannot write '.*line\.png'"):
        vec.save(tmp_path / "line.png")
    assert list(tmp_path.iterdir()) == []


def test_a_numpy_int_index_is_an_index() -> None:
    vec = VecRecordFrames(_sync(), PositionRenderer(), index=np.int64(1))
    assert type(vec.index) is int and vec.index == 1


def test_closing_again_is_a_no_op_for_the_renderer_too() -> None:
    class ClosesOnce(PositionRenderer):
        closes = 0

        def close(self) -> None:
            if self.closes:
                raise RuntimeError("renderer already closed")
            self.closes += 1

    renderer = ClosesOnce()
    vec = VecRecordFrames(_sync(), renderer)
    vec.close()
    vec.close()
    assert renderer.closes == 1 and vec.closed


def test_the_vector_env_is_closed_even_when_the_renderer_fails_to_close() -> None:
    class Failing(PositionRenderer):
        def close(self) -> None:
            raise RuntimeError("renderer close failed")

    vec = VecRecordFrames(_sync(), Failing())
    with pytest.raises(RuntimeError, match="renderer close failed"):
        vec.close()
    assert vec.unwrapped.closed


@pytest.mark.parametrize(
    ("index", "message"),
    [
        (-1, "VecRecordFrames: index must be >= 0, got -1."),
        (2, "VecRecordFrames: index must be < 2 (the number of sub-envs), got 2."),
    ],
)
def test_index_outside_the_sub_envs_raises_value_error(index: Any, message: str) -> None:
    with pytest.raises(ValueError, match=f"^{re.escape(message)}$"):
        VecRecordFrames(_sync(), PositionRenderer(), index=index)


@pytest.mark.parametrize("index", [1.0, "0", True, np.bool_(True)])
def test_an_index_that_is_not_an_int_raises_type_error(index: Any) -> None:
    with pytest.raises(TypeError, match=r"^VecRecordFrames: index must be an int, got \w+\.$"):
        VecRecordFrames(_sync(), PositionRenderer(), index=index)


@pytest.mark.parametrize(
    ("kwargs", "error", "message"),
    [
        ({"enabled": "no"}, TypeError, "VecRecordFrames: enabled must be a bool, got str."),
        ({"max_frames": -2}, ValueError, "VecRecordFrames: max_frames must be >= 0, got -2."),
        ({"max_frames": 2.0}, TypeError, "VecRecordFrames: max_frames must be an int, got float."),
    ],
)
def test_bad_recording_options_name_vec_record_frames(
    kwargs: dict[str, Any], error: type[Exception], message: str
) -> None:
    with pytest.raises(error, match=f"^{re.escape(message)}$"):
        VecRecordFrames(_sync(), PositionRenderer(), **kwargs)
    # the attributes, set after construction, are checked the same way
    ((name, value),) = kwargs.items()
    vec = VecRecordFrames(_sync(), PositionRenderer(), max_frames=3)
    with pytest.raises(error, match=f"^{re.escape(message)}$"):
        setattr(vec, name, value)
    assert vec.enabled is True and vec.max_frames == 3
    vec.close()


def test_a_native_env_raises_type_error_suggesting_sync() -> None:
    with pytest.raises(TypeError, match="LineVecEnv has none in this process") as info:
        VecRecordFrames(LineVecEnv(2), PositionRenderer())
    assert "vectorization_mode='sync'" in str(info.value)
    assert "RecordFrames inside the sub-env factory" in str(info.value)


def test_wrapped_vec_envs_are_accepted() -> None:
    vec = VecRecordFrames(sekai.VecRecordEpisodeStatistics(_sync()), PositionRenderer())
    vec.reset(seed=0)
    assert len(vec.frames) == 1
