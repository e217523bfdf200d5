"""Same-step autoreset with a counter env that ends after k steps, on every backend."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import pytest

import sekai
from sekai.testing.envs import Drift, DriftVecEnv, KStepEnv, assert_kstep_autoreset
from sekai.vector import AsyncVecEnv, NativeVecEnv, ProcVecEnv, SyncVecEnv, VecEnv, VecWrapper
from sekai.vector.result import VecStepResult
from sekai.wrappers import TimeLimit
from sekai.wrappers.autoreset import AutoReset

KS = [1, 2, 3, 5]


class KStepVecEnv(NativeVecEnv):
    """The native twin of KStepEnv."""

    def __init__(self, ks: Sequence[int], autoreset: bool = True) -> None:
        super().__init__(
            len(ks), sekai.Box(0.0, np.inf, shape=(2,)), sekai.Discrete(2), autoreset=autoreset
        )
        self.k = np.array(ks)
        self.episode = np.full(len(ks), -1)
        self.t = np.zeros(len(ks), dtype=np.int64)

    def _reset_envs(self, indices: Any, options: Any) -> None:
        self.episode[indices] += 1
        self.t[indices] = 0

    def _reset_infos(self, indices: Any) -> dict[str, Any]:
        return {"episode": self.episode[indices].copy()}

    def _observe(self) -> np.ndarray:
        return np.stack([self.episode, self.t], axis=1).astype(np.float32)

    def _step(self, actions: Any) -> Any:
        self.t += np.where(self.frozen, 0, 1)
        return (
            self.t.astype(float),
            self.t == self.k,
            np.zeros(self.num_envs, bool),
            {"t": self.t.copy()},
        )


BACKENDS: dict[str, Callable[..., VecEnv]] = {
    "sync": lambda autoreset=True: SyncVecEnv(
        [lambda k=k: KStepEnv(k) for k in KS], autoreset=autoreset
    ),
    "async": lambda autoreset=True: AsyncVecEnv(
        [lambda k=k: KStepEnv(k) for k in KS], autoreset=autoreset
    ),
    "native": lambda autoreset=True: KStepVecEnv(KS, autoreset=autoreset),
}


@pytest.mark.parametrize("backend", list(BACKENDS))
def test_autoreset_loses_and_duplicates_no_step(backend: str) -> None:
    steps = 60
    with BACKENDS[backend]() as vec:
        assert_kstep_autoreset(vec, KS, steps)


# Two episodes of Drift (random start and noise) truncated after LIMIT steps, in every sub-env.
LIMIT = 3
DRIFT_ACTIONS = [1, 0, 1, 1, 1, 0]
DRIFT_BACKENDS: dict[str, Callable[[list[Callable[[], Any]]], VecEnv]] = {
    "sync": SyncVecEnv,
    "async": AsyncVecEnv,
    "proc": lambda fns: ProcVecEnv(fns, num_workers=1, context="fork"),
}


def _new_episode_starts(vec: VecEnv) -> list[np.ndarray]:
    """Steps ``vec`` through DRIFT_ACTIONS; the observations of the steps that end episodes."""
    starts = []
    for action in DRIFT_ACTIONS:
        result = vec.step(np.full(vec.num_envs, action))
        if result.dones.any():
            assert result.truncated.all()
            starts.append(result.observations)
    assert len(starts) == len(DRIFT_ACTIONS) // LIMIT
    return starts


@pytest.mark.parametrize("backend", list(DRIFT_BACKENDS))
def test_autoreset_continues_each_sub_envs_own_stream(backend: str) -> None:
    # A sub-env's autoreset is reset() without a seed: the stream its vector seed started goes
    # on, so each episode starts somewhere new, as the same env replayed alone does.
    n, seed = 3, 5
    with DRIFT_BACKENDS[backend]([lambda: TimeLimit(Drift(), LIMIT)] * n) as vec:
        vec.reset(seed=seed)
        starts = _new_episode_starts(vec)
    for i, child_seed in enumerate(sekai.make_seed_sequence(seed, n)):
        alone = TimeLimit(Drift(), LIMIT)
        alone.reset(seed=child_seed)
        replayed = []
        for t, action in enumerate(DRIFT_ACTIONS, 1):
            alone.step(action)
            if t % LIMIT == 0:
                replayed.append(alone.reset().observation)
        assert [s[i].tolist() for s in starts] == [r.tolist() for r in replayed]
    assert starts[0][0].tolist() != starts[1][0].tolist()


def test_native_autoreset_continues_the_envs_stream() -> None:
    # The native twin: an autoreset draws what a reset() without a seed would draw.
    with (
        DriftVecEnv(3, max_episode_steps=LIMIT) as vec,
        DriftVecEnv(3, max_episode_steps=LIMIT, autoreset=False) as manual,
    ):
        vec.reset(seed=5)
        manual.reset(seed=5)
        starts = _new_episode_starts(vec)
        replayed = []
        for t, action in enumerate(DRIFT_ACTIONS, 1):
            manual.step(np.full(3, action))
            if t % LIMIT == 0:
                replayed.append(manual.reset().observations)
    assert [s.tolist() for s in starts] == [r.tolist() for r in replayed]
    assert starts[0].tolist() != starts[1].tolist()


class _Tampered(VecWrapper):
    """A broken backend: changes every result with ``change(result)``."""

    def __init__(self, venv: VecEnv, change: Callable[[Any], VecStepResult]) -> None:
        super().__init__(venv)
        self.change = change

    def step(self, actions: Any) -> Any:
        return self.change(self.venv.step(actions))


@pytest.mark.parametrize(
    ("change", "message"),
    [
        # rewards lost on every step but the episode's last
        (
            lambda r: VecStepResult(
                r.observations,
                np.where(r.dones, r.rewards, 0.0),
                r.terminated,
                r.truncated,
                r.infos,
            ),
            r"step 0, sub-env 1 \(k=2, episode 0\): reward 0\.0",
        ),
        # the ending step also marked truncated
        (
            lambda r: VecStepResult(
                r.observations, r.rewards, r.terminated, r.terminated | r.truncated, r.infos
            ),
            r"step 0, sub-env 0 \(k=1, episode 0\): truncated",
        ),
    ],
)
def test_the_kstep_check_compares_every_step_not_only_the_ending_one(
    change: Callable[[Any], VecStepResult], message: str
) -> None:
    # Before: rewards were compared on ending steps only, and truncated never.
    with _Tampered(BACKENDS["sync"](), change) as vec, pytest.raises(AssertionError, match=message):
        assert_kstep_autoreset(vec, KS, 12)


@pytest.mark.parametrize("backend", ["sync", "async"])
def test_autoreset_wrapped_sub_env_is_not_reset_twice(backend: str) -> None:
    cls = SyncVecEnv if backend == "sync" else AsyncVecEnv
    with cls([lambda: AutoReset(KStepEnv(2))] * 2) as vec:
        vec.reset(seed=0)
        for _ in range(6):
            result = vec.step([0, 0])
        assert result.dones.tolist() == [True, True]
        info = result.infos[0]
        assert info["final_observation"].tolist() == [2, 2]
        assert "final_info" not in info["final_info"]  # reset once, by the wrapper
        assert result.observations[0].tolist() == [3, 0]
        assert [env.unwrapped.resets for env in vec.envs] == [4, 4]


@pytest.mark.parametrize("backend", ["sync", "async"])
def test_autoreset_wrapped_sub_env_never_freezes(backend: str) -> None:
    cls = SyncVecEnv if backend == "sync" else AsyncVecEnv
    with cls([lambda: AutoReset(KStepEnv(1)), lambda: KStepEnv(1)], autoreset=False) as vec:
        vec.reset(seed=0)
        first = vec.step([0, 0])
        assert first.dones.tolist() == [True, True]
        assert vec.frozen.tolist() == [False, True]
        second = vec.step([0, 0])
        assert second.rewards.tolist() == [1.0, 0.0]
        assert second.observations[0].tolist() == [2, 0]
        assert second.infos[1] == {}


@pytest.mark.parametrize("backend", ["sync", "async"])
def test_a_sub_env_truncated_by_its_time_limit_freezes_like_a_terminated_one(
    backend: str,
) -> None:
    # Without autoreset, an episode ended by truncation (a TimeLimit over a long episode)
    # freezes its sub-env as termination does: later steps repeat the ending step with reward
    # 0, after any reward wrapper, and the episode is recorded once.
    cls = SyncVecEnv if backend == "sync" else AsyncVecEnv
    venv = cls([lambda: TimeLimit(KStepEnv(10), 2)] * 2, autoreset=False)
    with sekai.VecRecordEpisodeStatistics(sekai.VecTransformReward(venv, lambda r: r + 1)) as vec:
        vec.reset(seed=0)
        results = [vec.step([0, 0]) for _ in range(4)]
        assert [r.truncated.tolist() for r in results] == [[False, False]] + [[True, True]] * 3
        assert not any(r.terminated.any() for r in results)
        assert venv.frozen.tolist() == [True, True]
        assert [r.rewards.tolist() for r in results] == [[2.0, 2.0], [3.0, 3.0]] + [[0.0, 0.0]] * 2
        assert [r.observations.tolist() for r in results[1:]] == [[[0, 2], [0, 2]]] * 3
        assert [r.infos for r in results[2:]] == [[{}, {}]] * 2
        episodes = vec.tracker.episodes
        assert [(e.episode_length, e.episode_return) for e in episodes] == [(2, 5.0)] * 2


@pytest.mark.parametrize("backend", list(BACKENDS))
def test_frozen_sub_env_that_refuses_steps_is_never_stepped(backend: str) -> None:
    with BACKENDS[backend](autoreset=False) as vec:
        vec.reset(seed=0)
        for _ in range(max(KS) + 3):
            result = vec.step(np.ones(len(KS), int))
        assert result.dones.all()
        assert result.observations[:, 1].tolist() == [float(k) for k in KS]
        assert result.rewards.tolist() == [0.0] * len(KS)


# A TimeLimit around a sub-env's AutoReset ends episodes that AutoReset does not see: the vector
# env resets (or, without autoreset, freezes) those, and only those, as an outer AutoReset does.
OUTER_LIMIT = [
    lambda: TimeLimit(AutoReset(KStepEnv(10)), 3),
    lambda: TimeLimit(AutoReset(KStepEnv(2)), 5),
]
PER_ENV: dict[str, Callable[..., VecEnv]] = {
    "sync": SyncVecEnv,
    "async": AsyncVecEnv,
    "proc": lambda fns, **kwargs: ProcVecEnv(fns, num_workers=2, context="fork", **kwargs),
}
around_autoreset = pytest.mark.filterwarnings("ignore:TimeLimit is wrapped around an AutoReset")


@around_autoreset
@pytest.mark.parametrize("backend", list(PER_ENV))
def test_an_episode_ended_outside_a_sub_envs_autoreset_is_reset_as_an_outer_autoreset_does(
    backend: str,
) -> None:
    # Sub-env 0: only the TimeLimit ends episodes (step 3). Sub-env 1: its AutoReset resets
    # each 2-step episode itself (steps 2 and 4), and the TimeLimit ends one at step 5.
    singles = [AutoReset(fn()) for fn in OUTER_LIMIT]
    with sekai.VecRecordEpisodeStatistics(PER_ENV[backend](OUTER_LIMIT)) as vec:
        vec.reset(seed=0)
        for env in singles:
            env.reset(seed=0)
        for _ in range(11):
            result = vec.step([0, 0])
            for i, env in enumerate(singles):
                alone = env.step(0)
                got = sekai.StepResult(
                    result.observations[i],
                    float(result.rewards[i]),
                    bool(result.terminated[i]),
                    bool(result.truncated[i]),
                    {k: v for k, v in result.infos[i].items() if k != "episode"},
                )
                assert got == alone
        assert vec.frozen.tolist() == [False, False]
        lengths = [(e.extra["env_index"], e.episode_length) for e in vec.tracker.episodes]
        assert lengths == [(1, 2), (0, 3), (1, 2), (1, 1), (0, 3), (1, 2), (0, 3), (1, 2), (1, 1)]


@around_autoreset
@pytest.mark.parametrize("backend", list(PER_ENV))
def test_without_autoreset_an_episode_ended_outside_a_sub_envs_autoreset_freezes_it(
    backend: str,
) -> None:
    venv = PER_ENV[backend](OUTER_LIMIT, autoreset=False)
    with sekai.VecRecordEpisodeStatistics(venv) as vec:
        vec.reset(seed=0)
        results, frozen = [], []
        for _ in range(7):
            results.append(vec.step([0, 0]))
            frozen.append(venv.frozen.tolist())
        # Sub-env 1's AutoReset resets its episodes at steps 2 and 4: not frozen there.
        assert "final_observation" in results[1].infos[1]
        assert "final_observation" in results[3].infos[1]
        assert frozen == [[False, False]] * 2 + [[True, False]] * 2 + [[True, True]] * 3
        assert [r.truncated.tolist() for r in results[2:]] == [[True, False]] * 2 + [
            [True, True]
        ] * 3
        assert [r.infos for r in results[5:]] == [[{}, {}]] * 2
        assert [r.observations.tolist() for r in results[4:]] == [[[0, 3], [2, 1]]] * 3
        lengths = [(e.extra["env_index"], e.episode_length) for e in vec.tracker.episodes]
        assert lengths == [(1, 2), (0, 3), (1, 2), (1, 1)]


@around_autoreset
def test_recv_freezes_a_sub_env_whose_episode_ended_outside_its_autoreset() -> None:
    with ProcVecEnv(OUTER_LIMIT, num_workers=2, context="fork", autoreset=False) as vec:
        vec.reset(seed=0)
        for _ in range(5):
            vec.send([0, 0])
            received = vec.recv(2)
        assert sorted(received.env_ids.tolist()) == [0, 1]
        assert vec.frozen.tolist() == [True, True]
        vec.send([0, 0])
        again = vec.recv(2)
        assert again.infos == [{}, {}]


class _FailsOnce(KStepEnv):
    """KStepEnv(10) whose step ``fail_at`` (counted over its life) raises."""

    def __init__(self, fail_at: int) -> None:
        super().__init__(10)
        self.fail_at, self.steps = fail_at, 0

    def step(self, action: Any) -> sekai.StepResult[np.ndarray]:
        self.steps += 1
        if self.steps == self.fail_at:
            raise RuntimeError("this step fails")
        return super().step(action)


@around_autoreset
@pytest.mark.parametrize("backend", list(PER_ENV))
def test_a_step_that_raises_elsewhere_freezes_a_sub_env_whose_episode_ended_outside_its_autoreset(
    backend: str,
) -> None:
    # Rule 9: sub-env 1 raises in step 3, where sub-env 0's TimeLimit ends its episode.
    fns = [OUTER_LIMIT[0], lambda: _FailsOnce(3)]
    with PER_ENV[backend](fns, autoreset=False) as vec:
        vec.reset(seed=0)
        vec.step([0, 0])
        vec.step([0, 0])
        with pytest.raises(Exception, match="this step fails"):
            vec.step([0, 0])
        assert vec.frozen.tolist() == [True, False]
        result = vec.step([0, 0])
        assert result.truncated.tolist() == [True, False]
        assert result.infos[0] == {}


class _ResetFailsOnce(KStepEnv):
    """KStepEnv(1) whose second reset (its first autoreset) raises."""

    def __init__(self) -> None:
        super().__init__(1)

    def reset(self, *, seed: Any = None, options: Any = None) -> sekai.ResetResult[np.ndarray]:
        if self.resets == 1:
            self.resets += 1
            raise RuntimeError("the feed is down")
        return super().reset(seed=seed, options=options)


@pytest.mark.parametrize("backend", list(PER_ENV))
def test_an_error_of_the_same_step_autoreset_says_so_and_names_the_sub_env(
    backend: str,
) -> None:
    # The error comes out of step(); without the note nothing says that the step itself was
    # fine, that the sub-env's episode has ended, and which sub-env is left that way.
    with PER_ENV[backend]([lambda: KStepEnv(5), _ResetFailsOnce]) as vec:
        vec.reset(seed=0)
        with pytest.raises(RuntimeError, match="the feed is down") as raised:
            vec.step([0, 0])
    note = (
        "raised by the same-step autoreset of sub-env 1: its episode ended in this step and it "
        "was not reset; call reset() before stepping it again"
    )
    if backend == "proc":  # the worker's traceback, in the message, carries it
        assert note in str(raised.value)
    else:
        assert raised.value.__notes__ == [note]
