import pickle

import pytest

import sekai
from sekai import error


def test_every_error_is_exported_at_top_level_and_is_a_sekai_error():
    warnings = ("PluginLoadWarning", "SharedMemoryWarning", "WipeOutWarning")
    for name in error.__all__:
        assert getattr(sekai, name) is getattr(error, name)
        if name not in warnings:
            assert issubclass(getattr(error, name), error.SekaiError)
    for name in warnings:
        assert issubclass(getattr(error, name), UserWarning)
        assert not issubclass(getattr(error, name), error.SekaiError)


def test_env_not_found_message_with_suggestions_and_hint():
    e = error.EnvNotFound(
        "Cartpole-v1", ["CartPole-v1", "classic/CartPole-v1"], hint="It is provided by x."
    )
    assert str(e) == (
        "Environment 'Cartpole-v1' not found in registry. Did you mean: 'CartPole-v1', "
        "'classic/CartPole-v1'? It is provided by x. Use sekai.all_specs() or `sekai list` to see "
        "registered environments."
    )
    assert (e.id, e.suggestions, e.provider, e.failures) == (
        "Cartpole-v1",
        ("CartPole-v1", "classic/CartPole-v1"),
        None,
        (),
    )


def test_env_not_found_without_suggestions():
    assert str(error.EnvNotFound("X-v0")) == (
        "Environment 'X-v0' not found in registry. "
        "Use sekai.all_specs() or `sekai list` to see registered environments."
    )


def test_env_already_registered_message_and_owner_sentence():
    assert str(error.EnvAlreadyRegistered("CartPole-v1")) == (
        "Environment 'CartPole-v1' is already registered."
    )
    owned = error.EnvAlreadyRegistered(
        "CartPole-v1", "It is provided by plugin 'classic' (sekai-classic 0.3.0)."
    )
    assert str(owned) == "Environment 'CartPole-v1' is already registered."
    assert owned.__notes__ == ["It is provided by plugin 'classic' (sekai-classic 0.3.0)."]
    assert not hasattr(error.EnvAlreadyRegistered("CartPole-v1"), "__notes__")
    printed = error._formatted(owned)  # as Python prints it, on 3.10 too
    assert printed.endswith(
        "Environment 'CartPole-v1' is already registered.\n"
        "It is provided by plugin 'classic' (sekai-classic 0.3.0).\n"
    )
    again = pickle.loads(pickle.dumps(owned))
    assert (str(again), again.__notes__) == (str(owned), owned.__notes__)


def test_invalid_action_messages_with_and_without_index():
    assert (
        str(error.InvalidAction(2, "Discrete(2)"))
        == "Action 2 is not valid for space 'Discrete(2)'."
    )
    e = error.InvalidAction(7, sekai.Discrete(5), index=1)
    assert str(e) == "Action 7 is not valid for space Discrete(5) (sub-env 1)."
    assert (e.action, e.index) == (7, 1)
    first = error.InvalidAction(7, sekai.Discrete(5), index=0)
    assert str(first) == "Action 7 is not valid for space Discrete(5) (sub-env 0)."
    e = error.InvalidAction(7, sekai.Discrete(5), agent=0)  # an int agent ID, the first one
    assert str(e) == "Action 7 is not valid for space Discrete(5) (agent 0)."
    e = error.InvalidAction(7, sekai.Discrete(5), agent="trader_1")
    assert str(e) == "Action 7 is not valid for space Discrete(5) (agent 'trader_1')."
    assert (e.index, e.agent) == (None, "trader_1")


def test_reset_required_default_and_custom_messages():
    assert str(error.ResetRequired()) == (
        "reset() must be called before the first call to step(). See Env.reset() for usage."
    )
    assert str(error.ResetRequired("custom")) == "custom"


def test_fixed_messages():
    assert str(error.AsyncCallPending()) == (
        "A previous async call is still pending. "
        "Await the previous result before making another call."
    )
    assert str(error.AsyncCallPending("custom")) == "custom"
    assert str(error.VecEnvClosed()) == "This VecEnv has been closed."
    assert str(error.InvalidObservation(5, "S")) == "Observation 5 is not valid for space 'S'."


def test_invalid_observation_takes_only_the_observation_and_the_space():
    exc = error.InvalidObservation([1, 2], "S")
    assert (exc.obs, exc.space) == ([1, 2], "S")
    with pytest.raises(TypeError):
        error.InvalidObservation(5, "S", index=0)  # type: ignore[call-arg]


def test_vec_env_worker_error_messages():
    e = error.VecEnvWorkerError(1, "ValueError", "bad", "tb")
    assert str(e) == "Sub-env 1 raised ValueError: bad\n\nWorker traceback:\ntb"
    assert (e.rank, e.exc_type, e.remote_traceback, e.worker, e.ranks) == (
        1,
        "ValueError",
        "tb",
        None,
        (1,),
    )
    dead = error.VecEnvWorkerError(
        2, "EOFError", "worker process exited unexpectedly", worker=1, ranks=[2, 3]
    )
    assert (
        str(dead) == "Worker 1 (sub-envs 2-3) raised EOFError: worker process exited unexpectedly"
    )
    one = error.VecEnvWorkerError(2, "EOFError", "gone", worker=1)
    assert str(one) == "Sub-env 2 raised EOFError: gone"


def test_missing_dependency_is_an_import_error_naming_the_package():
    e = error.MissingDependency(
        "to_gymnasium() needs gymnasium>=1.0, which is not installed: "
        "pip install 'sekai-compat[gymnasium]'",
        package="gymnasium",
        extra="gymnasium",
    )
    assert isinstance(e, ImportError) and isinstance(e, error.SekaiError)
    assert str(e).startswith("to_gymnasium() needs gymnasium>=1.0")
    assert (e.package, e.extra, e.name) == ("gymnasium", "gymnasium", "gymnasium")
    with pytest.raises(ImportError):
        raise e


@pytest.mark.parametrize(
    "exc",
    [
        error.EnvNotFound("X-v0", ["Y-v0"], provider="sekai-finance", hint="h"),
        error.EnvAlreadyRegistered("X-v0", "owner"),
        error.InvalidAction(3, "space", index=2),
        error.InvalidAction(3, "space", agent="a"),
        error.InvalidObservation(1, "space"),
        error.ResetRequired("msg"),
        error.AsyncCallPending(),
        error.AsyncCallPending("msg"),
        error.SpaceMismatch("mismatch"),
        error.VecEnvWorkerError(1, "ValueError", "bad", "tb", worker=0, ranks=[1, 2]),
        error.MissingDependency("m", package="p", extra="e"),
        error.VecEnvClosed(),
        error.LookAheadError("future"),
    ],
)
def test_errors_survive_pickling_with_their_message_and_attributes(exc):
    clone = pickle.loads(pickle.dumps(exc))
    assert type(clone) is type(exc)
    assert str(clone) == str(exc)
    assert {k: v for k, v in vars(clone).items() if k != "__traceback__"} == {
        k: v for k, v in vars(exc).items() if k != "__traceback__"
    }
