"""Video edge cases: greyscale frames of odd size, and a missing ffmpeg backend."""

from __future__ import annotations

import re
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import imageio_ffmpeg
import numpy as np
import pytest

import sekai
from sekai.rendering import BaseRenderer, RecordFrames, save_video
from sekai.rendering.recorder import _even_rgb
from sekai.testing.envs import LineEnv

FFMPEG_MISSING = "{} needs imageio-ffmpeg: pip install 'sekai-core[render]'"


class GreyRenderer(BaseRenderer):
    """A 4 x 4 grey square."""

    def render(self, env: Any) -> np.ndarray:
        return np.full((4, 4, 3), 128, np.uint8)


def test_greyscale_frames_become_rgb_with_even_sides_by_repeating_the_edge() -> None:
    grey = np.arange(35, dtype=np.uint8).reshape(5, 7)
    image = _even_rgb(grey)
    assert image.shape == (6, 8, 3) and image.flags.c_contiguous
    expected = np.pad(grey, ((0, 1), (0, 1)), mode="edge")
    for channel in range(3):
        np.testing.assert_array_equal(image[..., channel], expected)


def test_greyscale_frames_of_odd_size_are_written_as_a_video(tmp_path: Path) -> None:
    frames = [np.full((5, 7), 40 * i, np.uint8) for i in range(4)]
    path = save_video(frames, tmp_path / "grey.mp4", fps=5)
    assert path == tmp_path / "grey.mp4" and path.stat().st_size > 0
    assert imageio_ffmpeg.count_frames_and_secs(str(path)) == (4, 0.8)


def _recorded_save(path: Path) -> Path:
    env = RecordFrames(LineEnv(), GreyRenderer())
    env.reset(seed=0)
    return env.save(path)


@pytest.mark.parametrize(
    ("caller", "write"),
    [
        ("save_video", lambda path: save_video([np.zeros((4, 4, 3), np.uint8)] * 2, path)),
        ("RecordFrames.save", _recorded_save),
    ],
    ids=["save_video", "RecordFrames.save"],
)
def test_a_video_without_imageio_ffmpeg_is_missing_dependency_and_writes_nothing(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    caller: str,
    write: Callable[[Path], Path],
) -> None:
    monkeypatch.setitem(sys.modules, "imageio_ffmpeg", None)
    path = tmp_path / "clip.mp4"
    with pytest.raises(
        sekai.MissingDependency, match=f"^{re.escape(FFMPEG_MISSING.format(caller))}$"
    ) as info:
        write(path)
    assert (info.value.package, info.value.extra) == ("imageio-ffmpeg", "render")
    assert isinstance(info.value, ImportError)
    assert not path.exists()
