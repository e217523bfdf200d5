"""RecordFrames (a wrapper that renders every step) and the GIF, video and text writers."""

from __future__ import annotations

import importlib.util
import math
import os
import warnings
from collections.abc import Sequence
from pathlib import Path
from typing import Any, TypeVar

import numpy as np
import numpy.typing as npt

from sekai._args import check_bool, check_int
from sekai.core.env import Env
from sekai.core.wrapper import ResultWrapper
from sekai.error import MissingDependency
from sekai.rendering.renderer import Renderer, RenderFrame

__all__ = [
    "RecordFrames",
    "check_renderer",
    "image_frame",
    "save_frames",
    "save_gif",
    "save_text",
    "save_video",
]

Frames = Sequence[Any] | npt.NDArray[Any]
"""A list of frames, or one stacked ``(T, H, W[, C])`` array."""

_ResultT = TypeVar("_ResultT")

_INSTALL = "pip install 'sekai-core[render]'"
_FORM_FEED = "\f"


class FrameRecording:
    """The frame buffer RecordFrames and VecRecordFrames share; subclasses name what to render.

    Attributes:
        renderer: draws one frame of the recorded env.
        enabled: record only while this is true (it may be changed at any time).
        max_frames: stop appending once this many frames are held (None: no limit).
        frames: the frames recorded so far.
    """

    renderer: Renderer
    frames: list[RenderFrame]
    _enabled: bool
    _max_frames: int | None

    def _start_recording(self, renderer: Renderer, enabled: bool, max_frames: int | None) -> None:
        check_renderer(renderer)
        self.renderer = renderer
        self.enabled = enabled
        self.max_frames = max_frames
        self.frames = []
        self._renderer_closed = False

    @property
    def enabled(self) -> bool:
        """Record only while this is true; set it at any time (a bool, as the constructor's)."""
        return self._enabled

    @enabled.setter
    def enabled(self, value: bool) -> None:
        self._enabled = check_bool(type(self).__name__, "enabled", value)

    @property
    def max_frames(self) -> int | None:
        """Stop appending once this many frames are held (None: no limit); set it at any time
        (None or an int >= 0, as the constructor's)."""
        return self._max_frames

    @max_frames.setter
    def max_frames(self, value: int | None) -> None:
        owner = type(self).__name__
        self._max_frames = None if value is None else check_int(owner, "max_frames", value, 0)

    def _close_renderer(self) -> None:
        """Close the renderer once: closing the recorder again leaves it alone."""
        if not self._renderer_closed:
            self._renderer_closed = True
            self.renderer.close()

    def _recorded_env(self) -> Any:
        """The env object the renderer draws."""
        raise NotImplementedError

    def _capture(self, result: _ResultT) -> _ResultT:
        """Render a frame (while enabled and under ``max_frames``), then pass ``result`` on."""
        if self._enabled and (self._max_frames is None or len(self.frames) < self._max_frames):
            self.frames.append(self.renderer.render(self._recorded_env()))
        return result

    def clear(self) -> None:
        """Forget every recorded frame."""
        self.frames.clear()


class RecordFrames(FrameRecording, ResultWrapper[Any, Any, Any, Any]):
    """Render the env after every ``reset()`` and ``step()`` and keep the frames.

    Args:
        env: the env to record.
        renderer: any ``sekai.rendering.Renderer``; it is given the wrapped env.
        enabled: record only while this is true (the attribute may be changed at any time).
        max_frames: stop appending once this many frames are held (None: no limit).

    Raises:
        TypeError: a renderer without ``render``/``close``, or an ``enabled`` or
            ``max_frames`` of the wrong type (a bool; None or an int).
        ValueError: a negative ``max_frames``.

    Example:
        >>> env = RecordFrames(sekai.make("CartPole-v1"), CartPoleRenderer())  # doctest: +SKIP
        >>> env.reset(seed=0); env.step(0); env.save("cartpole.gif")  # doctest: +SKIP
    """

    def __init__(
        self,
        env: Env[Any, Any],
        renderer: Renderer,
        *,
        enabled: bool = True,
        max_frames: int | None = None,
    ) -> None:
        super().__init__(env)
        self._start_recording(renderer, enabled, max_frames)

    def _recorded_env(self) -> Env[Any, Any]:
        return self.env

    # ResultWrapper routes reset/step and their async twins through these two hooks.
    _reset_result = _step_result = FrameRecording._capture

    def close(self) -> None:
        """Close the renderer (once), then the env."""
        try:
            self._close_renderer()
        finally:
            self.env.close()

    def save(self, path: str | os.PathLike[str], fps: float | None = None) -> Path:
        """Write the recorded frames to ``path`` and return the path written.

        ``.gif`` (any case) is written as ``save_gif`` does (Pillow), ``.txt`` as ``save_text``,
        a video suffix (``VIDEO_CODECS``: .mp4, .m4v, .mov, .mkv, .avi, .webm) as ``save_video``
        (imageio + ffmpeg); any other suffix raises ``ValueError``. Text frames
        (from a text renderer) are always written as text: to ``path`` with its suffix replaced
        by ``.txt`` when it is not already ``.txt`` (with a ``UserWarning`` naming that file).
        Images to a ``.txt`` path raise ``TypeError`` before anything is written.

        Args:
            fps: frames per second; defaults to ``env.metadata["render_fps"]``, else 30.
        """
        return save_frames(self.frames, path, fps, self.env.metadata, "RecordFrames.save")


def save_frames(
    frames: Sequence[RenderFrame],
    path: str | os.PathLike[str],
    fps: float | None,
    metadata: dict[str, Any],
    caller: str,
) -> Path:
    """``RecordFrames.save()``: pick the writer from the suffix and the frames (see there).

    ``caller`` is the method the user called (``"RecordFrames.save"``), named in messages.
    """
    path = Path(path)
    if fps is None:
        fps = metadata.get("render_fps") or 30
    suffix = path.suffix.lower()
    kinds = {isinstance(frame, str) for frame in frames}
    if kinds == {True}:
        if suffix != ".txt":
            # Text has no GIF or video form: written as text (core.md), said out loud, since
            # the file is not the one asked for.
            text_path = path.with_suffix(".txt")
            warnings.warn(
                f"{caller}() got {str(path)!r}, but the frames are text (from a text renderer), "
                f"which have no {suffix or 'suffix-less'} form: wrote them to "
                f"{str(text_path)!r}, separated by form feeds.",
                UserWarning,
                stacklevel=3,
            )
            path = text_path
        return save_text(frames, path)
    if False in kinds and suffix == ".txt":
        if True in kinds:  # text and images, from renderers swapped mid-recording
            first = next(i for i, frame in enumerate(frames) if not isinstance(frame, str))
            raise TypeError(
                f"{caller}() got {str(path)!r}, but frame {first} is a "
                f"{type(frames[first]).__name__}, not text: the frames mix text and images, "
                "which no one file holds. Save the text frames with save_text() and the "
                "images as a GIF or a video, each a list of its own."
            )
        raise TypeError(
            f"{caller}() got {str(path)!r}, but the frames are images, which it writes only "
            f"as a GIF (.gif) or a video ({', '.join(VIDEO_CODECS)}); .txt is for text frames."
        )
    if suffix == ".gif":
        return _write_gif(frames, path, fps, caller)
    if suffix == ".txt":
        return save_text(frames, path)
    if not suffix:
        raise ValueError(
            f"{caller}() picks the file format from the path's suffix, and {str(path)!r} has "
            "none: use .gif, .txt or a video suffix such as .mp4."
        )
    return _write_video(frames, path, fps, caller, f".gif or a video suffix: {_VIDEO_SUFFIXES}")


def check_renderer(renderer: Any, caller: str | None = None) -> None:
    """Refuse a ``renderer`` argument that is not a renderer object.

    A renderer class passes the runtime check of the ``Renderer`` protocol (it has the
    methods), so it is refused by name here, where the mistake is made. ``caller`` is the
    function the user called (``"to_gymnasium"``), named at the start of the messages.

    Raises:
        TypeError: ``renderer`` is a class, or has no ``render``/``close``.
    """
    called = f"{caller}(): " if caller else ""
    if isinstance(renderer, type):
        raise TypeError(
            f"{called}renderer must be a renderer object, got the class {renderer.__name__}: "
            f"pass {renderer.__name__}(...)."
        )
    if not isinstance(renderer, Renderer):
        raise TypeError(
            f"{called}renderer must have render(env) and close() methods (a "
            f"sekai.rendering.Renderer), got {type(renderer).__name__}."
        )


def save_gif(frames: Frames, path: str | os.PathLike[str], fps: float = 30) -> Path:
    """Write an animated GIF that loops forever; needs Pillow (``sekai-core[render]``).

    Args:
        frames: a list of ``(H, W)``, ``(H, W, 3)`` or ``(H, W, 4)`` integer images with values in
            ``[0, 255]``, all of one shape, or one stacked ``(T, H, W[, C])`` array.
        path: where to write.
        fps: frames per second; each frame lasts ``max(int(1000 / fps), 1)`` ms.

    Consecutive identical frames are merged into one longer frame by Pillow, so playback timing
    is kept although a reader may count fewer frames.

    Raises:
        ValueError, TypeError: invalid ``fps`` or frames, before anything is written.
        MissingDependency: Pillow is not installed.
    """
    return _write_gif(frames, path, fps, "save_gif")


def _write_gif(frames: Frames, path: str | os.PathLike[str], fps: float, caller: str) -> Path:
    """``save_gif()``, naming ``caller`` (what the user called) in its messages."""
    images = _validated_frames(caller, frames, fps)
    try:
        from PIL import Image
    except ImportError as exc:
        raise MissingDependency(
            f"{caller} needs Pillow: {_INSTALL}", package="pillow", extra="render"
        ) from exc
    pictures = [Image.fromarray(image) for image in images]
    path = Path(path)
    pictures[0].save(
        path,
        format="GIF",
        save_all=True,
        append_images=pictures[1:],
        duration=max(int(1000 / fps), 1),
        loop=0,
    )
    return path


def save_video(frames: Frames, path: str | os.PathLike[str], fps: float = 30) -> Path:
    """Write a video (format from the suffix, e.g. ``.mp4``) with imageio and ffmpeg.

    Frames are validated as ``save_gif`` does; greyscale frames are written as RGB, an alpha
    channel is dropped, and odd sizes are padded by one edge pixel (video codecs need even
    sizes).

    Raises:
        ValueError, TypeError: invalid ``fps`` or frames, or a suffix that is not one of
            ``VIDEO_CODECS`` (.mp4, .m4v, .mov, .mkv, .avi, .webm), before anything is written.
        MissingDependency: imageio or imageio-ffmpeg is not installed (``sekai-core[render]``).
        OSError: the encoder wrote no file (nothing is left at ``path``).
    """
    alternatives = f"one of {_VIDEO_SUFFIXES} (or .gif through save_gif())"
    return _write_video(frames, path, fps, "save_video", alternatives)


def _write_video(
    frames: Frames, path: str | os.PathLike[str], fps: float, caller: str, alternatives: str
) -> Path:
    """``save_video()``, naming ``caller`` (what the user called) in its messages and, for a
    suffix it cannot write, the ``alternatives`` that ``caller`` takes."""
    images = _validated_frames(caller, frames, fps)
    path = Path(path)
    codec = VIDEO_CODECS.get(path.suffix.lower())
    if codec is None:
        raise ValueError(
            f"{caller}() cannot write {str(path)!r}: the suffix {path.suffix!r} is not a format "
            f"it writes; use {alternatives}."
        )
    try:
        import imageio
    except ImportError as exc:
        raise MissingDependency(
            f"{caller} needs imageio: {_INSTALL}", package="imageio", extra="render"
        ) from exc
    if importlib.util.find_spec("imageio_ffmpeg") is None:  # imageio's ffmpeg backend
        raise MissingDependency(
            f"{caller} needs imageio-ffmpeg: {_INSTALL}", package="imageio-ffmpeg", extra="render"
        )
    suffix = path.suffix.lower()
    try:
        writer = imageio.get_writer(
            path,
            format=_IMAGEIO_FORMATS.get(suffix),
            fps=fps,
            codec=codec,
            macro_block_size=1,
        )
        try:
            for image in images:
                writer.append_data(_even_rgb(image))
        finally:
            writer.close()
        if not path.is_file() or path.stat().st_size == 0:
            # ffmpeg can fail without imageio noticing; a path to nothing is no recording.
            raise OSError(
                f"{caller}() wrote nothing to {str(path)!r}: the encoder (ffmpeg, {codec}) "
                f"produced no data for {len(images)} frames of shape {images[0].shape}; its "
                "messages, if it printed any, are on stderr above."
            )
    except BaseException:
        # A half-written video plays as nothing or as a truncated clip: leave no file behind.
        path.unlink(missing_ok=True)
        raise
    return path


# Each container with an encoder that imageio-ffmpeg's ffmpeg build ships and that the
# container accepts (ffmpeg's own choice for .webm, VP9, is not what imageio passes).
VIDEO_CODECS = {
    ".mp4": "libx264",
    ".m4v": "libx264",
    ".mov": "libx264",
    ".mkv": "libx264",
    ".avi": "mpeg4",
    ".webm": "libvpx-vp9",
}

_VIDEO_SUFFIXES = ", ".join(VIDEO_CODECS)

# imageio picks its backend by suffix and has none for these; ffmpeg's muxer of that name
# writes them (for .m4v, its mp4 muxer writes an M4V-branded file).
_IMAGEIO_FORMATS = {".m4v": "mp4"}


def save_text(frames: Sequence[Any], path: str | os.PathLike[str]) -> Path:
    """Write text frames to a UTF-8 file, separated by form feeds (``\\f``).

    Raises:
        ValueError: no frames, or a single ``str`` instead of a list of frames.
        TypeError: a frame is not a ``str``.
    """
    if isinstance(frames, str):  # a sequence too: it would be saved one character a frame
        raise ValueError(
            f"save_text() got a single frame (a str of {len(frames)} characters); pass a list "
            "of frames: save_text([frame], path)."
        )
    if len(frames) == 0:
        raise ValueError("No frames to save.")
    for i, frame in enumerate(frames):
        if not isinstance(frame, str):
            raise TypeError(
                f"Frame {i} is a {type(frame).__name__}, not text; save_text() needs str frames "
                "(use save_gif() or save_video() for images)."
            )
    path = Path(path)
    path.write_text(_FORM_FEED.join(frames), encoding="utf-8")
    return path


def _validated_frames(func: str, frames: Frames, fps: float) -> list[npt.NDArray[np.uint8]]:
    """Check ``fps`` and every frame as core.md §9 says; return uint8 images."""
    if isinstance(fps, bool) or not isinstance(fps, (int, float, np.integer, np.floating)):
        raise TypeError(f"{func}() needs a number for fps, got {type(fps).__name__}.")
    if not (fps > 0 and math.isfinite(fps)):
        raise ValueError(f"{func}() needs fps > 0, got {fps}.")
    if isinstance(frames, np.ndarray):
        if frames.ndim == 2 or (frames.ndim == 3 and frames.shape[-1] in (3, 4)):
            # (T, H, 3) greyscale and (H, W, 3) RGB look alike: a 3-D array is read as an image.
            ambiguous = (
                f" A 3-D array whose last axis is {frames.shape[-1]} is read as one "
                f"{'RGB' if frames.shape[-1] == 3 else 'RGBA'} image; for greyscale frames "
                f"{frames.shape[-1]} pixels wide, pass a list of (H, W) frames."
                if frames.ndim == 3
                else ""
            )
            raise ValueError(
                f"{func}() got a single frame of shape {frames.shape}; pass a list of frames or a "
                f"stacked (T, H, W, C) array (or (T, H, W) for greyscale).{ambiguous}"
            )
        items: Sequence[Any] = list(frames) if frames.ndim in (3, 4) else [frames]
    elif isinstance(frames, (str, bytes)) or not isinstance(frames, Sequence):
        raise TypeError(
            f"{func}() needs a list of frames or a stacked array, got {type(frames).__name__}."
        )
    else:
        items = frames
    if len(items) == 0:
        raise ValueError("No frames to save.")
    images: list[npt.NDArray[np.uint8]] = []
    first_shape: tuple[int, ...] | None = None
    for i, frame in enumerate(items):
        if isinstance(frame, str):
            raise TypeError(
                f"Frame {i} is text, not an image (from an 'ansi' renderer?); {func}() needs RGB "
                "arrays of shape (H, W, 3)."
            )
        image = image_frame(frame, f"Frame {i}", f"{func}()")
        if first_shape is None:
            first_shape = image.shape
        elif image.shape != first_shape:
            raise ValueError(f"Frame {i} has shape {image.shape} but frame 0 has {first_shape}.")
        images.append(image)
    return images


def image_frame(frame: Any, label: str, user: str) -> npt.NDArray[np.uint8]:
    """``frame`` as a uint8 image, refused (``ValueError``) unless it is one: shape (H, W),
    (H, W, 3) or (H, W, 4) of integers in [0, 255] (a cast would turn a float image black
    and wrap large values).

    Args:
        frame: the array-like frame.
        label: what the frame is, for messages (``"Frame 3"``).
        user: what needs it, for messages (``"save_gif()"``).
    """
    image = np.asarray(frame)
    if image.ndim not in (2, 3) or (image.ndim == 3 and image.shape[-1] not in (3, 4)):
        raise ValueError(
            f"{label} has shape {image.shape}; {user} needs (H, W), (H, W, 3) or (H, W, 4)."
        )
    if 0 in image.shape[:2]:
        raise ValueError(
            f"{label} has shape {image.shape}, an empty image; {user} needs at least one row "
            "and one column (H, W >= 1)."
        )
    if image.dtype.kind not in "iu":
        raise ValueError(
            f"{label} has dtype {image.dtype}; {user} needs integers in [0, 255], e.g. "
            "(frame * 255).round().astype(np.uint8) for floats in [0, 1]."
        )
    if image.dtype != np.uint8 and image.size and (image.min() < 0 or image.max() > 255):
        raise ValueError(
            f"{label} has values outside [0, 255] (min {image.min()}, max {image.max()})."
        )
    return image.astype(np.uint8, copy=False)


def _even_rgb(image: npt.NDArray[np.uint8]) -> npt.NDArray[np.uint8]:
    """RGB copy of ``image`` with even height and width (edge pixels repeated if needed)."""
    if image.ndim == 2:
        image = np.repeat(image[..., None], 3, axis=2)
    image = image[..., :3]
    pad_h, pad_w = image.shape[0] % 2, image.shape[1] % 2
    if pad_h or pad_w:
        image = np.pad(image, ((0, pad_h), (0, pad_w), (0, 0)), mode="edge")
    return np.ascontiguousarray(image)
