"""A kernel's params as the drivers take them: checked when a kernel is first driven, and
changed as ``set_attr`` changes them (``replaced_params``) or as the functional API converts
values it cannot check (``converted_params``)."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping
from typing import Any

import numpy as np

from sekai._args import holds_bool
from sekai._numbers import array_kind, object_floats, refused_kind, too_large
from sekai.vector.kernel import ArrayKernel
from sekai.vector.kernel_step import is_dynamic

__all__ = [
    "checked_params",
    "converted_params",
    "field_names",
    "replaced_params",
    "settable_fields",
]


def checked_params(kernel: ArrayKernel[Any]) -> Any:
    """``kernel.params``, checked when a driver first takes the kernel (they are an instance
    attribute, set by the kernel's ``__init__``). ``read_only`` is not checked: it may name
    any attribute of the env, such as one the kernel derives its params from (a session's
    ``dt``) or a setting (``lookback``).

    Raises:
        TypeError: the params are no dataclass instance.
        ValueError: ``settable`` names what is no field of the params (a typo would leave the
            field unsettable, with no hint).
    """
    kernel_name = type(kernel).__name__
    params = getattr(kernel, "params", None)
    if not dataclasses.is_dataclass(params) or isinstance(params, type):
        raise TypeError(
            f"{kernel_name}.params must be a dataclass instance (a frozen @dataclass of the "
            f"kernel's numbers and arrays), got {type(params).__name__}."
        )
    fields = field_names(params)
    unknown = sorted(set(kernel.settable or ()) - fields)
    if unknown:
        raise ValueError(
            f"{kernel_name}.settable names {unknown}, which are no fields of "
            f"{type(params).__name__}; its fields are {sorted(fields)}."
        )
    return params


def field_names(params: Any) -> set[str]:
    """The names of the fields of ``params`` (a dataclass instance)."""
    return {field.name for field in dataclasses.fields(params)}


def settable_fields(kernel: ArrayKernel[Any], params: Any) -> set[str]:
    """The fields of ``params`` that ``set_attr`` changes: the kernel's ``settable``, else
    every field the dataclass takes in ``__init__`` (the others are derived)."""
    given = {field.name for field in dataclasses.fields(params) if field.init}
    return given if kernel.settable is None else given & kernel.settable


def replaced_params(
    params: Any,
    changes: Mapping[str, Any],
    where: str = "",
    current: Callable[[str], Any] | None = None,
) -> Any:
    """A kernel's host ``params`` with the fields ``changes`` names set as ``set_attr`` sets
    them: checked by the params' dataclass (as the env checks them), an int for a float field
    as a float, and one number for a per-element field broadcast, as the env's constructor
    does; an array of another library (JAX, torch) is held as its NumPy array (a tensor that
    requires grad as its value: gradients do not flow into an env's parameters). ``where``
    starts the message of the errors raised here (the call the values came from), and
    ``current`` gives a field's value as the env reports it (``get_attr``; None: a 0-d array
    as its number), for them.

    Raises:
        TypeError: a value of another kind or shape than the field's.
        ValueError: a value the env refuses (the dataclass's own errors), or a number too
            large for a float64 (an int, a Decimal) for a float field that the dataclass takes.
    """
    # A tensor's value before anything reads it: the dataclass's checks convert it, which
    # torch refuses for one that requires grad.
    changes = {name: _detached(value) for name, value in changes.items()}
    given = dict(changes)
    huge: dict[str, object] = {}  # the ints no float64 holds, by field
    for name, value in changes.items():
        if (
            is_dynamic(getattr(params, name))
            and isinstance(value, (int, np.integer))
            and not isinstance(value, (bool, np.bool_, np.timedelta64))
        ):
            try:
                given[name] = float(value)  # an int for a float parameter, as the envs take it
            except OverflowError:  # left to the dataclass: it refuses it as the env does
                huge[name] = value
    replaced = dataclasses.replace(params, **given)
    if huge:  # a dataclass that took it: no float64 holds it
        raise _too_large(where, *next(iter(huge.items())))
    settled = {}  # what the dataclass took, as the floats a kernel runs
    for name in changes:
        old, new = getattr(params, name), getattr(replaced, name)
        if not is_dynamic(old):
            continue
        array = _real_array(new)
        if array is not None and array.dtype == object:  # Decimals, Fractions (unchecked)
            try:
                floats = object_floats(array)
            except OverflowError as error:
                raise _too_large(where, name, error.args[0]) from None
            except (TypeError, ValueError):  # no numbers: refused below
                continue
            new = settled[name] = floats if floats.ndim else float(floats)
        elif (
            array is not None
            and not isinstance(new, (np.ndarray, np.generic))
            and array_kind(new) is not None
        ):  # an array of another library (JAX, torch): held as the NumPy array it reads as,
            # so that get_attr reports what the same NumPy value gives
            new = settled[name] = array
        if is_dynamic(new) and np.ndim(new) == 0 < np.ndim(old):
            settled[name] = np.full(np.shape(old), new)  # one number for every element
    if settled:
        replaced = dataclasses.replace(params, **{**given, **settled})
    for name, value in changes.items():
        old, new = getattr(params, name), getattr(replaced, name)
        # is_dynamic() only asks for an array: a complex, bool, string or date one, or objects
        # the float cast above did not take, is no float
        array = _real_array(new) if is_dynamic(old) else None
        real = not is_dynamic(old) or (array is not None and array.dtype != object)
        if not real or is_dynamic(old) != is_dynamic(new) or np.shape(new) != np.shape(old):
            raise _kind_and_shape(params, name, value, where, current)
    return replaced


def converted_params(params: Any, changes: Mapping[str, Any], where: str = "") -> dict[str, Any]:
    """The values of ``changes`` converted as ``replaced_params`` converts them (a list as an
    array, an int for a float field as a float, one number filling a per-element field) and
    checked for kind and shape only: not by the params' dataclass, whose rules may relate these
    fields to others whose values are unknown here (traced by ``jit``). A value of another kind
    or shape is refused as ``replaced_params`` refuses it: by the dataclass's own error for that
    field where it has one (the env's ``ValueError`` for a string, None or a bool).

    Raises:
        TypeError: a value that is not real numbers of the field's shape, which the dataclass
            takes.
        ValueError: a value the dataclass refuses, or an int too large for a float64.
    """
    converted = {}
    for name, value in changes.items():
        old = getattr(params, name)
        array = _real_array(value) if is_dynamic(old) else None
        if array is not None and array.ndim == 0 and np.ndim(old) == 1:
            array = np.full(np.shape(old), array)  # one number for every asset
        if array is None or array.shape != np.shape(old):
            raise _refused(params, name, value, where, _is_numbers(value))
        if array.dtype == object:
            try:
                array = object_floats(array)
            except OverflowError as error:
                raise _too_large(where, name, error.args[0]) from None
            except (TypeError, ValueError):  # objects no float cast takes (dates)
                raise _refused(params, name, value, where, numbers=False) from None
        array = array.astype(np.asarray(old).dtype)
        converted[name] = array if np.ndim(old) else array[()]
    return converted


def _refused(params: Any, name: str, value: Any, where: str, numbers: bool) -> Exception:
    """The error for ``value``, of another kind or shape than field ``name``: for a value that
    is not real ``numbers`` (a string, None, a bool, a date), the dataclass's own error, as an
    eager call gets it from ``replaced_params`` (it may name the env's argument:
    ``fill_intensity`` for ``A``); else the kind-and-shape ``TypeError``. Only on this failure
    path does the dataclass see the other fields' host values (the traced ones' values are
    unknown); they are checked values, so its error is about ``value``. Real numbers of another
    shape, which a check relating fields could blame on another one (Trading-v0's ``s0`` and
    ``mu``), never reach it."""
    if not numbers:
        try:
            dataclasses.replace(params, **{name: value})
        except (TypeError, ValueError) as error:
            return error
    return _kind_and_shape(params, name, value, where)


def _is_numbers(value: Any) -> bool:
    """Whether ``value`` is real numbers (of any shape): objects only if their float cast takes
    them (a date is no number; a Decimal beyond float64 is one, too large)."""
    array = _real_array(value)
    if array is None or array.dtype != object:
        return array is not None
    try:
        object_floats(array)
    except OverflowError:
        return True
    except (TypeError, ValueError):
        return False
    return True


def _too_large(where: str, name: str, number: object) -> ValueError:
    return ValueError(
        f"{where}kernel parameter {name!r} must be a finite number, got {too_large(number)}."
    )


def _kind_and_shape(
    params: Any, name: str, value: Any, where: str, current: Callable[[str], Any] | None = None
) -> TypeError:
    if current is None:  # ArrayKernel.host_param's default: a 0-d array as its number
        held = getattr(params, name)
        shown = held.item() if isinstance(held, np.ndarray) and held.ndim == 0 else held
    else:
        shown = current(name)
    return TypeError(
        f"{where}kernel parameter {name!r} is {shown!r}; a new value must be of the same kind "
        f"and shape, got {value!r}."
    )


def _detached(value: Any) -> Any:
    """A torch tensor that may require grad as its value (``detach()``); anything else as it
    is."""
    detach = getattr(value, "detach", None)
    return detach() if callable(detach) else value


def _real_array(value: Any) -> np.ndarray | None:
    """``value`` as an array of real numbers (bools, strings, dates and None are not, nor
    arrays holding them), or None. Kinds NumPy does not know (bfloat16) come as float64, and
    Python's other real numbers (a Decimal, an int beyond int64) as an object array for the
    caller to cast (``object_floats``)."""
    if value is None or isinstance(value, (str, bytes)) or holds_bool(value):
        return None
    try:
        array = np.asarray(_detached(value))
    except (TypeError, ValueError, RuntimeError):
        return None
    kind = array.dtype.kind
    if kind in "iuf":
        return array
    if kind == "V" and np.can_cast(array.dtype, np.float64):
        return array.astype(np.float64)
    if kind == "O" and refused_kind(array) is None:
        return array
    return None
