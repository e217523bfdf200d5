"""RGB renderers for the classic-control envs, drawn with numpy alone (sekai.rendering.Canvas)."""

from __future__ import annotations

import math
from typing import Any, ClassVar

import numpy as np
import numpy.typing as npt

from sekai._args import check_int
from sekai.envs.classic_control.acrobot import AcrobotEnv
from sekai.envs.classic_control.cartpole import CartPoleEnv
from sekai.envs.classic_control.continuous_mountain_car import ContinuousMountainCarEnv
from sekai.envs.classic_control.mountain_car import MountainCarEnv
from sekai.envs.classic_control.pendulum import PendulumEnv
from sekai.rendering import BaseRenderer, Canvas, Theme, require_reset, resolve_theme, target_env

__all__ = ["AcrobotRenderer", "CartPoleRenderer", "MountainCarRenderer", "PendulumRenderer"]

Image = npt.NDArray[np.uint8]

# gymnasium's colours for the moving parts; they read well on both themes.
_POLE = (202, 152, 101)
_AXLE = (129, 132, 203)
_ROD = (204, 77, 77)
_LINK = (0, 170, 170)
_JOINT = (214, 190, 0)
_FLAG = (230, 190, 0)

# The smallest width, height or size in pixels.
_MIN_SIZE = 16


class _ClassicRenderer(BaseRenderer):
    """Shared parts: size checks, the theme, and a cached static background."""

    render_mode: ClassVar[str] = "rgb_array"  # image frames (read by to_gymnasium)

    def __init__(self, width: int, height: int, theme: str | Theme) -> None:
        owner = type(self).__name__
        self.width = check_int(owner, "width", width, _MIN_SIZE)
        self.height = check_int(owner, "height", height, _MIN_SIZE)
        self.theme = resolve_theme(theme)
        self._background: Image | None = None
        self._background_key: tuple[Any, ...] | None = None

    def _canvas(self, key: tuple[Any, ...]) -> Canvas:
        """A canvas holding the static scene for ``key`` (drawn once, then copied)."""
        if self._background is None or self._background_key != key:
            canvas = Canvas(self.width, self.height, self.theme.background)
            self._draw_background(canvas, *key)
            self._background, self._background_key = canvas.to_array(), key
        return Canvas.from_array(self._background)

    def _draw_background(self, canvas: Canvas, *key: Any) -> None:
        """Draw what does not move; ``key`` holds every env parameter it depends on."""

    def _theme_repr(self) -> str:
        """``, theme=...`` unless the theme is the default light one."""
        if self.theme == Theme.light():
            return ""
        return ", theme='dark'" if self.theme == Theme.dark() else f", theme={self.theme!r}"

    def __repr__(self) -> str:
        return (
            f"{type(self).__name__}(width={self.width}, height={self.height}{self._theme_repr()})"
        )


class CartPoleRenderer(_ClassicRenderer):
    """Draws a ``CartPoleEnv`` (wrapped or not) as a ``(height, width, 3)`` uint8 image.

    The track spans the termination bounds ``[-x_threshold, x_threshold]`` across the width,
    whose ends are marked; the pole is drawn to scale.

    Args:
        width: image width in pixels.
        height: image height in pixels.
        theme: ``"light"``, ``"dark"`` or a ``sekai.rendering.Theme``.
    """

    def __init__(
        self, width: int = 600, height: int = 400, *, theme: str | Theme = "light"
    ) -> None:
        super().__init__(width, height, theme)

    def render(self, env: Any) -> Image:
        """Draw the cart and pole as they are now."""
        cartpole = target_env(env, CartPoleEnv)
        require_reset(cartpole.state is not None)
        assert cartpole.state is not None
        x, _, theta, _ = (float(v) for v in cartpole.state)
        canvas = self._canvas((float(cartpole.x_threshold),))
        unit = self.width / 600.0  # gymnasium's pixel sizes at the default width
        scale = self.width / (2.0 * cartpole.x_threshold)
        ground_y = self._ground_y()
        wheel_r = 6.0 * unit
        cart_w, cart_h = 50.0 * unit, 30.0 * unit
        cart_x = x * scale + self.width / 2.0
        bottom = ground_y - wheel_r
        top = bottom - cart_h
        for dx in (-0.28, 0.28):
            canvas.circle((cart_x + dx * cart_w, bottom), wheel_r, self.theme.muted)
        canvas.rect(cart_x - cart_w / 2, top, cart_x + cart_w / 2, bottom, self.theme.foreground)
        pole_w = 10.0 * unit
        pole_len = scale * 2.0 * float(cartpole.length)
        axle = (cart_x, top + cart_h / 4.0)
        along = (math.sin(theta), -math.cos(theta))
        across = (math.cos(theta), math.sin(theta))
        corners = [(-pole_w / 2, -pole_w / 2), (pole_len - pole_w / 2, -pole_w / 2)]
        corners += [(pole_len - pole_w / 2, pole_w / 2), (-pole_w / 2, pole_w / 2)]
        canvas.polygon(
            [
                (axle[0] + a * along[0] + c * across[0], axle[1] + a * along[1] + c * across[1])
                for a, c in corners
            ],
            _POLE,
        )
        canvas.circle(axle, pole_w / 2.0, _AXLE)
        return canvas.pixels

    def _ground_y(self) -> float:
        return self.height * 0.75 + 15.0 * self.width / 600.0

    def _draw_background(self, canvas: Canvas, *key: Any) -> None:
        unit = self.width / 600.0
        ground_y = self._ground_y()
        # Ground, the track's surface, and red posts at the termination bounds x = +-x_threshold.
        canvas.rect(0, ground_y, self.width, self.height, self.theme.grid, alpha=0.6)
        canvas.line((0, ground_y), (self.width, ground_y), self.theme.foreground, width=1.5 * unit)
        for edge in (1.5 * unit, self.width - 1.5 * unit):
            canvas.line((edge, ground_y - 16 * unit), (edge, ground_y), _ROD, width=3 * unit)


class MountainCarRenderer(_ClassicRenderer):
    """Draws a ``MountainCarEnv`` or ``ContinuousMountainCarEnv`` as a ``(height, width, 3)`` image.

    Args:
        width: image width in pixels.
        height: image height in pixels.
        theme: ``"light"``, ``"dark"`` or a ``sekai.rendering.Theme``.
    """

    def __init__(
        self, width: int = 600, height: int = 400, *, theme: str | Theme = "light"
    ) -> None:
        super().__init__(width, height, theme)

    @staticmethod
    def _hill(xs: Any) -> Any:
        return np.sin(3 * xs) * 0.45 + 0.55

    def _to_screen(self, env: Any, x: float, y: float) -> tuple[float, float]:
        scale = self.width / (env.max_position - env.min_position)
        return (x - env.min_position) * scale, self.height - y * scale

    def render(self, env: Any) -> Image:
        """Draw the valley, the flag and the car as they are now."""
        car = target_env(env, MountainCarEnv, ContinuousMountainCarEnv)
        require_reset(car.state is not None)
        assert car.state is not None
        pos = float(car.state[0])
        key = (float(car.min_position), float(car.max_position), float(car.goal_position))
        canvas = self._canvas(key)
        unit = self.width / 600.0
        angle = math.atan(1.35 * math.cos(3 * pos))  # the slope of the hill under the car
        along = (math.cos(angle), -math.sin(angle))
        up = (-math.sin(angle), -math.cos(angle))
        base_x, base_y = self._to_screen(car, pos, float(self._hill(pos)))

        def at(a: float, b: float) -> tuple[float, float]:
            return base_x + a * along[0] + b * up[0], base_y + a * along[1] + b * up[1]

        wheel_r = 6.0 * unit
        body = [at(-20 * unit, wheel_r * 0.8), at(20 * unit, wheel_r * 0.8)]
        body += [
            at(20 * unit, wheel_r * 0.8 + 11 * unit),
            at(-20 * unit, wheel_r * 0.8 + 11 * unit),
        ]
        cabin = [at(-12 * unit, wheel_r * 0.8 + 10 * unit), at(9 * unit, wheel_r * 0.8 + 10 * unit)]
        cabin += [at(4 * unit, wheel_r * 0.8 + 19 * unit), at(-9 * unit, wheel_r * 0.8 + 19 * unit)]
        canvas.polygon(cabin, self.theme.foreground)
        canvas.polygon(body, self.theme.foreground)
        for a in (-11 * unit, 11 * unit):
            canvas.circle(at(a, wheel_r), wheel_r, self.theme.muted)
            canvas.circle(at(a, wheel_r), wheel_r / 2.5, self.theme.background)
        return canvas.pixels

    def _draw_background(self, canvas: Canvas, *key: Any) -> None:
        min_pos, max_pos, goal = key
        unit = self.width / 600.0
        scale = self.width / (max_pos - min_pos)
        xs = np.linspace(min_pos, max_pos, 120)
        points = [((x - min_pos) * scale, self.height - float(self._hill(x)) * scale) for x in xs]
        ground = [*points, (self.width, self.height), (0.0, self.height)]
        canvas.polygon(ground, self.theme.grid)
        canvas.polyline(points, self.theme.foreground, width=2.0 * unit)
        flag_x = (goal - min_pos) * scale
        flag_y = self.height - float(self._hill(goal)) * scale
        canvas.line(
            (flag_x, flag_y), (flag_x, flag_y - 50 * unit), self.theme.foreground, width=2 * unit
        )
        canvas.polygon(
            [
                (flag_x + unit, flag_y - 50 * unit),
                (flag_x + unit, flag_y - 36 * unit),
                (flag_x + 26 * unit, flag_y - 43 * unit),
            ],
            _FLAG,
        )


class _SquareRenderer(_ClassicRenderer):
    """A square image of ``size`` pixels a side (500 by default)."""

    def __init__(self, size: int = 500, *, theme: str | Theme = "light") -> None:
        size = check_int(type(self).__name__, "size", size, _MIN_SIZE)
        super().__init__(size, size, theme)
        self.size = self.width

    def __repr__(self) -> str:
        return f"{type(self).__name__}(size={self.size}{self._theme_repr()})"


class PendulumRenderer(_SquareRenderer):
    """Draws a ``PendulumEnv`` as a ``(size, size, 3)`` image, with the last torque as an arrow.

    Args:
        size: width and height in pixels.
        theme: ``"light"``, ``"dark"`` or a ``sekai.rendering.Theme``.
    """

    def render(self, env: Any) -> Image:
        """Draw the rod at its current angle and the torque last applied."""
        pendulum = target_env(env, PendulumEnv)
        require_reset(pendulum.state is not None)
        assert pendulum.state is not None
        theta = float(pendulum.state[0])
        canvas = self._canvas(())
        scale = self.size / 4.4
        c = self.size / 2.0
        tip = (c - math.sin(theta) * scale, c - math.cos(theta) * scale)
        rod_w = 0.2 * scale
        canvas.line((c, c), tip, _ROD, width=rod_w)
        canvas.circle((c, c), rod_w / 2, _ROD)
        canvas.circle(tip, rod_w / 2, _ROD)
        last_u = pendulum.last_u
        if last_u is not None and float(last_u) != 0.0:  # drawn over the rod, as in gymnasium
            _torque_arrow(canvas, (c, c), float(last_u), scale, self.theme.muted)
        canvas.circle((c, c), 0.05 * scale, self.theme.foreground)
        return canvas.pixels

    def _draw_background(self, canvas: Canvas, *key: Any) -> None:
        # The circle the tip travels on, and a tick at the upright goal.
        scale = self.size / 4.4
        c = self.size / 2.0
        canvas.circle((c, c), scale, self.theme.grid, fill=False, width=max(scale * 0.02, 1.0))
        canvas.line((c, c - scale * 1.12), (c, c - scale * 0.88), self.theme.muted, width=2.0)


def _torque_arrow(
    canvas: Canvas, center: tuple[float, float], torque: float, scale: float, color: Any
) -> None:
    """An arc around ``center`` sized by ``|torque|``: counter-clockwise for positive torque."""
    radius = scale * min(abs(torque), 2.0) / 4.0 + 0.08 * scale
    sign = 1.0 if torque > 0 else -1.0
    width = max(0.035 * scale, 1.5)
    head = 4.0 * width
    # Screen angles (y down): a positive torque turns the rod counter-clockwise on screen.
    start = math.pi / 2 + sign * 0.35
    end = start - sign * 1.6 * math.pi
    shaft_end = end + sign * head / radius  # stop the shaft where the head begins
    angles = np.linspace(start, shaft_end, 48)
    points = [(center[0] + radius * math.cos(a), center[1] + radius * math.sin(a)) for a in angles]
    canvas.polyline(points, color, width=width)
    tip = (center[0] + radius * math.cos(end), center[1] + radius * math.sin(end))
    base = points[-1]
    dx, dy = tip[0] - base[0], tip[1] - base[1]
    norm = math.hypot(dx, dy) or 1.0
    nx, ny = -dy / norm * head * 0.6, dx / norm * head * 0.6
    canvas.polygon([tip, (base[0] + nx, base[1] + ny), (base[0] - nx, base[1] - ny)], color)


class AcrobotRenderer(_SquareRenderer):
    """Draws an ``AcrobotEnv`` as a ``(size, size, 3)`` image, with the goal line.

    Args:
        size: width and height in pixels.
        theme: ``"light"``, ``"dark"`` or a ``sekai.rendering.Theme``.
    """

    def render(self, env: Any) -> Image:
        """Draw both links at their current angles."""
        acrobot = target_env(env, AcrobotEnv)
        require_reset(acrobot.state is not None)
        assert acrobot.state is not None
        s0, s1 = float(acrobot.state[0]), float(acrobot.state[1])
        l1, l2 = float(acrobot.LINK_LENGTH_1), float(acrobot.LINK_LENGTH_2)
        canvas = self._canvas((l1, l2))
        scale = self.size / (2 * (l1 + l2 + 0.2))
        c = self.size / 2.0
        p0 = (c, c)
        p1 = (c + l1 * math.sin(s0) * scale, c + l1 * math.cos(s0) * scale)
        p2 = (p1[0] + l2 * math.sin(s0 + s1) * scale, p1[1] + l2 * math.cos(s0 + s1) * scale)
        for a, b in ((p0, p1), (p1, p2)):
            canvas.line(a, b, _LINK, width=0.2 * scale)
        for joint in (p0, p1):
            canvas.circle(joint, 0.1 * scale, _JOINT)
        return canvas.pixels

    def _draw_background(self, canvas: Canvas, *key: Any) -> None:
        l1, l2 = key
        scale = self.size / (2 * (l1 + l2 + 0.2))
        c = self.size / 2.0
        goal_y = c - l1 * scale  # the tip must rise one link length above the fixed joint
        reach = (l1 + l2) * scale
        canvas.line((c - reach, goal_y), (c + reach, goal_y), self.theme.foreground, width=1.5)
