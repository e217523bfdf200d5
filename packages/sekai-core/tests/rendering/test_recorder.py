"""RecordFrames and the GIF / video / text writers, with every documented validation."""

from __future__ import annotations

import asyncio
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import sekai
from sekai.rendering import (
    BaseRenderer,
    Canvas,
    RecordFrames,
    save_gif,
    save_text,
    save_video,
    target_env,
)
from sekai.rendering.recorder import VIDEO_CODECS
from sekai.testing.envs import LineEnv


class LineRenderer(BaseRenderer):
    """Draws LineEnv's point as a dark square on a 16 x 40 strip."""

    def __init__(self) -> None:
        self.closed = False

    def render(self, env: Any) -> np.ndarray:
        line = target_env(env, LineEnv)
        canvas = Canvas(40, 16)
        x = 4 + 8 * (line.position or 0)
        canvas.rect(x, 4, x + 8, 12, (20, 20, 20))
        return canvas.to_array()

    def close(self) -> None:
        self.closed = True


class TextRenderer(BaseRenderer):
    def render(self, env: Any) -> str:
        return f"position={target_env(env, LineEnv).position}"


def _recorded(renderer: Any = None, steps: int = 3, **kwargs: Any) -> RecordFrames:
    env = RecordFrames(LineEnv(), renderer or LineRenderer(), **kwargs)
    env.reset(seed=0, options={"start": 0})
    for _ in range(steps):
        env.step(1)
    return env


def _video_frames(path: Path) -> tuple[int, tuple[int, ...]]:
    """Frame count and frame shape of a video, read in a subprocess (imageio's readers leak
    file handles, which this suite's warnings-as-errors would report)."""
    code = (
        "import sys, imageio, imageio_ffmpeg\n"
        "n = imageio_ffmpeg.count_frames_and_secs(sys.argv[1])[0]\n"
        "hint = 'mp4' if sys.argv[1].lower().endswith('.m4v') else None\n"
        "r = imageio.get_reader(sys.argv[1], format=hint); print(n, r.get_data(0).shape)\n"
        "r.close()\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code, str(path)], capture_output=True, text=True, check=True
    )
    count, shape = out.stdout.split(" ", 1)
    return int(count), tuple(int(v) for v in shape.strip("()\n").split(","))


def _gif_frames(path: Path) -> tuple[int, int]:
    from PIL import Image, ImageSequence

    with Image.open(path) as gif:
        return len(list(ImageSequence.Iterator(gif))), gif.info["duration"]


def test_a_frame_is_recorded_after_reset_and_every_step() -> None:
    env = _recorded()
    assert len(env.frames) == 4
    assert all(frame.shape == (16, 40, 3) and frame.dtype == np.uint8 for frame in env.frames)
    assert not np.array_equal(env.frames[0], env.frames[1])


def test_async_reset_and_step_record_too() -> None:
    env = RecordFrames(LineEnv(), LineRenderer())

    async def episode() -> None:
        await env.async_reset(seed=0, options={"start": 0})
        await env.async_step(1)

    asyncio.run(episode())
    assert len(env.frames) == 2


def test_disabled_recording_and_max_frames() -> None:
    env = _recorded(enabled=False)
    assert env.frames == []
    env.enabled = True
    env.step(0)
    assert len(env.frames) == 1
    assert len(_recorded(max_frames=2).frames) == 2
    assert _recorded(max_frames=np.int64(2)).max_frames == 2  # a NumPy int, as elsewhere


def test_clear_forgets_frames_and_close_closes_renderer_and_env() -> None:
    renderer = LineRenderer()
    env = _recorded(renderer)
    env.clear()
    assert env.frames == []
    env.close()
    assert renderer.closed


class ClosesOnce(LineRenderer):
    """Refuses to be closed twice (a video writer, a window)."""

    def __init__(self) -> None:
        super().__init__()
        self.closes = 0

    def close(self) -> None:
        if self.closes:
            raise RuntimeError("renderer already closed")
        self.closes += 1


def test_closing_again_leaves_the_renderer_alone() -> None:
    renderer = ClosesOnce()
    env = _recorded(renderer)
    env.close()
    env.close()
    assert renderer.closes == 1


def test_the_env_is_closed_even_when_the_renderer_fails_to_close() -> None:
    class Failing(LineRenderer):
        def close(self) -> None:
            raise RuntimeError("renderer close failed")

    closed = []
    inner = LineEnv()
    inner.close = lambda: closed.append(True)  # type: ignore[method-assign]
    env = RecordFrames(inner, Failing())
    with pytest.raises(RuntimeError, match="renderer close failed"):
        env.close()
    assert closed == [True]


@pytest.mark.parametrize(
    ("kwargs", "error", "message"),
    [
        ({"max_frames": -1}, ValueError, "RecordFrames: max_frames must be >= 0, got -1."),
        ({"max_frames": 1.5}, TypeError, "RecordFrames: max_frames must be an int, got float."),
        ({"max_frames": True}, TypeError, "RecordFrames: max_frames must be an int, got bool."),
        ({"enabled": "no"}, TypeError, "RecordFrames: enabled must be a bool, got str."),
        ({"enabled": 1}, TypeError, "RecordFrames: enabled must be a bool, got int."),
    ],
)
def test_bad_recording_options_raise_type_or_value_errors_naming_the_class(
    kwargs: dict[str, Any], error: type[Exception], message: str
) -> None:
    # Before: enabled="no" was accepted and recorded ("no" is true).
    with pytest.raises(error, match=f"^{re.escape(message)}$"):
        RecordFrames(LineEnv(), LineRenderer(), **kwargs)
    assert RecordFrames(LineEnv(), LineRenderer(), enabled=np.bool_(False)).enabled is False
    # the attributes, which rendering.md tells users to set, are checked the same way
    ((name, value),) = kwargs.items()
    env = RecordFrames(LineEnv(), LineRenderer(), max_frames=3)
    with pytest.raises(error, match=f"^{re.escape(message)}$"):
        setattr(env, name, value)
    assert env.enabled is True and env.max_frames == 3  # left as they were
    env.reset(seed=0)
    assert len(env.frames) == 1


def test_set_recording_options_take_effect_as_their_types() -> None:
    env = RecordFrames(LineEnv(), LineRenderer())
    env.enabled = np.bool_(False)
    env.reset(seed=0)
    assert env.enabled is False and env.frames == []
    env.enabled, env.max_frames = True, np.int64(1)
    env.step(0)
    env.step(0)
    assert type(env.max_frames) is int and len(env.frames) == 1
    env.max_frames = None
    env.step(0)
    assert len(env.frames) == 2


def test_a_renderer_needs_render_and_close() -> None:
    with pytest.raises(TypeError, match="renderer must have render"):
        RecordFrames(LineEnv(), object())  # type: ignore[arg-type]
    with pytest.raises(TypeError, match=r"expected a sekai\.Env"):
        RecordFrames(object(), LineRenderer())  # type: ignore[arg-type]
    with pytest.raises(
        TypeError,
        match=r"^renderer must be a renderer object, got the class LineRenderer: pass "
        r"LineRenderer\(\.\.\.\)\.$",
    ):
        RecordFrames(LineEnv(), LineRenderer)  # type: ignore[arg-type]


def test_save_needs_a_suffix_to_pick_the_format(tmp_path: Path) -> None:
    env = _recorded()
    with pytest.raises(ValueError, match=r"has none: use \.gif, \.txt or a video suffix"):
        env.save(tmp_path / "clip")
    assert not (tmp_path / "clip").exists()


def test_save_gif_uses_the_envs_render_fps(tmp_path: Path) -> None:
    env = _recorded()
    path = env.save(tmp_path / "line.GIF")
    assert path == tmp_path / "line.GIF"
    assert _gif_frames(path) == (4, 100)  # LineEnv renders at 10 fps
    # 25 ms per frame; GIF stores hundredths of a second, so it reads back as 20.
    assert _gif_frames(env.save(tmp_path / "fast.gif", fps=40)) == (4, 20)


def test_save_defaults_to_30_fps_without_render_fps(tmp_path: Path) -> None:
    class NoFps(LineEnv):
        metadata: dict[str, Any] = {}  # noqa: RUF012

    env = RecordFrames(NoFps(), LineRenderer())
    env.reset(seed=0, options={"start": 0})
    env.step(1)
    assert _gif_frames(env.save(tmp_path / "a.gif"))[1] == 30  # 33 ms, in hundredths


def test_save_mp4_reads_back_with_the_same_frame_count(tmp_path: Path) -> None:
    env = _recorded(steps=5)
    assert _video_frames(env.save(tmp_path / "line.mp4")) == (6, (16, 40, 3))


@pytest.mark.parametrize("suffix", [".webm", ".MKV", ".avi", ".mov", ".m4v"])
def test_every_listed_video_suffix_reads_back(tmp_path: Path, suffix: str) -> None:
    assert set(VIDEO_CODECS) >= {suffix.lower()}
    frames = np.full((4, 16, 40, 3), 120, np.uint8)
    assert _video_frames(save_video(frames, tmp_path / f"clip{suffix}", fps=10)) == (4, (16, 40, 3))


def test_save_refuses_a_suffix_it_cannot_write_before_writing_naming_save(tmp_path: Path) -> None:
    # The user called save(), not save_video(): the message names what was called, and .gif.
    with pytest.raises(
        ValueError,
        match=r"^RecordFrames\.save\(\) cannot write '.*frame\.jpg': the suffix '\.jpg' is not a "
        r"format it writes; use \.gif or a video suffix: \.mp4, \.m4v, \.mov, \.mkv, \.avi, "
        r"\.webm\.$",
    ):
        _recorded(steps=2).save(tmp_path / "frame.jpg")
    with pytest.raises(ValueError, match=r"^RecordFrames\.save\(\) needs fps > 0, got 0\.$"):
        _recorded(steps=2).save(tmp_path / "frame.mp4", fps=0)
    assert list(tmp_path.iterdir()) == []


def test_save_video_refuses_a_suffix_it_cannot_write_before_writing(tmp_path: Path) -> None:
    with pytest.raises(
        ValueError,
        match=r"^save_video\(\) cannot write '.*frame\.gif': the suffix '\.gif' is not a format "
        r"it writes; use one of \.mp4, .*, \.webm \(or \.gif through save_gif\(\)\)\.$",
    ):
        save_video([GOOD], tmp_path / "frame.gif")
    assert list(tmp_path.iterdir()) == []


def test_save_video_leaves_no_file_when_writing_fails(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import imageio

    real = imageio.get_writer

    def failing_writer(*args: Any, **kwargs: Any) -> Any:
        writer = real(*args, **kwargs)
        writer.append_data(np.zeros((16, 40, 3), np.uint8))

        def fail(image: Any) -> None:
            raise OSError("disk full")

        writer.append_data = fail
        return writer

    monkeypatch.setattr(imageio, "get_writer", failing_writer)
    with pytest.raises(OSError, match="disk full"):
        save_video(np.zeros((3, 16, 40, 3), np.uint8), tmp_path / "x.mp4", fps=10)
    assert list(tmp_path.iterdir()) == []


def test_save_video_raises_when_the_encoder_writes_no_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import imageio

    class Silent:  # an encoder that fails without a word, as ffmpeg can
        def append_data(self, image: Any) -> None:
            pass

        def close(self) -> None:
            (tmp_path / "x.mp4").touch()  # at most an empty file

    monkeypatch.setattr(imageio, "get_writer", lambda *args, **kwargs: Silent())
    with pytest.raises(OSError, match=r"save_video\(\) wrote nothing to '.*x\.mp4': the encoder"):
        save_video(np.zeros((3, 16, 40, 3), np.uint8), tmp_path / "x.mp4", fps=10)
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("shape", [(0, 8, 3), (8, 0, 3), (0, 8), (8, 0, 4)])
@pytest.mark.parametrize("writer", [save_gif, save_video])
def test_empty_images_are_refused_before_anything_is_written(
    tmp_path: Path, writer: Any, shape: tuple[int, ...]
) -> None:
    path = tmp_path / ("out.gif" if writer is save_gif else "out.mp4")
    frames = [np.zeros((4, 8, 3), np.uint8)] * 2 + [np.zeros(shape, np.uint8)]
    match = rf"^Frame 2 has shape \({shape[0]}, {shape[1]}.*\), an empty image; {writer.__name__}"
    with pytest.raises(ValueError, match=match):
        writer(frames, path, fps=10)
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("shape", [(3, 8, 4), (10, 64, 3)])
def test_a_3d_array_ending_in_3_or_4_says_it_is_read_as_one_image(
    tmp_path: Path, shape: tuple[int, ...]
) -> None:
    kind = "RGB" if shape[-1] == 3 else "RGBA"
    with pytest.raises(
        ValueError,
        match=rf"last axis is {shape[-1]} is read as one {kind} image; for greyscale frames "
        rf"{shape[-1]} pixels wide, pass a list of \(H, W\) frames\.$",
    ):
        save_gif(np.zeros(shape, np.uint8), tmp_path / "grey.gif")
    # which is how such a greyscale clip is written
    grey = [np.full(shape[1:], v, np.uint8) for v in (0, 120, 250)]
    assert _gif_frames(save_gif(grey, tmp_path / "grey.gif", fps=10)) == (3, 100)


def test_save_video_pads_odd_sizes(tmp_path: Path) -> None:
    frames = np.full((3, 15, 21, 3), 200, np.uint8)
    assert _video_frames(save_video(frames, tmp_path / "odd.mp4", fps=10)) == (3, (16, 22, 3))


def test_text_frames_are_saved_as_text_separated_by_form_feeds(tmp_path: Path) -> None:
    env = _recorded(TextRenderer(), steps=2)
    assert env.frames == ["position=0", "position=1", "position=2"]
    path = env.save(tmp_path / "episode.txt")
    assert path == tmp_path / "episode.txt"
    assert path.read_text(encoding="utf-8").split("\f") == env.frames
    assert env.save(tmp_path / "x.TXT").read_text(encoding="utf-8").count("\f") == 2


@pytest.mark.parametrize("name", ["episode.gif", "episode.mp4", "episode"])
def test_text_frames_to_another_suffix_are_written_as_text_with_a_warning(
    tmp_path: Path, name: str
) -> None:
    # Text has no GIF or video form (core.md: saved to .txt instead of raising); the file is
    # not the one asked for, so the warning names the one written.
    env = _recorded(TextRenderer(), steps=1)
    match = rf"save\(\) got '.*{name}', but the frames are text .* wrote them to '.*episode\.txt'"
    with pytest.warns(UserWarning, match=match):
        path = env.save(tmp_path / name)
    assert path == tmp_path / "episode.txt"
    assert list(tmp_path.iterdir()) == [path]
    assert path.read_text(encoding="utf-8").split("\f") == env.frames


def test_image_frames_to_txt_are_refused_naming_the_suffixes_that_work(tmp_path: Path) -> None:
    env = _recorded(steps=1)
    match = r"save\(\) got '.*x\.txt', but the frames are images, .* \(\.gif\) or a video \(\.mp4,"
    with pytest.raises(TypeError, match=match):
        env.save(tmp_path / "x.txt")
    assert list(tmp_path.iterdir()) == []


def test_text_and_image_frames_to_txt_are_refused_naming_save_and_the_first_image(
    tmp_path: Path,
) -> None:
    # save() was called, not save_text(): the message names it, as its other errors do
    env = _recorded(steps=1)
    env.frames.insert(0, "a text frame")
    match = (
        r"^RecordFrames\.save\(\) got '.*episode\.txt', but frame 1 is a ndarray, not text: the "
        r"frames mix text and images, which no one file holds\. Save the text frames with "
        r"save_text\(\) and the images as a GIF or a video, each a list of its own\.$"
    )
    with pytest.raises(TypeError, match=match):
        env.save(tmp_path / "episode.txt")
    assert list(tmp_path.iterdir()) == []


def test_save_text_rejects_images_and_empty_lists(tmp_path: Path) -> None:
    with pytest.raises(TypeError, match="Frame 1 is a ndarray, not text"):
        save_text(["a", np.zeros((2, 2, 3), np.uint8)], tmp_path / "x.txt")
    with pytest.raises(ValueError, match=r"^No frames to save\.$"):
        save_text([], tmp_path / "x.txt")


def test_save_text_refuses_a_single_frame_as_save_gif_does(tmp_path: Path) -> None:
    # A str is a sequence of 1-character frames: it would be written one character a page.
    match = r"^save_text\(\) got a single frame \(a str of 14 characters\); pass a list of frames"
    with pytest.raises(ValueError, match=match):
        save_text("t=0 price=100\n", tmp_path / "one.txt")
    assert list(tmp_path.iterdir()) == []
    save_text(["t=0 price=100\n"], tmp_path / "one.txt")
    assert (tmp_path / "one.txt").read_text(encoding="utf-8") == "t=0 price=100\n"


GOOD = np.zeros((2, 2, 3), np.uint8)


@pytest.mark.parametrize("writer", [save_gif, save_video])
@pytest.mark.parametrize(
    ("frames", "fps", "error", "message"),
    [
        ([GOOD], 0, ValueError, r"{name}\(\) needs fps > 0, got 0."),
        ([GOOD], -5.0, ValueError, r"needs fps > 0"),
        ([GOOD], "30", TypeError, r"needs a number for fps"),
        (
            GOOD,
            30,
            ValueError,
            r"{name}\(\) got a single frame of shape \(2, 2, 3\); pass a list of frames or a "
            r"stacked \(T, H, W, C\) array \(or \(T, H, W\) for greyscale\).",
        ),
        (np.zeros((2, 2), np.uint8), 30, ValueError, r"got a single frame of shape \(2, 2\)"),
        ([], 30, ValueError, r"^No frames to save.$"),
        (np.zeros((0, 2, 2, 3), np.uint8), 30, ValueError, r"^No frames to save.$"),
        (
            [GOOD, "text"],
            30,
            TypeError,
            r"Frame 1 is text, not an image \(from an 'ansi' renderer\?\); {name}\(\) needs RGB "
            r"arrays of shape \(H, W, 3\).",
        ),
        ([np.zeros((2, 2, 3))], 30, ValueError, r"\(frame \* 255\).round\(\).astype\(np.uint8\)"),
        ([np.full((2, 2, 3), 256, np.int64)], 30, ValueError, r"outside \[0, 255\]"),
        ([np.full((2, 2, 3), -1, np.int64)], 30, ValueError, r"outside \[0, 255\]"),
        ([np.zeros((2, 2, 2), np.uint8)], 30, ValueError, r"\(H, W\), \(H, W, 3\) or \(H, W, 4\)"),
        (
            [GOOD, np.zeros((3, 2, 3), np.uint8)],
            30,
            ValueError,
            r"Frame 1 has shape \(3, 2, 3\) but frame 0 has \(2, 2, 3\).",
        ),
        ("frames", 30, TypeError, r"needs a list of frames"),
    ],
)
def test_invalid_input_is_rejected_before_anything_is_written(
    writer: Any, frames: Any, fps: Any, error: type[Exception], message: str, tmp_path: Path
) -> None:
    path = tmp_path / ("out.gif" if writer is save_gif else "out.mp4")
    with pytest.raises(error, match=message.replace("{name}", writer.__name__)):
        writer(frames, path, fps=fps)
    assert not path.exists()


def test_save_gif_accepts_stacked_rgb_rgba_and_greyscale_frames(tmp_path: Path) -> None:
    assert _gif_frames(save_gif(np.zeros((3, 4, 5, 3), np.uint8), tmp_path / "a.gif"))[0] == 1
    stacked = np.stack([np.full((4, 5), v, np.uint8) for v in (0, 120, 250)])
    assert _gif_frames(save_gif(stacked, tmp_path / "b.gif", fps=10)) == (3, 100)
    rgba = [np.full((4, 5, 4), v, np.uint8) for v in (0, 255)]
    assert _gif_frames(save_gif(rgba, tmp_path / "c.gif"))[0] == 2
    ints = [np.full((4, 5, 3), v, np.int64) for v in (0, 255)]
    assert _gif_frames(save_gif(ints, tmp_path / "d.gif"))[0] == 2


def test_gif_frame_duration_is_at_least_one_millisecond(tmp_path: Path) -> None:
    frames = [np.full((2, 2, 3), v, np.uint8) for v in (0, 255)]
    # GIF stores hundredths of a second, so 1 ms is written as 0 and read back as 0.
    assert _gif_frames(save_gif(frames, tmp_path / "f.gif", fps=5000))[0] == 2


def test_missing_pillow_raises_missing_dependency(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "PIL", None)
    with pytest.raises(sekai.MissingDependency) as info:
        save_gif([GOOD], tmp_path / "x.gif")
    assert str(info.value) == "save_gif needs Pillow: pip install 'sekai-core[render]'"
    assert isinstance(info.value, ImportError)


def test_missing_imageio_raises_missing_dependency(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "imageio", None)
    with pytest.raises(sekai.MissingDependency) as info:
        save_video([GOOD], tmp_path / "x.mp4")
    assert str(info.value) == "save_video needs imageio: pip install 'sekai-core[render]'"


def test_the_renderer_is_given_the_wrapped_env_it_records() -> None:
    seen: list[Any] = []

    class Spy(LineRenderer):
        def render(self, env: Any) -> np.ndarray:
            seen.append(env)
            return super().render(env)

    inner = sekai.TimeLimit(LineEnv(), 5)
    env = RecordFrames(inner, Spy())
    env.reset(seed=0, options={"start": 0})
    assert seen == [inner]


def test_a_saved_gif_loops_forever_and_keeps_each_frames_pixels(tmp_path: Path) -> None:
    from PIL import Image, ImageSequence

    env = _recorded(steps=1)
    with Image.open(env.save(tmp_path / "line.gif")) as gif:
        assert gif.info["loop"] == 0
        read = [np.asarray(frame.convert("RGB")) for frame in ImageSequence.Iterator(gif)]
    assert len(read) == 2
    for got, recorded in zip(read, env.frames):
        np.testing.assert_array_equal(got, recorded)
