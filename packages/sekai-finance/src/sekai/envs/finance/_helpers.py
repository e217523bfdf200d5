"""Price-path helpers of sekai.envs.finance: simulate_gbm, random_correlation, sample_window."""

from __future__ import annotations

import math
import numbers
import sys
from typing import Any

import numpy as np

from sekai.finance._values import check_count, check_number, real_array, real_float, scalar
from sekai.finance.simulators._checks import check_generator, per_asset

__all__ = [
    "GbmTerms",
    "check_correlation",
    "check_equity_range",
    "check_gbm_prices",
    "check_gbm_range",
    "equity_remedy",
    "extreme_equity",
    "extreme_gbm",
    "gbm_prices_ok",
    "gbm_terms",
    "gbm_values",
    "market_values",
    "peak_log_equity",
    "price_source",
    "random_correlation",
    "refuse_unused_gbm",
    "sample_window",
    "simulate_gbm",
]


def check_correlation(corr: object, n: int | None = None) -> np.ndarray:
    """Validate a correlation matrix: ``(n, n)``, finite, symmetric, unit diagonal, PD.

    Raises:
        ValueError: saying which property fails.
    """
    # Imported here: the simulators package loads every model, which these envs do not need.
    from sekai.finance.simulators._checks import check_correlation_matrix

    try:
        matrix = real_array("corr", corr)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"corr must be a square matrix of real numbers ({exc})") from None
    return check_correlation_matrix(matrix, n, end=".")


def random_correlation(rng: np.random.Generator, n: int, strength: float = 0.5) -> np.ndarray:
    """A random ``(n, n)`` correlation matrix from a low-rank factor model.

    ``F = rng.standard_normal((n, max(1, n // 2)))·strength``; ``C = F Fᵀ + (1 − strength²) I``,
    normalised to a unit diagonal.
    """
    if isinstance(n, bool) or not isinstance(n, numbers.Integral) or n < 1:
        raise ValueError(f"n must be an int >= 1, got {n!r}.")
    number = real_float(scalar(strength))  # a Decimal, a 0-d array; no bool
    if number is None or not 0.0 <= number < 1.0:
        raise ValueError(f"strength must be a number in [0, 1), got {strength!r}.")
    strength = number
    factors = rng.standard_normal((int(n), max(1, int(n) // 2))) * strength
    cov = factors @ factors.T + (1.0 - strength**2) * np.eye(int(n))
    scale = np.sqrt(np.diag(cov))
    corr: np.ndarray = cov / np.outer(scale, scale)
    np.fill_diagonal(corr, 1.0)
    return corr


def simulate_gbm(
    rng: np.random.Generator,
    n_steps: int,
    *,
    s0: Any = 100.0,
    mu: Any = 0.0,
    sigma: Any = 0.2,
    dt: float = 1 / 252,
    corr: Any = None,
) -> np.ndarray:
    """One GBM path from ``s0``: ``(n_steps + 1,)``, or ``(n_steps + 1, n)`` for per-asset arrays.

    Draws one ``rng.standard_normal((n_steps, n))`` block, correlates it by ``@ chol(corr).T``
    and cumsums the exact log-normal increments ``(mu − sigma²/2)dt + sigma·sqrt(dt)·z``.
    """
    # GBM's own checks: a negative s0 or dt, or a NaN sigma, would give NaN paths
    check_generator(rng)
    n_steps = check_count("n_steps", n_steps)  # 0: the one-row path [s0]
    dt = check_number("dt", dt, "gt0")
    mu_a, sigma_a, s0_a = (
        np.asarray(per_asset(name, value, bound), dtype=np.float64)
        for name, value, bound in (("mu", mu, None), ("sigma", sigma, "ge0"), ("s0", s0, "gt0"))
    )
    sizes = {a.shape[0] for a in (mu_a, sigma_a, s0_a) if a.ndim == 1}
    if corr is not None:
        sizes.add(np.asarray(corr).shape[0])
    if len(sizes) > 1:
        raise ValueError(f"per-asset parameters disagree on the number of assets: {sorted(sizes)}")
    scalar = not sizes
    n = sizes.pop() if sizes else 1
    chol = None if corr is None else np.linalg.cholesky(check_correlation(corr, n))
    path = gbm_path(rng, n_steps, n, s0=s0_a, mu=mu_a, sigma=sigma_a, dt=dt, chol=chol)
    return path[:, 0] if scalar else path


def gbm_path(
    rng: np.random.Generator,
    n_steps: int,
    n: int,
    *,
    s0: np.ndarray,
    mu: np.ndarray,
    sigma: np.ndarray,
    dt: float,
    chol: np.ndarray | None,
) -> np.ndarray:
    """``simulate_gbm`` of checked float64 parameters and the Cholesky factor of ``corr``
    (None: independent assets): an ``(n_steps + 1, n)`` path, nothing validated again."""
    mu_a, sigma_a, s0_a = mu, sigma, s0
    z = rng.standard_normal((int(n_steps), n))
    if chol is not None:
        z = z @ chol.T
    increments = (mu_a - 0.5 * sigma_a**2) * dt + sigma_a * np.sqrt(dt) * z
    path = np.empty((int(n_steps) + 1, n))
    path[0] = s0_a
    np.cumsum(increments, axis=0, out=path[1:])
    gbm_prices(s0_a, path[1:], out=path[1:])
    return path


def gbm_prices(s0: np.ndarray, log_growth: np.ndarray, out: np.ndarray | None = None) -> np.ndarray:
    """The built-in GBM's prices ``s0 * exp(log_growth)`` (``GBM.simulate``'s expression), from
    the running sum ``log_growth`` of the log-price increments since ``s0`` (in ``out``, which
    may be ``log_growth``).

    No ``log(s0)`` enters: a drift and volatility of 0 keep ``s0`` exactly. The single envs'
    paths and the native envs' first ``lookback`` prices after a reset price with it; the
    native envs' later steps multiply the price by ``exp`` of each increment as they go, so
    with a drift (``sigma=0``, ``mu != 0``) they may differ from the single env in the last
    bits, while ``mu = sigma = 0`` gives the same prices, bit for bit.
    """
    prices: np.ndarray = np.exp(log_growth, out=out)
    prices *= s0
    return prices


# (drift, vol, volatility-scaled transposed Cholesky factor or None, log s0) of the built-in GBM
GbmTerms = tuple[np.ndarray, np.ndarray, "np.ndarray | None", np.ndarray]


def gbm_terms(mu: Any, sigma: Any, s0: Any, corr: Any, dt: float, n: int) -> GbmTerms:
    """Per-step drift and volatility, volatility-scaled transposed Cholesky factor (None
    without correlations) and log s0 of the built-in GBM of ``n`` assets (float64 ``(n,)``).

    The native envs step the GBM online with them, and so do the array kernels
    (``sekai.envs.finance.kernels``).
    """
    mu_a = np.broadcast_to(np.asarray(mu, np.float64), (n,))
    sigma_a = np.broadcast_to(np.asarray(sigma, np.float64), (n,))
    drift = (mu_a - 0.5 * sigma_a**2) * dt
    vol = sigma_a * np.sqrt(dt)
    # The transposed Cholesky factor with each column scaled by its asset's volatility:
    # one product gives the correlated, scaled shocks.
    chol_t = None if corr is None else np.linalg.cholesky(corr).T * vol
    log_s0 = np.broadcast_to(np.log(np.asarray(s0, np.float64)), (n,)).copy()
    return drift, vol, chol_t, log_s0


def gbm_prices_ok(prices: np.ndarray) -> bool:
    """Whether every price is inside float64's range: positive and finite (NaN is not)."""
    if not prices.size:
        return True
    # NaN fails both comparisons; the ufunc reductions skip ndarray.min's Python wrapper
    return bool(
        np.minimum.reduce(prices, axis=None) > 0.0
        and np.maximum.reduce(prices, axis=None) < math.inf
    )


def gbm_values(mu: Any, sigma: Any, dt: Any) -> str:
    """The parameters a built-in GBM simulated with, as its errors name them."""
    return f"mu={mu!r}, sigma={sigma!r}, dt={dt!r}"


def check_gbm_prices(prices: np.ndarray, env: Any, steps: int) -> None:
    """Refuse prices of ``env``'s built-in GBM that left float64's range (0, inf or NaN):
    parameters such as ``sigma=1000`` carry a price to 0 or infinity within ``steps`` steps.

    Raises:
        ValueError: naming ``env``'s ``mu``, ``sigma`` and ``dt``.
    """
    if not gbm_prices_ok(prices):
        values = gbm_values(env.mu, env.sigma, env.dt)
        raise extreme_gbm(type(env).__name__, "simulated a price", steps, values)


# How far from its mean log price the array kernels bound a GBM path (OptimalExecution-v0's
# price floor takes as many): a path beyond it is a chance the kernels leave out.
GBM_SPREAD = 5.0


def check_gbm_range(
    env: str,
    gbm: tuple[Any, Any, Any, Any],
    steps: int,
    *,
    shown: str,
    dtype: str = "float64",
    smallest: float = sys.float_info.min,
    largest: float = sys.float_info.max,
) -> None:
    """Refuse a built-in GBM (``gbm``: ``(mu, sigma, s0, dt)``, numbers or per-asset arrays;
    ``env``: the env's class name) whose price can leave ``(smallest, largest)``, the positive
    normal numbers of ``dtype``, within ``steps`` steps: the mean log price ``GBM_SPREAD``
    standard deviations out. The array kernels check their params so, before any step (the
    native envs check the prices they simulate, ``check_gbm_prices``).

    Raises:
        ValueError: ``extreme_gbm``'s, naming the parameters as ``shown``.
    """
    mu, sigma, s0, dt = (np.asarray(value, np.float64) for value in gbm)
    k = np.arange(steps + 1.0).reshape((-1,) + (1,) * max(np.ndim(mu), np.ndim(sigma)))
    with np.errstate(over="ignore", invalid="ignore"):  # an inf or NaN is refused below
        mean = np.log(s0) + k * ((mu - 0.5 * sigma * sigma) * dt)
        spread = GBM_SPREAD * sigma * np.sqrt(k * dt)
        low, high = np.min(mean - spread), np.max(mean + spread)
    if low >= math.log(smallest) and high <= math.log(largest):  # NaN fails too
        return
    reached = f"can reach a price ({GBM_SPREAD:g} standard deviations from its mean)"
    remedy = "pass prices="
    if dtype != "float64":
        remedy += ", or run the kernel in float64 (JAX: jax_enable_x64)"
    raise extreme_gbm(env, reached, steps, shown, dtype, remedy)


def extreme_gbm(
    env: str,
    reached: str,
    steps: int,
    values: str,
    dtype: str = "float64",
    remedy: str = "pass model= or prices=",
) -> ValueError:
    """The error for a built-in GBM whose price ``reached`` 0 or infinity (built, not raised)."""
    return ValueError(
        f"{env}'s built-in GBM {reached} of 0 or infinity within {steps} steps ({values}): "
        f"these parameters are too extreme for {dtype} prices. Use a smaller sigma or mu, or "
        f"{remedy}."
    )


def extreme_equity(
    env: str, reached: str, values: str, remedy: str, dtype: str = "float64"
) -> ValueError:
    """The error for an account whose equity ``reached`` infinity (built, not raised): equity
    compounds every step, so leverage, a strong drift or long steps carry it past ``dtype``.
    ``values``: what drives it; ``remedy``: what to change (``equity_remedy``'s)."""
    if dtype != "float64":
        remedy += ", or run the kernel in float64 (JAX: jax_enable_x64)"
    return ValueError(
        f"{env}'s equity {reached} ({values}): these parameters compound it beyond {dtype}'s "
        f"range. {remedy}."
    )


def equity_remedy(source: str, exposure: str = "") -> str:
    """What would keep an account's equity inside float64, as its overflow error advises:
    the env's ``exposure`` (the change that lowers its leverage, as ``"smaller positions"``;
    empty where no parameter sets it), then what moves its prices (``market_values``'s
    ``source``): a built-in GBM's ``mu`` or ``dt``, a ``model``, or a price history (other
    data); and a shorter episode."""
    changes = [exposure] if exposure else []
    if source == "gbm":
        changes.append("a mu nearer 0 or a smaller dt")  # a short gains as mu falls
    elif source == "model":
        changes.append("a model whose returns compound less")
    changes.append("a shorter episode_length")
    if source == "history":
        changes.append("other price data")
    return f"Use {', '.join(changes[:-1])}, or {changes[-1]}"


def market_values(env: Any, gbm: tuple[Any, Any, Any] | None = None) -> tuple[str, str]:
    """What moves a window env's prices, as its errors name it, and its ``source``
    (``equity_remedy``'s): its price history (``"history"``), its ``model`` (``"model"``), or
    the built-in GBM's ``mu``, ``sigma`` and ``dt`` (``"gbm"``): ``gbm``, those an episode
    simulated with; else those of the env's running episode (``_episode_gbm``), else the
    env's (set_attr changes them from the next episode)."""
    if env._history is not None:
        return "its price history", "history"
    if env.model is not None:
        return f"model={env.model!r}", "model"
    return gbm_values(*(gbm or env._episode_gbm or (env.mu, env.sigma, env.dt))), "gbm"


def check_equity_range(
    env: str,
    holdings: tuple[Any, Any],
    dt: Any,
    steps: int,
    *,
    shown: str,
    remedy: str,
    dtype: str = "float64",
    largest: float = sys.float_info.max,
) -> None:
    """Refuse a built-in GBM under which an account's equity (1 at the start) may pass
    ``largest`` within ``steps`` steps of ``dt`` years: ``GBM_SPREAD`` standard deviations
    above the mean of its log, held the way that raises that most (``peak_log_equity``).
    ``holdings``: ``(drift, variance)``, arrays of the yearly drift and variance of the log
    equity held at each extreme holding the env allows (the kernels' ``_equity_growth``).

    Raises:
        ValueError: ``extreme_equity``'s, naming the parameters as ``shown``, advising
            ``remedy``.
    """
    with np.errstate(over="ignore", invalid="ignore"):  # an inf or NaN is refused below
        years = np.float64(steps) * np.float64(dt)
    if peak_log_equity(holdings, years) <= math.log(largest):  # NaN fails too
        return
    reached = (
        f"may reach infinity within {steps} steps, its log {GBM_SPREAD:g} standard deviations "
        f"above its mean under the holdings that raise it most"
    )
    raise extreme_equity(env, reached, shown, remedy, dtype)


def peak_log_equity(holdings: tuple[Any, Any], years: Any) -> float:
    """The highest log equity ``GBM_SPREAD`` standard deviations above its mean within
    ``years``, over every way of holding ``holdings`` (``(drift, variance)`` of the log
    equity a year at each holding; any other holding whose pair lies on or below their upper
    concave hull is covered), each for part of the time, stopped at any moment.

    Held at ``i`` for ``y_i`` years, the log equity has mean ``sum(drift_i * y_i)`` and
    variance ``sum(variance_i * y_i)``: the bound grows with the mean, so it peaks on the
    upper concave hull of the holdings' ``(variance, drift)`` and of no holding at all
    (``(0, 0)``), where it is concave along each segment: at its end or where its slope is 0.
    """
    drift = np.append(np.asarray(holdings[0], np.float64).ravel(), 0.0)
    variance = np.append(np.asarray(holdings[1], np.float64).ravel(), 0.0)
    years = np.float64(years)
    if not (np.isfinite(drift).all() and np.isfinite(variance).all() and np.isfinite(years)):
        return math.inf
    hull: list[tuple[float, float]] = []  # (variance, drift), by variance
    for point in sorted(zip(variance.tolist(), drift.tolist())):
        while hull and hull[-1][0] == point[0]:  # the same variance: the larger drift
            hull.pop()
        while len(hull) > 1 and _under_chord(hull[-2], hull[-1], point):
            hull.pop()
        hull.append(point)
    v0, d0 = np.array(hull).T
    with np.errstate(all="ignore"):  # an overflow to inf is refused by the caller
        dv, dd = np.diff(v0, append=v0[-1]), np.diff(d0, append=d0[-1])  # last: no segment
        peak = (GBM_SPREAD * dv / (2.0 * dd)) ** 2 / years  # the variance a year at slope 0
        share = np.where(dd < 0.0, np.clip((peak - v0) / dv, 0.0, 1.0), 1.0)
        mean, spread = (d0 + share * dd) * years, np.sqrt((v0 + share * dv) * years)
        return float(np.max(mean + GBM_SPREAD * spread))


def _under_chord(a: tuple[float, float], b: tuple[float, float], c: tuple[float, float]) -> bool:
    """``b`` lies on or below the segment from ``a`` to ``c`` (not on an upper hull)."""
    return (b[0] - a[0]) * (c[1] - a[1]) - (b[1] - a[1]) * (c[0] - a[0]) >= 0.0


def sample_window(rng: np.random.Generator, prices: Any, length: int) -> np.ndarray:
    """A random contiguous window of ``length`` rows of ``prices``."""
    array = np.asarray(prices)
    if isinstance(length, bool) or not isinstance(length, numbers.Integral) or length < 1:
        raise ValueError(f"length must be an int >= 1, got {length!r}.")
    if length > array.shape[0]:
        raise ValueError(f"length {length} exceeds the {array.shape[0]} rows of prices.")
    start = int(rng.integers(0, array.shape[0] - int(length) + 1))
    return array[start : start + int(length)]


def simulated_prices(
    simulation: Any,
    model: Any,
    env: str,
    *,
    rows: int,
    n_assets: int | None,
    n_paths: int | None = None,
) -> np.ndarray:
    """The prices of what ``model.simulate()`` returned, checked for an env of ``n_assets``:
    ``(rows, n)``, or ``(n_paths, rows, n)`` when ``n_paths`` is given; all listed, finite, > 0.

    Raises:
        TypeError: ``simulation`` is not a ``Simulation``.
        ValueError: the wrong shape, unlisted assets, or prices that are not finite and > 0.
    """
    prices = getattr(simulation, "prices", None)
    if prices is None:
        raise TypeError(
            f"{model!r}.simulate() must return a sekai.finance.Simulation, got "
            f"{type(simulation).__name__}."
        )
    mask = getattr(simulation, "mask", None)
    if mask is not None and not np.all(mask):
        raise ValueError(
            f"{model!r} simulated unlisted assets (its mask is not all True); "
            f"{env} needs every asset listed: use Market-v0 for that."
        )
    prices = np.asarray(prices, dtype=np.float64)
    n = prices.shape[-1] if n_assets is None and prices.ndim else n_assets
    expected = (rows, n) if n_paths is None else (n_paths, rows, n)
    if prices.shape != expected:
        raise ValueError(
            f"{model!r}.simulate() returned prices of shape {prices.shape}; {env} asked for "
            f"{rows - 1} steps"
            + ("" if n_paths is None else f" of {n_paths} paths")
            + f" of {n} asset(s), that is shape {expected}."
        )
    if not np.all(np.isfinite(prices) & (prices > 0)):
        raise ValueError(
            f"{model!r}.simulate() returned prices that are not all finite and > 0; {env} "
            "needs positive prices."
        )
    return prices


def price_source(prices: Any, data: Any, model: Any) -> str | None:
    """How the constructor's caller named a price source other than the built-in GBM."""
    if prices is not None:
        return "prices="
    if data is not None:
        return "data="
    return None if model is None else f"model={type(model).__name__}(...)"


def refuse_unused_gbm(given: list[str], source: str | None, *, env: str) -> None:
    """``ValueError`` when built-in GBM parameters (``given``: the ones the caller passed) come
    with another price ``source``, which would leave them stored but never used."""
    if not given or source is None:
        return
    names = ", ".join(f"{name}=" for name in given)
    one = len(given) == 1
    it = "it" if one else "them"
    where = f", or give {it} to the model" if source.startswith("model=") else ""
    raise ValueError(
        f"{names} {'is a parameter' if one else 'are parameters'} of {env}'s built-in GBM, "
        f"which {source} replaces: {'it' if one else 'they'} would be ignored; leave {it} "
        f"out{where}."
    )
