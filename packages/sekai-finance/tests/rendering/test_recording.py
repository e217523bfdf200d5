"""Recording finance episodes: RecordFrames + save() as GIF, MP4 and text."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from sekai.envs.finance.optimal_execution import OptimalExecutionEnv
from sekai.envs.finance.rendering import OptimalExecutionRenderer, TradingTextRenderer
from sekai.envs.finance.trading import TradingEnv
from sekai.rendering import RecordFrames


def _record(renderer: object) -> RecordFrames:
    env = RecordFrames(OptimalExecutionEnv(n_steps=8), renderer)  # type: ignore[arg-type]
    env.reset(seed=0)
    base: Any = env.unwrapped
    for action in base.almgren_chriss_actions():
        if env.step(action).done:
            break
    return env


def test_record_frames_saves_a_finance_episode_as_gif_with_every_frame(tmp_path: Path) -> None:
    from PIL import Image, ImageSequence

    env = _record(OptimalExecutionRenderer())
    assert len(env.frames) == 9  # the reset frame and 8 steps
    path = env.save(tmp_path / "execution.gif")
    with Image.open(path) as gif:
        frames = list(ImageSequence.Iterator(gif))
        assert len(frames) == len(env.frames)
        assert gif.size == (720, 450)
        assert gif.info["duration"] == 200  # render_fps 5


def test_record_frames_saves_a_finance_episode_as_mp4_with_every_frame(tmp_path: Path) -> None:
    import imageio_ffmpeg  # type: ignore[import-untyped]  # the render extra's ffmpeg

    env = _record(OptimalExecutionRenderer())
    path = env.save(tmp_path / "execution.mp4")
    frames, seconds = imageio_ffmpeg.count_frames_and_secs(str(path))
    assert frames == len(env.frames) == 9
    assert seconds == pytest.approx(9 / 5, abs=0.25)


def test_text_frames_of_an_episode_save_as_text(tmp_path: Path) -> None:
    env = RecordFrames(TradingEnv(episode_length=5, lookback=3), TradingTextRenderer())
    env.reset(seed=0)
    for _ in range(5):
        env.step(2)
    path = env.save(tmp_path / "trading.txt")
    assert path == tmp_path / "trading.txt"
    frames = path.read_text(encoding="utf-8").split("\f")
    assert len(frames) == 6
    assert frames[0].startswith("Trading-v0\n") and frames[-1].split()[0] == "5"
