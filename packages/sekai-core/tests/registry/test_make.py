import re
import sys
import textwrap
import threading
from typing import ClassVar

import pytest

import sekai
from sekai.registry import EnvSpec, WrapperSpec
from sekai.testing.envs import LineEnv
from sekai.vector.spawnable import Spawnable


class My(sekai.Env):
    def __init__(self, k=1, extra=None):
        self.k = k
        self.extra = extra
        self.t = 0

    def reset(self, *, seed=None, options=None):
        self.t = 0
        return sekai.ResetResult(0, {})

    def step(self, action):
        self.t += 1
        return sekai.StepResult(self.t, 1.0, False, False, {})


ORDER = WrapperSpec("OrderEnforcing", "sekai.wrappers.order_enforcing:OrderEnforcing")


@pytest.fixture
def my_env(sekai_registry):
    sekai.register(
        "demo/My-v0", My, kwargs={"k": 2}, max_episode_steps=10, additional_wrappers=(ORDER,)
    )
    return sekai_registry


def test_make_applies_time_limit_then_additional_wrappers_as_the_spec_example(my_env):
    env = sekai.make("demo/My-v0", k=5)
    assert str(env) == "<OrderEnforcing(<TimeLimit(<demo/My-v0>)>)>"
    assert env.unwrapped.k == 5


def test_make_with_minus_one_removes_the_time_limit(my_env):
    assert str(sekai.make("demo/My-v0", max_episode_steps=-1)) == "<OrderEnforcing(<demo/My-v0>)>"


def test_make_with_an_int_overrides_the_registered_limit(my_env):
    env = sekai.make("demo/My-v0", max_episode_steps=2)
    env.reset()
    env.step(0)
    assert env.step(0).truncated
    assert env.spec.max_episode_steps == 2


@pytest.mark.parametrize("steps", [0, -2])
def test_make_rejects_limits_below_one_other_than_minus_one(my_env, steps):
    with pytest.raises(ValueError, match="max_episode_steps must be >= 1, or -1"):
        sekai.make("demo/My-v0", max_episode_steps=steps)


def test_make_rejects_non_integer_limits(my_env):
    with pytest.raises(TypeError, match="max_episode_steps must be an int or None, got float"):
        sekai.make("demo/My-v0", max_episode_steps=2.5)


@pytest.mark.parametrize(("steps", "kind"), [(1.5, "float"), ("10", "str"), (True, "bool")])
def test_register_and_make_refuse_a_limit_of_another_type_alike(my_env, steps, kind):
    # One check for both: a wrong type is the same TypeError whichever names the limit.
    message = rf"^max_episode_steps must be an int or None, got {kind}\.$"
    with pytest.raises(TypeError, match=message):
        sekai.register("demo/Other-v0", My, max_episode_steps=steps)
    with pytest.raises(TypeError, match=message):
        sekai.make("demo/My-v0", max_episode_steps=steps)


def test_make_sets_a_spec_describing_this_exact_env(my_env):
    env = sekai.make("demo/My-v0", k=5, extra="x", max_episode_steps=-1)
    assert env.spec.kwargs == {"k": 5, "extra": "x"}
    assert env.spec.max_episode_steps is None
    registered = sekai.spec("demo/My-v0")
    assert registered.kwargs == {"k": 2} and registered.max_episode_steps == 10
    rebuilt = env.spec.make()
    assert str(rebuilt) == "<OrderEnforcing(<demo/My-v0>)>"
    assert (rebuilt.unwrapped.k, rebuilt.unwrapped.extra) == (5, "x")


def test_make_spec_equals_the_registry_entry_when_nothing_is_overridden(my_env):
    assert sekai.make("demo/My-v0").spec == sekai.spec("demo/My-v0")


def test_quickstart_make_prints_time_limit_around_the_env(sekai_registry):
    sekai.register("CartPole-v1", My, max_episode_steps=500)
    assert str(sekai.make("CartPole-v1")) == "<TimeLimit(<CartPole-v1>)>"


def test_make_without_limit_returns_the_bare_env(sekai_registry):
    sekai.register("Bare-v0", My)
    env = sekai.make("Bare-v0")
    assert type(env) is My and str(env) == "<Bare-v0>"


def test_make_of_an_unknown_id_raises_env_not_found(sekai_registry):
    with pytest.raises(
        sekai.EnvNotFound, match=re.escape("Environment 'Nope-v0' not found in registry.")
    ):
        sekai.make("Nope-v0")


def test_string_entry_point_is_imported_by_make_not_by_register(
    sekai_registry, tmp_path, monkeypatch
):
    module = "sekai_lazy_test_env_mod"
    (tmp_path / f"{module}.py").write_text(
        textwrap.dedent(
            """
            import sekai

            class Lazy(sekai.Env):
                def __init__(self, size=3):
                    self.size = size

                def reset(self, *, seed=None, options=None):
                    return sekai.ResetResult(0, {})

                def step(self, action):
                    return sekai.StepResult(0, 0.0, False, False, {})
            """
        )
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delitem(sys.modules, module, raising=False)
    sekai.register("lazy/Lazy-v0", f"{module}:Lazy", kwargs={"size": 4})
    assert module not in sys.modules
    env = sekai.make("lazy/Lazy-v0")
    assert module in sys.modules
    assert env.size == 4


def test_make_propagates_the_import_error_of_a_missing_module(sekai_registry):
    sekai.register("gone/Env-v0", "sekai_module_that_does_not_exist:Env")
    with pytest.raises(ModuleNotFoundError, match="sekai_module_that_does_not_exist"):
        sekai.make("gone/Env-v0")


def test_make_applies_wrapper_specs_with_callable_entry_points_and_kwargs(sekai_registry):
    sekai.register(
        "w/My-v0",
        My,
        additional_wrappers=(
            WrapperSpec("OE", sekai.OrderEnforcing),
            WrapperSpec("TL", sekai.TimeLimit, {"max_episode_steps": 3}),
        ),
    )
    env = sekai.make("w/My-v0")
    assert str(env) == "<TimeLimit(<OrderEnforcing(<w/My-v0>)>)>"
    assert env.max_episode_steps == 3


def test_make_of_an_unregistered_spec_builds_it_without_discovery(sekai_registry):
    env = sekai.make(EnvSpec("local/My-v0", My, kwargs={"k": 7}, max_episode_steps=4))
    assert str(env) == "<TimeLimit(<local/My-v0>)>"
    assert env.unwrapped.k == 7
    assert sekai_registry.host is None


def test_make_names_the_env_when_its_kwargs_do_not_fit_the_entry_point(sekai_registry):
    sekai.register("bad/My-v0", My, kwargs={"k": 2})
    with pytest.raises(TypeError) as caught:
        sekai.make("bad/My-v0", nope=1)
    assert str(caught.value) == (
        "bad/My-v0: its entry point My does not take the keyword argument 'nope' "
        "(given: k, nope): My.__init__() got an unexpected keyword argument 'nope'"
    )
    sekai.register("bad/Wrapped-v0", My, additional_wrappers=[WrapperSpec("TL", sekai.TimeLimit)])
    with pytest.raises(TypeError) as caught:
        sekai.make("bad/Wrapped-v0")
    assert str(caught.value) == (
        "bad/Wrapped-v0: its wrapper 'TL' is missing the required argument 'max_episode_steps' "
        "(given: none): TimeLimit.__init__() missing 1 required positional argument: "
        "'max_episode_steps'"
    )


class Sized(My):
    def __init__(self, size, depth=1):
        super().__init__()


class SizedWithOptions(My):
    def __init__(self, size, *, shape, **options):
        super().__init__()


@pytest.mark.parametrize(
    ("entry_point", "kwargs", "message"),
    [
        (
            Sized,
            {},
            "its entry point Sized is missing the required argument 'size' (given: none): "
            "Sized.__init__() missing 1 required positional argument: 'size'",
        ),
        (
            Sized,
            {"depth": 2},
            "its entry point Sized is missing the required argument 'size' (given: depth): "
            "Sized.__init__() missing 1 required positional argument: 'size'",
        ),
        (
            SizedWithOptions,
            {"colour": "red"},
            "its entry point SizedWithOptions is missing the required arguments 'size', "
            "'shape' (given: colour): SizedWithOptions.__init__() missing 1 required "
            "positional argument: 'size'",
        ),
        (
            SizedWithOptions,
            {"size": 3, "colour": "red"},
            "its entry point SizedWithOptions is missing the required argument 'shape' (given: "
            "size, colour): SizedWithOptions.__init__() missing 1 required keyword-only "
            "argument: 'shape'",
        ),
    ],
    ids=["nothing-given", "others-given", "kwargs-taken", "keyword-only"],
)
def test_make_names_the_required_argument_the_entry_point_was_not_given(
    sekai_registry, entry_point, kwargs, message
):
    # Every keyword given is taken (by name or by **options): the missing one is the error.
    sekai.register("bad/Sized-v0", entry_point)
    with pytest.raises(TypeError) as caught:
        sekai.make("bad/Sized-v0", **kwargs)
    assert str(caught.value) == f"bad/Sized-v0: {message}"


class RaisesTypeError(My):
    def __init__(self):
        raise TypeError("the env's own check")


def test_make_passes_a_constructor_s_own_errors_through(sekai_registry):
    sekai.register("bad/Own-v0", RaisesTypeError)
    with pytest.raises(TypeError, match=r"^the env's own check$"):
        sekai.make("bad/Own-v0")


class Abstract(sekai.Env):
    """Forgot to implement step(): Python refuses to build it, in C, with a TypeError."""

    def __init__(self, k=1):
        self.k = k

    def reset(self, *, seed=None, options=None):
        return sekai.ResetResult(0, {})


def test_make_passes_a_type_error_of_c_code_in_the_constructor_through(sekai_registry):
    sekai.register("bad/Abstract-v0", Abstract, kwargs={"k": 2})
    with pytest.raises(TypeError, match=r"^Can't instantiate abstract class Abstract"):
        sekai.make("bad/Abstract-v0")


class NotAnEnv:
    pass


def test_make_refuses_an_entry_point_that_does_not_build_a_sekai_env(sekai_registry):
    sekai.register("bad/Plain-v0", NotAnEnv)
    with pytest.raises(TypeError) as caught:
        sekai.make("bad/Plain-v0")
    message = str(caught.value)
    assert message.startswith("bad/Plain-v0: its entry point ")
    # Named in full: a NotAnEnv of sekai's, or gymnasium's, would not be this one.
    assert f"returned {NotAnEnv.__module__}.NotAnEnv, not a sekai.Env" in message
    assert "sekai.compat.from_gymnasium(env)" in message


class Closing(My):
    closed: ClassVar[list["Closing"]] = []

    def close(self):
        Closing.closed.append(self)


@pytest.mark.parametrize("returned", [None, 5])
def test_make_refuses_a_registered_wrapper_that_returns_no_env_and_closes_the_env(
    sekai_registry, returned
):
    def forgetful(env):
        return returned

    sekai.register(
        "bad/Forgetful-v0",
        Closing,
        additional_wrappers=[WrapperSpec("OE", sekai.OrderEnforcing), WrapperSpec("F", forgetful)],
    )
    Closing.closed.clear()
    with pytest.raises(TypeError) as caught:
        sekai.make("bad/Forgetful-v0")
    assert str(caught.value).startswith(
        f"bad/Forgetful-v0: its wrapper 'F' ({forgetful.__qualname__}) returned "
        f"{type(returned).__name__}, not a sekai.Env; a wrapper must return the env it is given"
    )
    assert len(Closing.closed) == 1


def test_register_names_kwargs_that_are_not_a_dict(sekai_registry):
    with pytest.raises(TypeError, match=r"^kwargs must be a dict, got list\.$"):
        sekai.register("bad/My-v0", My, kwargs=[1, 2])
    with pytest.raises(sekai.EnvNotFound):
        sekai.spec("bad/My-v0")


@pytest.mark.parametrize("key", [1, None])
def test_register_and_env_spec_name_a_kwargs_key_that_is_not_a_str(sekai_registry, key):
    message = (
        f"kwargs must have str keys (keyword argument names), got the key {key!r} "
        f"({type(key).__name__})."
    )
    with pytest.raises(TypeError, match=f"^{re.escape(message)}$"):
        sekai.register("bad/My-v0", My, kwargs={"k": 2, key: 2})
    with pytest.raises(sekai.EnvNotFound):
        sekai.spec("bad/My-v0")
    with pytest.raises(TypeError, match=f"^{re.escape(message)}$"):
        EnvSpec("bad/My-v0", My, kwargs={key: 2})
    with pytest.raises(TypeError, match=f"^WrapperSpec {re.escape(message)}$"):
        WrapperSpec("w", "sekai.wrappers:ClipReward", kwargs={key: 2})


def test_make_names_a_kwargs_key_that_is_not_a_str_added_after_registration(sekai_registry):
    sekai.register("bad/My-v0", My)
    sekai.spec("bad/My-v0").kwargs[1] = 2  # edited in place: no check saw it
    with pytest.raises(TypeError) as caught:
        sekai.make("bad/My-v0")
    message = str(caught.value)
    assert message.startswith("bad/My-v0: its entry point ")
    assert "(given: 1): keywords must be strings" in message


class Configured(LineEnv):
    """An env that edits the config dict it is given (as some envs do)."""

    def __init__(self, config):
        super().__init__()
        config.setdefault("history", []).append("made")
        self.config = config


@pytest.mark.parametrize("how", ["make", "make_vec"])
def test_made_envs_get_their_own_copy_of_mutable_registered_kwargs(sekai_registry, how):
    sekai.register("demo/Cfg-v0", Configured, kwargs={"config": {"level": 1}})
    if how == "make":
        first, second = sekai.make("demo/Cfg-v0"), sekai.make("demo/Cfg-v0")
        assert first.unwrapped.config is not second.unwrapped.config
        assert first.unwrapped.config == {"level": 1, "history": ["made"]}
    else:
        with sekai.make_vec("demo/Cfg-v0", 3) as vec:
            configs = vec.get_attr("config")
        assert len({id(config) for config in configs}) == 3  # one copy per sub-env
        assert configs[0] == {"level": 1, "history": ["made"]}
    assert sekai.spec("demo/Cfg-v0").kwargs == {"config": {"level": 1}}


def test_a_kwarg_given_to_make_is_passed_as_it_is_not_copied(sekai_registry):
    sekai.register("demo/Cfg-v0", Configured, kwargs={"config": {"level": 1}})
    mine: dict[str, object] = {}
    assert sekai.make("demo/Cfg-v0", config=mine).unwrapped.config is mine


class Sampler(Spawnable):
    """A per-env object: make() passes it as it is, make_vec spawns one per sub-env."""

    def spawn(self):
        return Sampler()


def test_a_registered_spawnable_is_passed_as_it_is_not_copied(sekai_registry):
    shared = Sampler()
    sekai.register("demo/Sampled-v0", My, kwargs={"extra": shared})
    env = sekai.make("demo/Sampled-v0")
    assert env.unwrapped.extra is shared
    assert env.spec == sekai.spec("demo/Sampled-v0")
    assert env.spec.kwargs["extra"] is shared


def test_a_registered_kwarg_that_cannot_be_copied_is_named(sekai_registry):
    sekai.register("demo/Lock-v0", My, kwargs={"extra": threading.Lock()})
    with pytest.raises(TypeError, match=r"demo/Lock-v0: its registered keyword argument 'extra'"):
        sekai.make("demo/Lock-v0")
    assert sekai.make("demo/Lock-v0", extra=threading.Lock()).unwrapped.extra is not None
