"""Native machinery of the window-based envs (Trading, Portfolio): prices, windows, returns.

Every sub-env is at its own decision index ``t`` of its own window. The market advances in
one of three ways, chosen per episode at its reset:

* history: the decision row is ``start + lookback + t`` of the shared history (nothing copied);
* built-in GBM, simulated online: one ``(num_envs, n)`` array of normals per ``step()`` (from
  ``NormalBlocks``, which draws many steps' worth at a time), the path so far kept for
  ``price_history`` (never pre-drawn whole). Each sub-env simulates with
  the GBM parameters (``mu``, ``sigma``, ``corr``, ``dt``) of its own reset, as a SyncVecEnv
  sub-env draws its whole path then: a ``set_attr`` reaches the simulation at the next reset.
  A price that leaves float64's range is refused naming the parameters it was simulated with:
  at a reset, checked before anything is stored (the sub-envs reset together keep their state
  and wait for ``reset()``, as ``FinanceVecEnv.await_reset`` says); in a step, the sub-envs
  whose price failed wait for ``reset()`` and the step changes nothing;
* a user ``model=``: ``model.simulate(rng, window - 1, n_paths=k)`` at reset, replayed.

The last ``lookback`` log returns of every sub-env sit in a rolling buffer whose write position
is shared by all sub-envs, so the observation is one slice copy.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from numpy.typing import NDArray

from sekai.envs.finance._common import parse_options
from sekai.envs.finance._helpers import (
    GbmTerms,
    check_gbm_prices,
    extreme_gbm,
    gbm_prices,
    gbm_prices_ok,
    gbm_terms,
    gbm_values,
    simulated_prices,
)
from sekai.envs.finance._window import History
from sekai.envs.finance.vector._base import (
    HISTORY,
    SHAPE,
    TRANSACTION_COST,
    FinanceVecEnv,
    param,
    read_only,
)
from sekai.finance._located import decision_at
from sekai.finance._normals import NormalBlocks
from sekai.finance._numeric import small_matmul
from sekai.finance.sampling import draw_window_start, window_start_from_option

__all__ = ["WindowVecEnv"]

_Terms = GbmTerms
_MEMO = 4096  # start options remembered (the memo is cleared when full)


class WindowVecEnv(FinanceVecEnv):
    """The market of ``TradingVecEnv`` and ``PortfolioVecEnv`` (see the module docstring);
    ``AccountVecEnv`` adds their accounting.

    Subclasses implement ``_gbm_parameters()`` -> ``(mu, sigma, s0, corr)``.
    """

    # The period _advance_market computed and _commit_market applies: (log returns, prices
    # after, the frozen sub-envs).
    _moved: tuple[np.ndarray, np.ndarray, NDArray[np.bool_] | None]

    cost_model = param("The cost model pricing every rebalance (shared).")
    reward_fn = param("The reward function (shared; setting it stores a copy).")
    dt = param("Years per step (shared).")
    model = param("The market model simulated each episode, or None (shared).")
    capital = param("Account size in currency (shared).")
    lookback = read_only(SHAPE, "Log returns observed.")
    episode_length = read_only(SHAPE, "Decisions per episode.")
    prices = read_only(HISTORY, "The price history, or None when simulating.")
    data = read_only(HISTORY, "The MarketData of the history, or None.")
    transaction_cost = read_only(TRANSACTION_COST, "The transaction_cost argument.")

    def _start_needs_history(self) -> ValueError:
        """The single env's error for ``options['start']`` on simulated prices."""
        template: Any = self.template
        return ValueError(template._needs_history("options['start']"))

    def _allocate_state(self) -> None:
        super()._allocate_state()
        template: Any = self.template
        n_envs = self.num_envs
        self._lookback: int = template.lookback
        self._length: int = template.episode_length
        self._window = self._lookback + self._length + 1
        self._history: History | None = template._history
        self._width: int = self._n_columns()
        self._rows = np.arange(n_envs)
        self._t = np.zeros(n_envs, dtype=np.int64)
        self._equity = np.ones(n_envs)
        self._start = np.zeros(n_envs, dtype=np.int64)
        self._price = np.ones((n_envs, self._width))
        self._from_model = np.zeros(n_envs, dtype=bool)
        self._any_from_model = False  # self._from_model.any(), kept for the step
        # (window, num_envs, n), time-major so a step writes one contiguous block; simulated
        # sources only (a history is read in place).
        self._path: np.ndarray | None = None
        self._capacity = 2 * self._lookback + 32
        self._returns = np.zeros((n_envs, self._capacity, self._width), dtype=np.float32)
        self._head = self._lookback
        self._synced = False  # True while every sub-env is at the same step
        self._gbm_key: tuple[Any, ...] | None = None
        self._gbm: _Terms | None = None
        # The GBM terms each sub-env's episode simulates with: those of its reset, as a
        # SyncVecEnv sub-env draws its whole path at reset (later set_attr waits for the next),
        # and the parameters they came from (_gbm_key's), which a failure names.
        self._episode_terms: list[_Terms] = []
        self._episode_keys: list[tuple[Any, ...]] = []
        self._episode_gen = np.zeros(n_envs, dtype=np.intp)  # index into _episode_terms
        self._episode_rows: tuple[np.ndarray, np.ndarray] = (np.empty(0), np.empty(0))
        self._tiled_from: _Terms | None = None  # the terms _episode_rows were tiled from
        self._starts: dict[tuple[type, Any], int] = {}  # options["start"] -> window start
        self._normals = NormalBlocks()
        self._draws: np.ndarray | None = None  # normals of the reset windows (scratch)

    def _n_columns(self) -> int:
        raise NotImplementedError

    def _gbm_parameters(self) -> tuple[Any, Any, Any, Any]:
        """``(mu, sigma, s0, corr)`` of the built-in GBM, read from the template."""
        raise NotImplementedError

    # -- state ------------------------------------------------------------------------------

    @property
    def equity(self) -> np.ndarray:
        """Account value of every sub-env relative to its episode start."""
        result: np.ndarray = self._equity.copy()
        return result

    @property
    def elapsed_steps(self) -> np.ndarray:
        """Steps taken in every sub-env's current episode."""
        result: np.ndarray = self._t.copy()
        return result

    @property
    def timestamp(self) -> np.ndarray:
        """Time of every sub-env's current decision (as in ``info["timestamp"]``)."""
        self._require_episode("timestamp")
        return self._timestamps(self._t.copy())

    @property
    def price_history(self) -> np.ndarray:
        """Object array: every sub-env's prices so far (lookback included)."""
        self._require_episode("price_history")
        out = np.empty(self.num_envs, dtype=object)
        for k in range(self.num_envs):
            end = self._lookback + int(self._t[k]) + 1
            if self._history is not None:
                start = int(self._start[k])
                rows = self._history.prices[start : start + end]
            else:
                assert self._path is not None
                rows = self._path[:end, k]
            out[k] = self._squeeze(rows.copy())
        return out

    def _squeeze(self, rows: np.ndarray) -> np.ndarray:
        return rows

    def _timestamps(self, t: np.ndarray) -> np.ndarray:
        """Timestamps of decision indices ``t`` (simulated: ``t`` itself, not copied)."""
        if self._history is None:
            return t
        result: np.ndarray = self._history.timestamps[self._start + self._lookback + t]
        return result

    def _decision(self, index: int) -> str:
        """Where sub-env ``index``'s current decision is (for an error): its data row and
        timestamp, or its step."""
        t, history = int(self._t[index]), self._history
        if history is None:
            return decision_at(None, t, index)
        row = int(self._start[index]) + self._lookback + t
        return decision_at(row, history.timestamps[row], index)

    def _reset_timestamps(self, indices: NDArray[np.intp]) -> np.ndarray:
        """Timestamps of the first decisions of the sub-envs just reset."""
        if self._history is None:
            return np.zeros(len(indices), dtype=np.int64)
        return self._history.timestamps[self._start[indices] + self._lookback]

    # -- the market ---------------------------------------------------------------------------

    def _gbm_terms(self) -> _Terms:
        """Per-step drift and volatility, volatility-scaled Cholesky factor (transposed) or
        None without correlations, and log s0, of the current parameters; cached (the same
        tuple) while they stay the same."""
        mu, sigma, s0, corr = self._gbm_parameters()
        dt = self.template.dt  # type: ignore[attr-defined]
        key = (mu, sigma, s0, corr, dt)
        cached = self._gbm_key
        if cached is None or not all(a is b for a, b in zip(cached, key)):
            self._gbm = gbm_terms(mu, sigma, s0, corr, dt, self._width)
            self._gbm_key = key
        assert self._gbm is not None
        return self._gbm

    def _latch_gbm(self, indices: NDArray[np.intp], terms: _Terms) -> None:
        """Sub-envs ``indices`` start episodes with ``terms``, the current GBM terms."""
        generations, key = self._episode_terms, self._gbm_key
        if not generations or generations[-1] is not terms:
            assert key is not None  # set with terms by _gbm_terms()
            generations.append(terms)
            self._episode_keys.append(key)
        self._episode_gen[indices] = len(generations) - 1
        if len(generations) > 1:  # forget the terms no episode simulates with any more
            used = np.unique(self._episode_gen)
            if len(used) < len(generations):
                self._episode_terms = [generations[g] for g in used.tolist()]
                self._episode_keys = [self._episode_keys[g] for g in used.tolist()]
                self._episode_gen = np.searchsorted(used, self._episode_gen)
        if len(self._episode_terms) == 1 and self._tiled_from is not terms:  # tiled once per terms
            # Drift and volatility repeated for every sub-env: adding a (num_envs, n) array of
            # the same shape runs one NumPy loop instead of one per short row.
            drift, vol = terms[0], terms[1]
            self._episode_rows = (
                np.tile(drift, (self.num_envs, 1)),
                np.tile(vol, (self.num_envs, 1)),
            )
            self._tiled_from = terms

    @staticmethod
    def _increments(
        z: np.ndarray, terms: _Terms, drift: Any = None, vol: Any = None, out: Any = None
    ) -> Any:
        """Standard normals ``z`` ``(..., n)`` made log-price increments with ``terms``, in
        ``out`` (C-contiguous, ``z``'s shape) or else in ``z`` or a new array."""
        chol_t = terms[2]
        if chol_t is None:
            z = np.multiply(z, terms[1] if vol is None else vol, out=z if out is None else out)
        else:
            # One 2-D product: a stacked (k, lookback, n) @ (n, n) runs one small product per row.
            shape = z.shape
            flat = z.reshape(-1, shape[-1])
            product = small_matmul(flat, chol_t, None if out is None else out.reshape(flat.shape))
            z = product.reshape(shape)
        z += terms[0] if drift is None else drift
        return z

    def _step_increments(self) -> np.ndarray:
        """One step of every sub-env's log-price increments, each with its episode's terms."""
        z = self._normals.draw(self.rng, (self.num_envs, self._width))
        generations = self._episode_terms
        if len(generations) == 1:
            drift, vol = self._episode_rows
            result: np.ndarray = self._increments(z, generations[0], drift, vol)
            return result
        for g, terms in enumerate(generations):
            rows = np.flatnonzero(self._episode_gen == g)
            z[rows] = self._increments(z[rows], terms)
        return z

    def _decision_index(self) -> Any:
        """Window row of every sub-env's decision, clamped inside the window (frozen ones).

        An ``int`` while every sub-env is at the same step (``self._synced``: all were reset
        together and none froze), which turns per-sub-env gathers into slices.
        """
        if self._synced:
            return self._lookback + min(int(self._t[0]), self._length - 1)
        if self.autoreset and self._awaiting is None:  # every sub-env is inside its window
            return self._t + self._lookback
        return self._lookback + np.minimum(self._t, self._length - 1)

    def _advance_market(
        self, frozen: NDArray[np.bool_] | None
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """One period of every sub-env's market: ``(r, price_before, price_after)``, ``(N, n)``.

        Also records simulated prices (in the path's next row, which nothing reads before the
        step is booked); ``_commit_market()`` then moves the market: once the step is known to
        succeed (``AccountVecEnv._settle``), so that a failed step changes nothing.
        """
        index = self._decision_index()
        history = self._history
        if history is not None:
            row = self._start + index
            before = history.prices[row]
            after = history.prices[row + 1]
            log_returns = history.log_returns[row]
            r = after / before - 1.0
        elif self._any_from_model:
            r, before, after, log_returns = self._advance_paths(index, frozen)
        else:  # the built-in GBM, simulated online
            before = self._price
            log_returns = self._step_increments()
            growth = np.exp(log_returns)
            after = before * growth
            r = growth - 1.0
            assert self._path is not None
            if frozen is None:
                self._check_step_prices(after, None)  # before any state changes
                if isinstance(index, int):
                    self._path[index + 1] = after
                else:
                    self._path[index + 1, self._rows] = after
            else:
                moving = np.flatnonzero(~frozen)
                moved = after[moving]
                self._check_step_prices(moved, moving)
                column = index if isinstance(index, int) else index[moving]
                self._path[column + 1, moving] = moved
        self._moved = (log_returns, after, frozen)
        return r, before, after

    def _commit_market(self) -> None:
        """Move the market by the period ``_advance_market`` computed: its log returns go into
        the rolling buffer and ``self._price`` becomes the new price (frozen sub-envs keep
        theirs)."""
        log_returns, after, frozen = self._moved
        self._push_returns(log_returns)
        self._price = after if frozen is None else np.where(frozen[:, None], self._price, after)

    def _advance_paths(
        self, index: np.ndarray, frozen: NDArray[np.bool_] | None
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """The step of sub-envs replaying ``model`` paths (others simulated online)."""
        assert self._path is not None
        from_model = self._from_model
        before = self._path[index, self._rows]
        after = self._path[index + 1, self._rows]
        if not from_model.all():
            online = self._price * np.exp(self._step_increments())
            after = np.where(from_model[:, None], after, online)
            before = np.where(from_model[:, None], before, self._price)
            moving = np.flatnonzero(~from_model if frozen is None else ~from_model & ~frozen)
            moved = after[moving]
            self._check_step_prices(moved, moving)
            column = index if isinstance(index, int) else index[moving]
            self._path[column + 1, moving] = moved
        with np.errstate(divide="ignore"):
            log_returns = np.log(after / before)
        return after / before - 1.0, before, after, log_returns

    def _check_step_prices(self, prices: np.ndarray, rows: NDArray[np.intp] | None) -> None:
        """Refuse a step whose simulated prices (of the sub-envs ``rows``; None: all) left
        float64's range, naming the parameters the first such sub-env's episode simulates
        with; those sub-envs wait for ``reset()``."""
        if gbm_prices_ok(prices):
            return
        failed = np.flatnonzero(~((prices > 0.0) & (prices < np.inf)).all(axis=1))
        if rows is not None:
            failed = rows[failed]
        self.await_reset(failed)
        mu, sigma, _, _, dt = self._episode_keys[self._episode_gen[failed[0]]]
        values = gbm_values(mu, sigma, dt)
        raise extreme_gbm(type(self).__name__, "simulated a price", self._window - 1, values)

    def _push_returns(self, log_returns: np.ndarray) -> None:
        head = self._head
        if head == self._capacity:
            lookback = self._lookback
            self._returns[:, :lookback] = self._returns[:, head - lookback : head]
            head = lookback
        self._returns[:, head] = log_returns
        self._head = head + 1

    def _return_window(self) -> np.ndarray:
        """``(N, lookback, n)`` view of every sub-env's observed log returns."""
        return self._returns[:, self._head - self._lookback : self._head]

    def _advance_clock(self, frozen: NDArray[np.bool_] | None) -> np.ndarray:
        t = self._t + 1
        if frozen is not None:
            t = np.where(frozen, self._t, t)
            self._synced = False
        self._t = t
        return t

    # -- reset -----------------------------------------------------------------------------------

    def _reset_market(
        self, indices: NDArray[np.intp], options: Sequence[dict[str, Any] | None]
    ) -> None:
        """Pick windows (history) or start paths (simulation) for ``indices``."""
        # An autoreset passes no options: skip checking a thousand Nones one by one.
        no_options = options.count(None) == len(options)
        parsed = (
            [{}] * len(options) if no_options else self.parse_reset_options(options, ("start",))
        )
        lookback = self._lookback
        window_rows = slice(self._head - lookback, self._head)
        history = self._history
        if history is None:
            if not no_options and any("start" in o for o in parsed):
                raise self._start_needs_history()
            try:  # nothing is stored before the paths are checked
                self._start_paths(indices)
            except Exception:
                self.await_reset(indices)
                raise
        else:
            starts = np.empty(len(indices), dtype=np.int64)
            for j, (k, opts) in enumerate(zip(indices.tolist(), parsed)):
                if "start" in opts:
                    starts[j] = self._window_start(history, opts["start"])
                else:
                    starts[j] = draw_window_start(
                        self._lanes[k],
                        self.rng,
                        history.n_starts,
                        self._length,
                        lookback=lookback,
                        warmup=history.warmup,
                    )
            self._start = self.replace_rows(self._start, indices, starts)
            self._price = self.replace_rows(self._price, indices, history.prices[starts + lookback])
            offsets = starts[:, None] + np.arange(lookback)
            self._returns[indices, window_rows] = history.log_returns[offsets]
        self._t = self.replace_rows(self._t, indices, 0)
        self._synced = len(indices) == self.num_envs
        self._equity = self.replace_rows(self._equity, indices, 1.0)
        self.reset_reward(self.template.reward_fn, indices)  # type: ignore[attr-defined]
        self.episodes_started(indices)

    def _check_reset_options(self, index: int, options: dict[str, Any] | None) -> None:
        start = parse_options(options, ("start",)).get("start")
        if start is not None:
            if self._history is None:
                raise self._start_needs_history()
            self._window_start(self._history, start)

    def _window_start(self, history: History, start: Any) -> int:
        """The window position of ``options["start"]`` (checked against the history).

        Memoised by type and value: it depends on nothing else that can change (the history
        and the window sizes are fixed), and one start for every sub-env is checked once per
        sub-env, then read again at its reset.
        """
        try:
            key = (type(start), start)
            row = self._starts.get(key)
        except TypeError:  # unhashable: not a valid start anyway, let the check say why
            key, row = None, None
        if row is None:
            row = window_start_from_option(
                start,
                history.timestamps,
                lookback=self._lookback,
                n_starts=history.n_starts,
                warmup=history.warmup,
                data=history.data,
            )
            if key is not None:
                if len(self._starts) >= _MEMO:
                    self._starts.clear()
                self._starts[key] = row
        return row

    def _start_paths(self, indices: NDArray[np.intp]) -> None:
        """Paths (and the observed log returns) of the first ``lookback`` steps of ``indices``."""
        rows = self._rows_of(indices)
        if self._path is None:
            self._path = np.zeros((self._window, self.num_envs, self._width))
        model = self.template.model  # type: ignore[attr-defined]
        if model is not None:
            self._start_model_paths(model, indices, rows)
        else:
            self._start_gbm_paths(indices, rows)
        self._from_model = self.replace_rows(self._from_model, indices, model is not None)
        self._any_from_model = bool(self._from_model.any())
        self._price = self.replace_rows(self._price, indices, self._path[self._lookback, rows])

    def _start_model_paths(
        self, model: Any, indices: NDArray[np.intp], rows: NDArray[np.intp] | slice
    ) -> None:
        assert self._path is not None
        lookback, k = self._lookback, len(indices)
        paths = simulated_prices(
            model.simulate(self.rng, self._window - 1, n_paths=k),
            model,
            type(self).__name__,
            rows=self._window,
            n_assets=self._width,
            n_paths=k,
        )
        self._path[:, rows] = paths.transpose(1, 0, 2)
        with np.errstate(divide="ignore"):
            increments = np.log(paths[:, 1 : lookback + 1] / paths[:, :lookback])
        self._returns[rows, self._head - lookback : self._head] = increments

    def _start_gbm_paths(self, indices: NDArray[np.intp], rows: NDArray[np.intp] | slice) -> None:
        """The built-in GBM's first ``lookback`` steps, time-major as the path is (the running
        sum adds whole rows); checked before anything is stored, so that sub-envs whose reset
        fails keep their state (and episode terms) as they were."""
        assert self._path is not None
        lookback, k, width = self._lookback, len(indices), self._width
        terms = self._gbm_terms()
        if self._draws is None:  # scratch for the normals, kept: allocating it anew costs faults
            self._draws = np.empty(lookback * self.num_envs * width)
        z = self._draws[: lookback * k * width].reshape(lookback, k, width)
        self._normals.fill(self.rng, z)
        steps = self._increments(z, terms, out=np.empty((lookback, k, width)))
        prices = np.add.accumulate(steps, axis=0)  # the running sum of the increments
        s0 = np.broadcast_to(np.asarray(self._gbm_parameters()[2], np.float64), (width,))
        with np.errstate(over="ignore"):  # refused just below, naming the parameters
            gbm_prices(s0, prices, out=prices)  # the single env's prices: s0 kept when mu=sigma=0
        check_gbm_prices(prices, self, self._window - 1)
        self._latch_gbm(indices, terms)
        self._returns[rows, self._head - lookback : self._head] = steps.transpose(1, 0, 2)
        self._path[0, rows] = s0
        self._path[1 : lookback + 1, rows] = prices

    def _rows_of(self, indices: NDArray[np.intp]) -> NDArray[np.intp] | slice:
        """``indices`` as an index of the sub-env axis: a slice when it is every sub-env."""
        return slice(None) if len(indices) == self.num_envs else indices
