import copy
import dataclasses
import json
import math
import pickle
import re

import numpy as np
import pytest

import sekai
from sekai.registry.spec import (
    EnvSpec,
    SpecSource,
    WrapperSpec,
    check_entry_point,
    load_entry_point,
)


class Dummy(sekai.Env):
    def __init__(self, k=1):
        self.k = k

    def reset(self, *, seed=None, options=None):
        return sekai.ResetResult(0, {})

    def step(self, action):
        return sekai.StepResult(0, 0.0, False, False, {})


SOURCE = SpecSource("classic", "sekai-classic", "0.3.0")


def test_env_spec_repr_shows_only_the_id():
    assert (
        repr(EnvSpec("CartPole-v1", "a.b:C", max_episode_steps=500)) == "EnvSpec(id='CartPole-v1')"
    )


def test_env_spec_derives_namespace_name_and_version_from_id():
    spec = EnvSpec("qc/MarketEnv-v3", "a.b:C")
    assert (spec.namespace, spec.name, spec.version) == ("qc", "MarketEnv", 3)


def test_env_spec_rejects_invalid_id():
    with pytest.raises(ValueError, match="Invalid env ID 'bad id!'"):
        EnvSpec("bad id!", "a.b:C")


def test_assigning_id_validates_it_and_derives_the_parts_again():
    spec = EnvSpec("demo/Thing-v0", "a.b:C")
    spec.id = "Other-v2"
    assert (spec.id, spec.namespace, spec.name, spec.version) == ("Other-v2", None, "Other", 2)
    with pytest.raises(ValueError) as by_init:
        EnvSpec("not a valid id!", "a.b:C")
    with pytest.raises(ValueError) as by_assignment:
        spec.id = "not a valid id!"
    assert str(by_assignment.value) == str(by_init.value)
    with pytest.raises(TypeError, match=r"^An env ID must be a str, got int\.$"):
        spec.id = 3  # type: ignore[assignment]
    assert (spec.id, spec.namespace, spec.name, spec.version) == ("Other-v2", None, "Other", 2)


def test_a_renamed_spec_copies_pickles_and_round_trips_through_json():
    spec = EnvSpec("demo/Thing-v0", "a.b:C", max_episode_steps=5)
    spec.id = "ns/Renamed-v4"
    for twin in (
        copy.copy(spec),
        copy.deepcopy(spec),
        pickle.loads(pickle.dumps(spec)),
        EnvSpec.from_json(spec.to_json()),
    ):
        assert twin == spec
        assert (twin.id, twin.namespace, twin.name, twin.version) == (
            "ns/Renamed-v4",
            "ns",
            "Renamed",
            4,
        )


def test_env_spec_rejects_entry_point_without_colon_with_the_spec_message():
    with pytest.raises(ValueError) as info:
        EnvSpec("My-v0", "nocolon")
    assert str(info.value) == "Invalid entry_point 'nocolon'. Must be 'module.path:ClassName'."


@pytest.mark.parametrize("bad", ["a b:C", "a.b:", ":C", "a..b:C", "1a:C", "a:b:c"])
def test_check_entry_point_rejects_strings_that_are_not_dotted_identifiers(bad):
    with pytest.raises(ValueError, match=re.escape("Must be 'module.path:ClassName'")):
        check_entry_point(bad)


@pytest.mark.parametrize("good", ["a:C", "pkg.mod:Cls", "pkg.mod:Cls.factory", "_p.m_2:X"])
def test_check_entry_point_accepts_dotted_module_and_attribute(good):
    check_entry_point(good)


def test_check_entry_point_rejects_objects_that_are_neither_callable_nor_string():
    with pytest.raises(
        TypeError,
        match=re.escape(
            "entry_point must be a callable or a 'module.path:ClassName' string, got int"
        ),
    ):
        check_entry_point(5)


def test_env_spec_validates_vector_entry_point_form():
    with pytest.raises(ValueError, match="Invalid vector_entry_point 'oops'"):
        EnvSpec("My-v0", Dummy, vector_entry_point="oops")


def test_env_spec_accepts_callable_entry_points():
    assert EnvSpec("My-v0", Dummy, vector_entry_point=Dummy).entry_point is Dummy


@pytest.mark.parametrize("steps", [0, -1])
def test_env_spec_rejects_non_positive_max_episode_steps(steps):
    # -1 removes the limit in make() only: a spec without a limit holds None.
    with pytest.raises(ValueError, match=rf"^max_episode_steps must be >= 1, got {steps}\.$"):
        EnvSpec("My-v0", Dummy, max_episode_steps=steps)


def test_register_keeps_a_numpy_int_limit_as_an_int():
    spec = EnvSpec("My-v0", Dummy, max_episode_steps=np.int64(5))
    assert type(spec.max_episode_steps) is int and spec.max_episode_steps == 5


def test_env_spec_normalises_additional_wrappers_to_a_tuple():
    wrapper = WrapperSpec("OrderEnforcing", "sekai.wrappers.order_enforcing:OrderEnforcing")
    assert EnvSpec("My-v0", Dummy, additional_wrappers=[wrapper]).additional_wrappers == (wrapper,)


def test_env_spec_rejects_additional_wrappers_that_are_not_wrapper_specs():
    with pytest.raises(TypeError, match="must hold WrapperSpec objects, got str"):
        EnvSpec("My-v0", Dummy, additional_wrappers=["a.b:C"])


def test_env_spec_copies_kwargs_so_later_changes_to_the_caller_dict_do_not_leak():
    kwargs = {"k": 1}
    spec = EnvSpec("My-v0", Dummy, kwargs=kwargs)
    kwargs["k"] = 2
    assert spec.kwargs == {"k": 1}


def test_wrapper_spec_repr_is_the_dataclass_repr():
    assert repr(WrapperSpec("A", "b:c")) == "WrapperSpec(name='A', entry_point='b:c', kwargs={})"


def test_wrapper_spec_equals_only_a_wrapper_spec():
    spec = WrapperSpec("A", "b:c")
    assert spec == WrapperSpec("A", "b:c") and spec != WrapperSpec("A", "b:d")
    assert (spec == ("A", "b:c", {})) is False  # not equal to its fields as a tuple
    assert spec != ("A", "b:c", {})


def test_wrapper_spec_accepts_a_class_as_entry_point():
    assert WrapperSpec("OE", sekai.OrderEnforcing).entry_point is sekai.OrderEnforcing


def test_wrapper_spec_rejects_malformed_string_entry_point():
    with pytest.raises(ValueError, match="Invalid entry_point of wrapper 'A' 'nocolon'"):
        WrapperSpec("A", "nocolon")


def test_wrapper_spec_rejects_a_name_that_is_not_a_string():
    with pytest.raises(TypeError, match=r"^WrapperSpec name must be a str, got int\.$"):
        WrapperSpec(3, "sekai.wrappers.order_enforcing:OrderEnforcing")  # type: ignore[arg-type]


def test_source_is_not_part_of_equality_json_pprint_or_repr():
    plain = EnvSpec("CartPole-v1", "a.b:C", max_episode_steps=500)
    sourced = dataclasses.replace(plain, source=SOURCE)
    assert sourced == plain
    assert sourced.source == SOURCE
    assert sourced.to_json() == plain.to_json()
    assert sourced.pprint() == plain.pprint()
    assert repr(sourced) == repr(plain)


def test_specs_with_arrays_in_their_kwargs_compare_by_value_without_raising():
    # The dataclass == compared the kwargs dicts, whose arrays raised "truth value ... ambiguous".
    def spec(prices, scale):
        wrapper = WrapperSpec("W", "sekai.wrappers.order_enforcing:OrderEnforcing", {"s": scale})
        return EnvSpec(
            "Trading-v0", "a.b:C", kwargs={"prices": prices}, additional_wrappers=(wrapper,)
        )

    prices, scale = np.linspace(1.0, 2.0, 5), np.array([np.nan, 1.0])
    original = spec(prices, scale)
    for same in (spec(prices.copy(), scale.copy()), pickle.loads(pickle.dumps(original))):
        assert same == original and original == same
    assert copy.deepcopy(original) == original
    assert original != spec(prices[:4], scale)
    assert original != spec(prices + 1.0, scale)
    assert original != spec(prices, np.array([0.0, 1.0]))
    assert original != "Trading-v0"
    for unhashable in (original, original.additional_wrappers[0]):
        with pytest.raises(TypeError, match="unhashable type"):
            hash(unhashable)


def test_replace_keeps_the_source_and_recomputes_derived_fields():
    spec = EnvSpec("ns/A-v1", "a.b:C", source=SOURCE)
    copy = dataclasses.replace(spec, kwargs={"x": 1}, max_episode_steps=3)
    assert copy.source == SOURCE
    assert (copy.namespace, copy.name, copy.version) == ("ns", "A", 1)
    assert copy.kwargs == {"x": 1} and copy.max_episode_steps == 3


def test_to_json_writes_the_spec_keys_in_order_and_string_entry_points_last():
    spec = EnvSpec(
        "ns/A-v1",
        "a.b:C",
        reward_threshold=1.5,
        max_episode_steps=10,
        kwargs={"k": 2},
        additional_wrappers=(WrapperSpec("W", "w.m:W", {"z": 1}),),
        vector_entry_point="a.b:CVec",
        kernel_entry_point="a.b:CKernel",
    )
    data = json.loads(spec.to_json())
    assert list(data) == [
        "id",
        "reward_threshold",
        "nondeterministic",
        "max_episode_steps",
        "kwargs",
        "additional_wrappers",
        "entry_point",
        "vector_entry_point",
        "kernel_entry_point",
    ]
    assert (data["entry_point"], data["vector_entry_point"], data["kernel_entry_point"]) == (
        "a.b:C",
        "a.b:CVec",
        "a.b:CKernel",
    )
    assert data["additional_wrappers"] == [
        {"name": "W", "entry_point": "w.m:W", "kwargs": {"z": 1}}
    ]
    assert spec.to_json().startswith('{\n  "id": "ns/A-v1"')


def test_to_json_leaves_callable_entry_points_out():
    spec = EnvSpec("My-v0", Dummy, vector_entry_point=Dummy, kernel_entry_point=Dummy)
    data = json.loads(spec.to_json())
    assert not {"entry_point", "vector_entry_point", "kernel_entry_point"} & data.keys()


def test_from_json_round_trips_a_string_spec():
    spec = EnvSpec(
        "ns/A-v1",
        "a.b:C",
        nondeterministic=True,
        kwargs={"k": [1, 2]},
        additional_wrappers=(WrapperSpec("W", "w.m:W", {"z": 1}),),
        vector_entry_point="a.b:CVec",
        kernel_entry_point="a.b:CKernel",
    )
    back = EnvSpec.from_json(spec.to_json())
    assert back == spec
    assert (back.entry_point, back.vector_entry_point, back.kernel_entry_point) == (
        "a.b:C",
        "a.b:CVec",
        "a.b:CKernel",
    )


def test_from_json_of_a_callable_entry_point_gives_none_which_make_reports_clearly():
    spec = EnvSpec.from_json(EnvSpec("My-v0", Dummy).to_json())
    assert spec.entry_point is None
    with pytest.raises(ValueError, match="My-v0 has no entry_point to build it from"):
        sekai.make(spec)


@pytest.mark.parametrize(
    ("document", "message"),
    [
        ('{"id": "A-v0", "max_episode_step": 5}', r"unknown keys \['max_episode_step'\]"),
        (
            '{"id": "A-v0", "additional_wrappers": [{"name": "W", "entry_point": "w:W", "kw": 1}]}',
            r"additional_wrappers\[0\] of an EnvSpec JSON document has unknown keys \['kw'\]",
        ),
        (
            '{"id": "A-v0", "additional_wrappers": [{"name": "W"}]}',
            r"additional_wrappers\[0\] .* lacks \['entry_point'\]",
        ),
        ('{"id": "A-v0", "additional_wrappers": ["W"]}', "must be an object, got str"),
        ('{"id": "A-v0", "additional_wrappers": {"W": 1}}', "must be a list, got dict"),
    ],
)
def test_from_json_refuses_keys_and_wrappers_to_json_does_not_write(document, message):
    with pytest.raises(ValueError, match=message):
        EnvSpec.from_json(document)


@pytest.mark.parametrize("value", ["[]", "0", "false", '""', "5", "[1]"])
def test_from_json_refuses_kwargs_of_another_type_falsy_or_not(value):
    name = type(json.loads(value)).__name__
    with pytest.raises(TypeError, match=rf"^kwargs must be a dict, got {name}\.$"):
        EnvSpec.from_json(f'{{"id": "A-v0", "kwargs": {value}}}')


@pytest.mark.parametrize("value", ["false", '""', "0", "{}", "5"])
def test_from_json_refuses_additional_wrappers_of_another_type_falsy_or_not(value):
    name = type(json.loads(value)).__name__
    match = rf"^'additional_wrappers' of an EnvSpec JSON document must be a list, got {name}\.$"
    with pytest.raises(ValueError, match=match):
        EnvSpec.from_json(f'{{"id": "A-v0", "additional_wrappers": {value}}}')


def test_from_json_reads_null_kwargs_and_additional_wrappers_as_none():
    spec = EnvSpec.from_json('{"id": "A-v0", "kwargs": null, "additional_wrappers": null}')
    assert spec.kwargs == {} and spec.additional_wrappers == ()


@pytest.mark.parametrize("document", ["[1]", '"A-v0"', "{}", '{"max_episode_steps": 5}'])
def test_from_json_refuses_a_document_that_is_no_object_with_an_id(document):
    text = "An EnvSpec JSON document must be an object with an 'id' key."
    with pytest.raises(ValueError, match=f"^{re.escape(text)}$"):
        EnvSpec.from_json(document)


def test_to_json_refuses_a_wrapper_with_a_callable_entry_point():
    spec = EnvSpec("My-v0", "a.b:C", additional_wrappers=(WrapperSpec("OE", sekai.OrderEnforcing),))
    with pytest.raises(ValueError, match="Wrapper 'OE' has a callable entry point"):
        spec.to_json()


def test_to_json_reports_kwargs_that_json_cannot_hold():
    match = r"The kwargs of 'My-v0' cannot be serialised to JSON: kwargs\['x'\]\[1\] is of type "
    match += "object"
    with pytest.raises(ValueError, match=match):
        EnvSpec("My-v0", "a.b:C", kwargs={"x": [1, object()]}).to_json()
    wrapper = WrapperSpec("W", "a.b:W", {"x": np.zeros(2)})
    match = r"The kwargs of wrapper 'W' cannot be serialised to JSON: kwargs\['x'\] is of type "
    match += "numpy.ndarray"
    with pytest.raises(ValueError, match=match):
        EnvSpec("My-v0", "a.b:C", additional_wrappers=[wrapper]).to_json()


@pytest.mark.parametrize(
    "kwargs",
    [
        {"n": np.int64(5), "x": np.float32(0.5), "y": np.float64(0.25), "flag": np.bool_(True)},
        {"positions": (0.0, 1.0), "nested": {"shape": (2, (3,))}, "empty": ()},
        {"list": [1, (2, 3)], "big": 1e308, "tiny": -5e-324},
        {"tagged": {"__tuple__": 5}},  # not a list: not how a tuple is written
    ],
)
def test_whatever_to_json_accepts_comes_back_equal(kwargs):
    # NumPy scalars become Python numbers (make() takes both alike); tuples stay tuples.
    wrapper = WrapperSpec("W", "w.m:W", dict(kwargs))
    spec = EnvSpec("My-v0", "a.b:C", kwargs=kwargs, additional_wrappers=[wrapper])
    assert EnvSpec.from_json(spec.to_json()) == spec


def test_from_json_gives_python_numbers_and_tuples():
    spec = EnvSpec("My-v0", "a.b:C", kwargs={"n": np.int64(5), "p": (0.0, [1.0])})
    back = EnvSpec.from_json(spec.to_json())
    assert type(back.kwargs["n"]) is int and back.kwargs["p"] == (0.0, [1.0])


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"m": {1: "a"}}, r"kwargs\['m'\] has the key 1 \(int\); JSON keys are strings"),
        ({"m": {"__tuple__": [1]}}, r"kwargs\['m'\] is a dict whose only key is '__tuple__'"),
        ({"c": np.complex128(1j)}, r"kwargs\['c'\] is of type numpy.complex128; JSON holds None"),
        ({"m": {None: 1}}, r"has the key None \(NoneType\); .* would come back as 'null'"),
        ({"m": {(1, 2): 1}}, r"has the key \(1, 2\) \(tuple\); .* would not be written"),
    ],
)
def test_to_json_refuses_what_would_come_back_changed(kwargs, message):
    with pytest.raises(ValueError, match=message):
        EnvSpec("My-v0", "a.b:C", kwargs=kwargs).to_json()


@pytest.mark.parametrize(
    ("value", "shown"),
    [
        (float("nan"), "nan"),
        (float("inf"), "inf"),
        (-math.inf, "-inf"),
        (np.float32("nan"), re.escape(repr(np.float32("nan")))),
    ],
)
def test_to_json_refuses_nan_and_infinities_naming_the_keyword(value, shown):
    # JSON has no NaN or infinity: strict parsers refuse the NaN / Infinity tokens.
    match = rf"^The kwargs of 'My-v0' cannot be serialised to JSON: kwargs\['p'\]\[1\] is {shown}; "
    match += "JSON has no NaN or infinity"
    with pytest.raises(ValueError, match=match):
        EnvSpec("My-v0", "a.b:C", kwargs={"p": (0.0, value)}).to_json()
    wrapper = WrapperSpec("W", "a.b:W", {"x": value})
    with pytest.raises(ValueError, match=r"^The kwargs of wrapper 'W' .* kwargs\['x'\] is "):
        EnvSpec("My-v0", "a.b:C", additional_wrappers=[wrapper]).to_json()


@pytest.mark.parametrize("token", ["NaN", "Infinity", "-Infinity"])
def test_from_json_refuses_the_non_finite_tokens_to_json_never_writes(token):
    text = EnvSpec("My-v0", "a.b:C", kwargs={"p": 1.5}).to_json().replace("1.5", token)
    with pytest.raises(ValueError, match=rf"^An EnvSpec JSON document holds {token}, which"):
        EnvSpec.from_json(text)


@pytest.mark.skipif(
    np.finfo(np.longdouble).max <= np.finfo(np.float64).max, reason="longdouble is float64 here"
)
def test_to_json_refuses_a_longdouble_beyond_float64():
    # float() made it inf, written as Infinity: it came back unequal
    with pytest.raises(ValueError, match=r"kwargs\['x'\] is np.longdouble\('1e\+400'\), too large"):
        EnvSpec("My-v0", "a.b:C", kwargs={"x": np.longdouble("1e400")}).to_json()


def test_a_numpy_reward_threshold_is_stored_as_a_float_and_serialises():
    spec = EnvSpec("My-v0", "a.b:C", reward_threshold=np.float32(1.5))
    assert type(spec.reward_threshold) is float
    assert json.loads(spec.to_json())["reward_threshold"] == 1.5


def test_pprint_lists_set_fields_only():
    spec = EnvSpec(
        "CartPole-v1",
        "sekai.envs.classic_control.cartpole:CartPoleEnv",
        max_episode_steps=500,
        reward_threshold=475.0,
    )
    assert spec.pprint() == (
        "id=CartPole-v1\n"
        "entry_point=sekai.envs.classic_control.cartpole:CartPoleEnv\n"
        "max_episode_steps=500\n"
        "reward_threshold=475.0"
    )


def test_pprint_shows_every_field_and_callables_by_repr():
    spec = EnvSpec(
        "demo/My-v0",
        Dummy,
        nondeterministic=True,
        kwargs={"k": 2},
        additional_wrappers=(
            WrapperSpec("OrderEnforcing", "sekai.wrappers.order_enforcing:OrderEnforcing"),
        ),
        vector_entry_point="a.b:V",
    )
    assert spec.pprint().splitlines() == [
        "id=demo/My-v0",
        f"entry_point={Dummy!r}",
        "vector_entry_point=a.b:V",
        "nondeterministic=True",
        "kwargs={'k': 2}",
        "wrapper=OrderEnforcing (sekai.wrappers.order_enforcing:OrderEnforcing) {}",
    ]


def test_spec_make_builds_the_env_without_the_registry(sekai_registry):
    env = EnvSpec("local/Thing-v0", Dummy, kwargs={"k": 3}).make(k=4)
    assert env.unwrapped.k == 4
    assert sekai_registry.host is None  # make(EnvSpec) never ran discovery


def test_load_entry_point_imports_the_module_and_walks_dotted_attributes():
    assert load_entry_point("sekai.registry.spec:EnvSpec.from_json") == EnvSpec.from_json


def test_load_entry_point_names_a_missing_attribute():
    with pytest.raises(
        AttributeError, match=re.escape("module 'sekai.registry.spec' has no attribute 'Nope'")
    ):
        load_entry_point("sekai.registry.spec:Nope")


def test_load_entry_point_names_what_is_not_a_callable():
    with pytest.raises(
        TypeError,
        match="^" + re.escape("entry_point 'math:pi' names a float, not a callable.") + "$",
    ):
        load_entry_point("math:pi")


def test_load_entry_point_propagates_import_errors():
    with pytest.raises(ModuleNotFoundError, match="sekai_no_such_module"):
        load_entry_point("sekai_no_such_module:X")
