"""VecResetResult / VecStepResult: frozen, not iterable, dtypes, and lazily built infos."""

from __future__ import annotations

import dataclasses
import pickle

import numpy as np
import pytest

import sekai
from sekai.vector.infos import ArrayInfos
from sekai.vector.result import VecResetResult, VecStepResult, info_at


def _step_result(infos: object = None) -> VecStepResult[np.ndarray]:
    return VecStepResult(
        np.zeros((2, 3), np.float32),
        np.array([1.0, 2.0]),
        np.array([True, False]),
        np.array([False, True]),
        [{}, {"a": 1}] if infos is None else infos,  # type: ignore[arg-type]
    )


def test_vec_step_result_fields_cannot_be_assigned() -> None:
    result = _step_result()
    with pytest.raises(dataclasses.FrozenInstanceError):
        result.rewards = np.zeros(2)  # type: ignore[misc]
    with pytest.raises(dataclasses.FrozenInstanceError):
        result.infos = []  # type: ignore[misc]


def test_vec_results_build_through_a_subscripted_alias() -> None:
    from sekai.vector.result import VecRecvResult

    reset = VecResetResult[np.ndarray](np.zeros((2, 1)), [{}, {}])
    recv = VecRecvResult[np.ndarray](
        np.zeros((1, 1)),
        np.zeros(1),
        np.zeros(1, bool),
        np.zeros(1, bool),
        [{}],
        np.zeros(1, np.intp),
    )
    assert reset.infos == [{}, {}]
    assert recv.env_ids.tolist() == [0]
    with pytest.raises(dataclasses.FrozenInstanceError, match="cannot assign to field 'extra'"):
        recv.extra = 1  # type: ignore[attr-defined]


def test_vec_results_are_not_iterable() -> None:
    with pytest.raises(TypeError, match="cannot unpack non-iterable VecStepResult object"):
        _obs, _rewards, _te, _tr, _infos = _step_result()  # type: ignore[misc]
    with pytest.raises(TypeError):
        _obs, _infos = VecResetResult(np.zeros((2, 1)), [{}, {}])  # type: ignore[misc]


def test_vec_step_result_dones_is_terminated_or_truncated() -> None:
    assert _step_result().dones.tolist() == [True, True]
    result = dataclasses.replace(_step_result(), truncated=np.array([False, False]))
    assert result.dones.tolist() == [True, False]


def test_vec_reset_result_dones_are_all_false() -> None:
    dones = VecResetResult(np.zeros((3, 1)), [{}, {}, {}]).dones
    assert dones.dtype == bool and dones.tolist() == [False, False, False]


def test_vec_results_compare_array_observations_without_raising() -> None:
    assert _step_result() == _step_result()
    other = dataclasses.replace(_step_result(), observations=np.ones((2, 3), np.float32))
    assert _step_result() != other


def test_vec_step_result_pickles_with_built_infos() -> None:
    result = VecStepResult(
        np.zeros((2, 1)),
        np.zeros(2),
        np.zeros(2, bool),
        np.zeros(2, bool),
        ArrayInfos(2, {"k": np.array([1, 2])}),  # type: ignore[arg-type]
    )
    clone = pickle.loads(pickle.dumps(result))
    assert clone.infos == [{"k": 1}, {"k": 2}]
    assert type(clone.infos) is list


def test_lazy_infos_read_as_a_list_of_distinct_dicts() -> None:
    lazy = ArrayInfos(3, {"x": np.array([1.5, 2.5, 3.5])})
    result = VecResetResult(np.zeros((3, 1)), lazy)  # type: ignore[arg-type]
    infos = result.infos
    assert type(infos) is list
    assert all(type(info) is dict for info in infos)
    assert infos == [{"x": 1.5}, {"x": 2.5}, {"x": 3.5}]
    assert len({id(info) for info in infos}) == 3
    assert result.infos is infos  # built once


def test_a_recv_result_reads_lazy_infos_as_a_list() -> None:
    """VecRecvResult inherits the lazy ``infos`` of VecStepResult on every Python (3.10's
    ``slots=True`` gives a subclass its own slot for each inherited field)."""
    from sekai.vector.result import VecRecvResult

    lazy = ArrayInfos(2, {"x": np.array([1, 2])})
    rows = (np.zeros((2, 1)), np.zeros(2), np.zeros(2, bool), np.zeros(2, bool))
    result = VecRecvResult(*rows, lazy, np.array([3, 0], np.intp))  # type: ignore[arg-type]
    info_at(result, 1)["tag"] = "w"
    infos = result.infos
    assert type(infos) is list
    assert infos == [{"x": 1}, {"x": 2, "tag": "w"}]
    assert result.infos is infos  # built once
    assert result._replace(env_ids=np.array([0, 1], np.intp)).infos is infos


def test_lazy_empty_infos_are_distinct_dicts() -> None:
    result = VecResetResult(np.zeros((4, 1)), ArrayInfos(4, {}))  # type: ignore[arg-type]
    infos = result.infos
    assert infos == [{}, {}, {}, {}]
    assert len({id(info) for info in infos}) == 4


def test_info_at_builds_one_dict_that_the_list_then_holds() -> None:
    lazy = ArrayInfos(3, {"x": np.array([1, 2, 3])})
    result = VecResetResult(np.zeros((3, 1)), lazy)  # type: ignore[arg-type]
    first = info_at(result, 1)
    first["extra"] = True
    assert result.infos[1] is first
    assert result.infos[1] == {"x": 2, "extra": True}
    assert info_at(result, 1) is first  # after the build too


def test_replace_keeps_infos_lazy_and_shared() -> None:
    lazy = ArrayInfos(2, {"x": np.array([1, 2])})
    inner = VecResetResult(np.zeros((2, 1)), lazy)  # type: ignore[arg-type]
    outer = inner._replace(observations=np.ones((2, 1)))
    info_at(outer, 0)["tag"] = "w"
    assert outer.infos is inner.infos
    assert inner.infos[0] == {"x": 1, "tag": "w"}


def test_vec_results_are_exported_from_sekai() -> None:
    assert sekai.VecStepResult is VecStepResult
    assert sekai.VecResetResult is VecResetResult
