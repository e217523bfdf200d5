"""VecRecordFrames: record one sub-env of a vector env after every vector reset() and step()."""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from sekai._args import check_int
from sekai.rendering.recorder import FrameRecording, save_frames
from sekai.rendering.renderer import Renderer
from sekai.vector.async_vec_env import AsyncVecEnv
from sekai.vector.result import VecResetResult, VecStepResult
from sekai.vector.sync_vec_env import SyncVecEnv
from sekai.vector.vec_env import VecEnv
from sekai.vector.vec_wrapper import VecResultWrapper

if TYPE_CHECKING:
    from numpy.typing import NDArray

__all__ = ["VecRecordFrames"]


class VecRecordFrames(FrameRecording, VecResultWrapper):
    """Render sub-env ``index`` after every vector ``reset()`` and ``step()``; keep the frames.

    After a step in which the sub-env finished and was reset automatically, the frame shows the
    first state of its next episode, so consecutive episodes follow each other in ``frames``.
    The renderer draws the sub-env object itself, so the sub-envs must live in this process:
    ``SyncVecEnv`` or ``AsyncVecEnv`` (``vectorization_mode="sync"`` or ``"async"``).

    Args:
        venv: the vector env to record (wrapped or not).
        renderer: any ``sekai.rendering.Renderer``.
        index: the sub-env to record, in ``[0, num_envs)``.
        enabled: record only while this is true (the attribute may be changed at any time).
        max_frames: stop appending once this many frames are held (None: no limit).

    Raises:
        TypeError: a backend without in-process sub-envs (native, proc, ...), a renderer
            without ``render``/``close``, or an ``index``, ``enabled`` or ``max_frames`` of
            the wrong type.
        ValueError: ``index`` out of range, or a negative ``max_frames``.
    """

    def __init__(
        self,
        venv: VecEnv,
        renderer: Renderer,
        *,
        index: int = 0,
        enabled: bool = True,
        max_frames: int | None = None,
    ) -> None:
        super().__init__(venv)
        self._start_recording(renderer, enabled, max_frames)
        base = venv.unwrapped
        if not isinstance(base, (SyncVecEnv, AsyncVecEnv)):
            raise TypeError(
                f"VecRecordFrames renders a sub-env object, and {type(base).__name__} has none in "
                "this process; use make_vec(..., vectorization_mode='sync') (or 'async'), or wrap "
                "each sub-env in RecordFrames inside the sub-env factory."
            )
        index = check_int("VecRecordFrames", "index", index, 0)
        if index >= base.num_envs:
            raise ValueError(
                f"VecRecordFrames: index must be < {base.num_envs} (the number of sub-envs), "
                f"got {index}."
            )
        self._base: SyncVecEnv | AsyncVecEnv = base
        self.index = index

    def _recorded_env(self) -> Any:
        return self._base.envs[self.index]

    def _rewrite_reset(self, result: VecResetResult[Any]) -> VecResetResult[Any]:
        return self._capture(result)

    def _rewrite_step(
        self, result: VecStepResult[Any], live: NDArray[np.bool_] | None
    ) -> VecStepResult[Any]:
        return self._capture(result)

    def close(self) -> None:
        """Close the renderer (once: a second ``close()`` is a no-op), then the vector env."""
        try:
            self._close_renderer()
        finally:
            self.venv.close()

    def save(self, path: str | os.PathLike[str], fps: float | None = None) -> Path:
        """Write the frames like ``RecordFrames.save()`` (fps from the env's ``render_fps``)."""
        return save_frames(self.frames, path, fps, self.metadata, "VecRecordFrames.save")
