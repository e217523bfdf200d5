import pickle
import types

import numpy as np
import pytest

import sekai
from sekai._providers import install_command
from sekai.plugins import hookimpl
from sekai.registry import EnvSpec, WrapperSpec
from sekai.registry.api import mode_backend, native_twins
from sekai.testing import registry_sandbox
from sekai.testing.envs import KStepEnv, LineEnv, LineVecEnv
from sekai.vector import VecEnv
from sekai.vector.kernel_check import KStepKernel
from sekai.vector.kernel_vec_env import KernelVecEnv
from sekai.vector.spawnable import Spawnable


class RecordingVec:
    """A stand-in backend: keeps what make_vec passed."""

    def __init__(self, env_fns, **kwargs):
        self.env_fns = env_fns
        self.kwargs = kwargs
        self.spec = None


class RecordingNative:
    def __init__(self, **kwargs):
        self.kwargs = kwargs
        self.spec = None


# Stand-ins, not VecEnvs: make_vec refuses what is not one, so they register as virtual ones.
VecEnv.register(RecordingVec)
VecEnv.register(RecordingNative)


class Counter(Spawnable):
    def __init__(self, origin=None):
        self.origin = origin
        self.spawned = 0

    def spawn(self):
        self.spawned += 1
        return Counter(origin=self)


class Probe(sekai.Env):
    def __init__(self, sampler=None, rng=None, k=0):
        self.sampler = sampler
        self.rng_arg = rng
        self.k = k

    def reset(self, *, seed=None, options=None):
        return sekai.ResetResult(0, {})

    def step(self, action):
        return sekai.StepResult(0, 0.0, False, False, {})


@pytest.fixture
def backend_module(monkeypatch):
    module = types.ModuleType("sekai_test_recording_backend")
    module.RecordingVec = RecordingVec
    monkeypatch.setitem(__import__("sys").modules, module.__name__, module)
    return module


class RecordingModePlugin:
    @staticmethod
    @hookimpl
    def sekai_register_vector_backends(registry):
        registry.register("recording", "sekai_test_recording_backend:RecordingVec")


@pytest.fixture
def recording(backend_module):
    with registry_sandbox(("recording", RecordingModePlugin)) as registry:
        sekai.register("demo/Probe-v0", Probe, kwargs={"k": 1}, max_episode_steps=7)
        yield registry


def test_a_plugin_vectorization_mode_is_used_by_make_vec(recording):
    vec = sekai.make_vec("demo/Probe-v0", 3, vectorization_mode="recording", vector_kwargs={"x": 1})
    assert isinstance(vec, RecordingVec)
    assert vec.kwargs == {"x": 1}
    assert len(vec.env_fns) == 3
    env = vec.env_fns[0]()
    assert str(env) == "<TimeLimit(<demo/Probe-v0>)>"
    assert recording.backend_source("recording").distribution == "sekai-sandbox"


def _install_metadata(directory, name, *requires):
    """A ``name`` 1.0 distribution's metadata in ``directory`` (on sys.path), declaring
    ``requires``: installed as far as importlib.metadata can tell, with no module of its own."""
    info_dir = directory / f"{name.replace('-', '_')}-1.0.dist-info"
    info_dir.mkdir()
    lines = [f"Requires-Dist: {r}\n" for r in requires]
    (info_dir / "METADATA").write_text(
        f"Metadata-Version: 2.1\nName: {name}\nVersion: 1.0\n" + "".join(lines)
    )


def test_a_requirement_with_hyphens_or_dots_is_matched_by_its_import_name(tmp_path, monkeypatch):
    from sekai._metadata import declared_requirement, missing_requirements

    _install_metadata(tmp_path, "sekai-sandbox", "jax-like>=0.4", "hand.put>=1")
    (tmp_path / "hand_put.py").write_text("")  # put on sys.path by hand: no metadata
    monkeypatch.syspath_prepend(str(tmp_path))
    assert declared_requirement("sekai-sandbox", "jax_like") == "jax-like>=0.4"
    assert missing_requirements("sekai-sandbox") == ("jax-like>=0.4",)


@pytest.fixture
def failing_import(recording, backend_module, tmp_path, monkeypatch):
    """The sandbox's distribution declares jaxlike, whose metadata is installed; importing the
    mode's module raises the ModuleNotFoundError the test passes."""
    _install_metadata(tmp_path, "sekai-sandbox", "jaxlike>=0.4")
    _install_metadata(tmp_path, "jaxlike")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setattr("sekai.registry.api._COMPLETE", set())
    monkeypatch.delitem(__import__("sys").modules, backend_module.__name__)

    def fail_with(error):
        def import_module(name, *args):
            raise error

        monkeypatch.setattr("importlib.import_module", import_module)

    return fail_with


def test_a_mode_whose_declared_library_fails_to_import_names_it_and_its_distribution(
    failing_import,
):
    # the library's metadata is there, its module is not (removed by hand, or a broken install)
    failing_import(ModuleNotFoundError("No module named 'jaxlike'", name="jaxlike"))
    with pytest.raises(sekai.MissingDependency) as info:
        sekai.make_vec("demo/Probe-v0", 2, vectorization_mode="recording")
    assert str(info.value) == (
        "vectorization_mode 'recording' needs jaxlike, which is not installed (No module named "
        "'jaxlike'): sekai-sandbox, which provides the mode, depends on it. Install it with: "
        "pip install 'jaxlike>=0.4'"
    )
    assert info.value.package == "jaxlike"


@pytest.mark.parametrize(
    "missing",
    [
        "grpcish",  # a dependency of the declared library itself (installed with --no-deps)
        "jaxlike._core",  # a part of the declared library: installed, but broken
        "undeclared",  # a library the mode's distribution does not declare
    ],
)
def test_a_module_the_modes_distribution_does_not_declare_stays_a_module_not_found_error(
    failing_import, missing
):
    error = ModuleNotFoundError(f"No module named {missing!r}", name=missing)
    failing_import(error)
    with pytest.raises(ModuleNotFoundError) as info:
        sekai.make_vec("demo/Probe-v0", 2, vectorization_mode="recording")
    assert info.value is error  # not a MissingDependency with a wrong pip install command


def test_a_mode_whose_declared_library_is_missing_names_it_before_anything_is_built(
    recording, tmp_path, monkeypatch
):
    # as sekai-ray installed with --no-deps: its module imports Ray only when the env is built,
    # so the distribution's declared dependencies are what tells that Ray is missing
    _install_metadata(
        tmp_path,
        "sekai-sandbox",
        "numpy>=2.0",  # installed
        "rayish>=2.9",
        "sekai_test_recording_backend",  # a module without metadata
        "raylet-thing[default]<9,>=1",
        "winlike; sys_platform == 'win32'",  # markers are not evaluated
        "extralike; extra == 'x'",
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    built = []
    monkeypatch.setattr(RecordingVec, "__init__", lambda self, *a, **k: built.append(a))
    with pytest.raises(sekai.MissingDependency) as info:
        sekai.make_vec("demo/Probe-v0", 2, vectorization_mode="recording")
    assert str(info.value) == (
        "vectorization_mode 'recording' needs rayish and raylet-thing, which are not installed: "
        "sekai-sandbox, which provides the mode, depends on them. Install them with: "
        "pip install 'rayish>=2.9' 'raylet-thing[default]<9,>=1'"
    )
    assert isinstance(info.value, ImportError)
    assert info.value.package == "rayish"
    assert built == []


def test_plugin_modes_are_listed_after_core_modes_in_the_unknown_mode_error(recording):
    with pytest.raises(ValueError) as info:
        sekai.make_vec("demo/Probe-v0", 2, vectorization_mode="foo")
    assert str(info.value) == (
        "Unknown vectorization_mode 'foo'; "
        "expected one of ['native', 'sync', 'async', 'proc', 'recording']."
    )


def test_unknown_ray_mode_names_sekai_ray_to_install(sekai_line_registry):
    with pytest.raises(ValueError) as info:
        sekai.make_vec("testing/Line-v0", 2, vectorization_mode="ray")
    assert str(info.value) == (
        "Unknown vectorization_mode 'ray'; expected one of ['native', 'sync', 'async', 'proc']. "
        f"It is provided by sekai-ray, which is not installed: {install_command('sekai-ray')}."
    )


class RecordingKernelVec(RecordingVec):
    """A stand-in kernel mode: make_vec gives it the spec's kernel, not sub-envs."""

    @classmethod
    def from_kernel(cls, kernel, num_envs, max_episode_steps, kwargs):
        return cls([kernel] * num_envs, **kwargs)


@pytest.mark.parametrize("mode", ["foo", "native", "kernelish"])
def test_mode_backend_refuses_a_mode_with_make_vecs_message_before_building(recording, mode):
    # sekai bench --compare checks every mode with it before its first run.
    recording.add_backend("kernelish", RecordingKernelVec, None)
    spec = sekai.spec("demo/Probe-v0")
    with pytest.raises(ValueError) as made:
        sekai.make_vec(spec, 2, vectorization_mode=mode)
    with pytest.raises(ValueError) as checked:
        mode_backend(spec, mode)
    assert str(checked.value) == str(made.value)


def test_mode_backend_gives_the_class_of_a_mode_and_none_for_native(sekai_line_registry):
    spec = sekai.spec("testing/Line-v0")
    assert mode_backend(spec, "sync") is sekai.SyncVecEnv
    assert mode_backend(spec, "native") is mode_backend(spec, "vector_entry_point") is None


@pytest.mark.parametrize("n", [0, -3])
def test_make_vec_rejects_num_envs_below_one_with_the_spec_message(sekai_line_registry, n):
    with pytest.raises(ValueError) as info:
        sekai.make_vec("testing/Line-v0", n)
    assert str(info.value) == f"num_envs must be >= 1, got {n}."


@pytest.mark.parametrize("mode", ["sync", "native"])
def test_make_vec_names_num_envs_beyond_the_longest_numpy_array(sekai_line_registry, mode):
    limit = np.iinfo(np.intp).max
    with pytest.raises(ValueError) as info:
        sekai.make_vec("testing/Line-v0", 2**70, vectorization_mode=mode)
    assert str(info.value) == (
        f"num_envs must be at most {limit} (the longest array NumPy can make), got {2**70}."
    )


@pytest.mark.parametrize("returned", [None, 3])
def test_a_wrapper_returning_no_env_is_named_with_what_it_returned(sekai_line_registry, returned):
    def keep(env):
        return env

    def broken(env):
        return returned

    with pytest.raises(TypeError) as info:
        sekai.make_vec("testing/Line-v0", 2, wrappers=[keep, broken], vectorization_mode="sync")
    message = str(info.value)
    assert message.startswith(
        f"make_vec('testing/Line-v0'): wrappers[1] ({broken!r}) returned "
        f"{type(returned).__name__}, not a sekai.Env; a wrapper must return the env it is given"
    )
    assert "env_fns" not in message


@pytest.mark.parametrize("n", [2.0, True, "2"])
def test_make_vec_rejects_num_envs_that_are_not_ints(sekai_line_registry, n):
    with pytest.raises(TypeError, match="num_envs must be an int"):
        sekai.make_vec("testing/Line-v0", n)


def test_default_mode_is_native_when_the_spec_has_a_vector_entry_point(sekai_line_registry):
    vec = sekai.make_vec("testing/Line-v0", 4)
    assert isinstance(vec, LineVecEnv)
    assert str(vec) == "LineVecEnv(num_envs=4)"
    assert vec.max_episode_steps == 20


def test_default_mode_is_sync_with_wrappers_or_without_native_version(sekai_line_registry):
    wrapped = sekai.make_vec("testing/Line-v0", 2, wrappers=[sekai.OrderEnforcing])
    assert str(wrapped) == "SyncVecEnv(num_envs=2)"
    sekai.register("plain/Line-v0", LineEnv, max_episode_steps=5)
    assert str(sekai.make_vec("plain/Line-v0", 3)) == "SyncVecEnv(num_envs=3)"


def test_default_mode_is_sync_when_the_spec_has_additional_wrappers(sekai_line_registry):
    sekai.register(
        "wrapped/Line-v0",
        LineEnv,
        vector_entry_point=LineVecEnv,
        additional_wrappers=(WrapperSpec("OE", sekai.OrderEnforcing),),
    )
    assert str(sekai.make_vec("wrapped/Line-v0", 2)) == "SyncVecEnv(num_envs=2)"


def test_sync_sub_envs_get_make_wrappers_inside_and_user_wrappers_outside(sekai_line_registry):
    vec = sekai.make_vec(
        "testing/Line-v0",
        2,
        vectorization_mode="sync",
        wrappers=[sekai.OrderEnforcing, lambda env: sekai.TimeLimit(env, 50)],
    )
    assert str(vec.envs[0]) == "<TimeLimit(<OrderEnforcing(<TimeLimit(<testing/Line-v0>)>)>)>"
    assert vec.envs[0] is not vec.envs[1]


def test_vector_entry_point_is_an_alias_of_native(sekai_line_registry):
    assert isinstance(
        sekai.make_vec("testing/Line-v0", 2, vectorization_mode="vector_entry_point"), LineVecEnv
    )


def test_native_without_vector_entry_point_raises_the_spec_message(sekai_registry):
    sekai.register("demo/My-v0", LineEnv)
    with pytest.raises(ValueError) as info:
        sekai.make_vec("demo/My-v0", 2, vectorization_mode="native")
    assert str(info.value) == (
        "demo/My-v0 has no native vector implementation (vector_entry_point); "
        "use vectorization_mode='sync', 'async' or 'proc'."
    )


def test_native_with_wrappers_is_refused(sekai_line_registry):
    with pytest.raises(
        ValueError, match="a native env has no per-env objects to wrap; use vector wrappers"
    ):
        sekai.make_vec(
            "testing/Line-v0", 2, vectorization_mode="native", wrappers=[sekai.OrderEnforcing]
        )


def test_native_with_registered_additional_wrappers_is_refused(sekai_registry):
    sekai.register(
        "w/Line-v0",
        LineEnv,
        vector_entry_point=LineVecEnv,
        additional_wrappers=(WrapperSpec("OE", sekai.OrderEnforcing),),
    )
    with pytest.raises(
        ValueError, match=r"registered additional_wrappers.*vectorization_mode='sync'"
    ):
        sekai.make_vec("w/Line-v0", 2, vectorization_mode="native")


def test_native_constructor_gets_num_envs_merged_kwargs_limit_and_vector_kwargs(sekai_registry):
    sekai.register(
        "n/Probe-v0",
        Probe,
        kwargs={"k": 1, "rng": 2},
        vector_entry_point=RecordingNative,
        max_episode_steps=9,
    )
    vec = sekai.make_vec("n/Probe-v0", 3, k=5, vector_kwargs={"autoreset": False})
    assert vec.kwargs == {
        "num_envs": 3,
        "k": 5,
        "rng": 2,
        "max_episode_steps": 9,
        "autoreset": False,
    }


def test_native_constructor_gets_the_overridden_limit_and_none_when_removed(sekai_registry):
    sekai.register("n/Probe-v0", Probe, vector_entry_point=RecordingNative, max_episode_steps=9)
    assert sekai.make_vec("n/Probe-v0", 2, max_episode_steps=4).kwargs["max_episode_steps"] == 4
    assert "max_episode_steps" not in sekai.make_vec("n/Probe-v0", 2, max_episode_steps=-1).kwargs


def test_native_keyword_given_twice_is_a_type_error(sekai_registry):
    sekai.register("n/Probe-v0", Probe, vector_entry_point=RecordingNative)
    with pytest.raises(
        TypeError, match=r"\['k'\] both as env keyword arguments and in vector_kwargs"
    ):
        sekai.make_vec("n/Probe-v0", 2, k=1, vector_kwargs={"k": 2})


def test_spawnable_kwargs_are_spawned_once_per_sub_env_in_non_native_modes(recording):
    sampler = Counter()
    generator = np.random.default_rng(0)
    vec = sekai.make_vec(
        "demo/Probe-v0", 3, vectorization_mode="recording", sampler=sampler, rng=generator
    )
    assert sampler.spawned == 3
    envs = [fn().unwrapped for fn in vec.env_fns]
    assert len({id(e.sampler) for e in envs}) == 3
    assert all(e.sampler.origin is sampler for e in envs)
    assert all(e.rng_arg is generator for e in envs)


def test_spawnable_registered_kwargs_are_spawned_too(backend_module):
    sampler = Counter()
    with registry_sandbox(("recording", RecordingModePlugin)):
        sekai.register("demo/Probe-v0", Probe, kwargs={"sampler": sampler})
        vec = sekai.make_vec("demo/Probe-v0", 2, vectorization_mode="recording")
    assert sampler.spawned == 2
    assert vec.env_fns[0]().sampler.origin is sampler


def test_a_spawnable_given_to_make_vec_replaces_the_registered_one(backend_module):
    registered, given = Counter(), Counter()
    with registry_sandbox(("recording", RecordingModePlugin)):
        sekai.register("demo/Probe-v0", Probe, kwargs={"sampler": registered})
        vec = sekai.make_vec("demo/Probe-v0", 2, vectorization_mode="recording", sampler=given)
    assert (given.spawned, registered.spawned) == (2, 0)
    assert all(fn().sampler.origin is given for fn in vec.env_fns)


def test_spawnable_kwargs_reach_the_native_env_unchanged(sekai_registry):
    sampler = Counter()
    sekai.register("n/Probe-v0", Probe, vector_entry_point=RecordingNative)
    vec = sekai.make_vec("n/Probe-v0", 2, sampler=sampler)
    assert vec.kwargs["sampler"] is sampler and sampler.spawned == 0


def test_registered_spawnable_kwargs_reach_the_native_env_unchanged(sekai_registry):
    sampler = Counter()
    sekai.register(
        "n/Probe-v0", Probe, vector_entry_point=RecordingNative, kwargs={"sampler": sampler}
    )
    vec = sekai.make_vec("n/Probe-v0", 2)
    assert vec.kwargs["sampler"] is sampler and sampler.spawned == 0
    assert vec.spec == sekai.spec("n/Probe-v0")


def test_vec_spec_is_the_describing_copy_make_puts_on_its_envs(recording):
    vec = sekai.make_vec(
        "demo/Probe-v0", 2, vectorization_mode="recording", k=3, max_episode_steps=-1
    )
    assert vec.spec == EnvSpec("demo/Probe-v0", Probe, kwargs={"k": 3}, max_episode_steps=None)
    assert vec.spec == vec.env_fns[0]().spec


def test_vec_spec_equals_the_registry_entry_when_nothing_is_overridden(sekai_line_registry):
    assert sekai.make_vec("testing/Line-v0", 2).spec == sekai.spec("testing/Line-v0")


def test_a_kernel_modes_vec_spec_is_the_describing_copy_too(sekai_registry):
    sekai_registry.add_backend("kernel", KernelVecEnv, None)
    sekai.register(
        "k/KStep-v0",
        KStepEnv,
        kernel_entry_point=KStepKernel,
        kwargs={"ks": [2]},
        max_episode_steps=5,
    )
    assert sekai.make_vec("k/KStep-v0", 1, vectorization_mode="kernel").spec == sekai.spec(
        "k/KStep-v0"
    )
    vec = sekai.make_vec("k/KStep-v0", 1, vectorization_mode="kernel", max_episode_steps=7, ks=[3])
    assert vec.spec == EnvSpec(
        "k/KStep-v0",
        KStepEnv,
        kernel_entry_point=KStepKernel,
        kwargs={"ks": [3]},
        max_episode_steps=7,
    )


def test_sub_env_factories_pickle_for_worker_processes(sekai_line_registry):
    captured = []

    def capture(env_fns, **kwargs):
        captured.extend(env_fns)
        return RecordingVec(env_fns)

    sekai_line_registry.ensure_discovered()
    sekai_line_registry.add_backend("capture", capture, None)
    sekai.make_vec(
        "testing/Line-v0", 1, vectorization_mode="capture", wrappers=[sekai.OrderEnforcing]
    )
    factory = pickle.loads(pickle.dumps(captured[0]))
    assert str(factory()) == "<OrderEnforcing(<TimeLimit(<testing/Line-v0>)>)>"


def test_make_vec_accepts_an_env_spec(recording):
    spec = EnvSpec("local/Probe-v0", Probe)
    vec = sekai.make_vec(spec, 2, vectorization_mode="recording")
    assert str(vec.env_fns[1]()) == "<local/Probe-v0>"


def test_make_vec_of_an_unknown_id_raises_env_not_found(sekai_registry):
    with pytest.raises(sekai.EnvNotFound):
        sekai.make_vec("Nope-v0", 2)


def test_make_vec_rejects_wrappers_that_are_not_callable(sekai_line_registry):
    with pytest.raises(TypeError, match="wrappers must hold callables"):
        sekai.make_vec("testing/Line-v0", 2, wrappers=["OrderEnforcing"])


def test_make_vec_takes_no_wrappers_as_none_and_refuses_a_lone_wrapper(sekai_line_registry):
    assert sekai.make_vec("testing/Line-v0", 2, wrappers=None, vectorization_mode="sync")
    with pytest.raises(
        TypeError,
        match=r"^wrappers must be a sequence of callables env -> env, got ABCMeta; "
        r"pass \[TimeAwareObservation\]\.$",
    ):
        sekai.make_vec("testing/Line-v0", 2, wrappers=sekai.TimeAwareObservation)
    with pytest.raises(TypeError, match=r"sequence of callables env -> env, got int\.$"):
        sekai.make_vec("testing/Line-v0", 2, wrappers=3)


@pytest.mark.parametrize("unordered", [set, frozenset])
def test_make_vec_refuses_unordered_wrappers(sekai_line_registry, unordered):
    with pytest.raises(
        TypeError,
        match=rf"^make_vec: wrappers must be given in order, got a {unordered.__name__} of 1 "
        r"item, which has no order; pass a list or tuple in the order wanted\.$",
    ):
        sekai.make_vec("testing/Line-v0", 2, wrappers=unordered([sekai.TimeAwareObservation]))


def test_make_vec_takes_wrappers_from_a_generator(sekai_line_registry):
    vec = sekai.make_vec(
        "testing/Line-v0",
        2,
        wrappers=(w for w in [sekai.TimeAwareObservation]),
        vectorization_mode="sync",
    )
    assert type(vec.envs[0]).__name__ == "TimeAwareObservation"


def test_line_plugin_sub_envs_match_the_native_env_seeded_alike(sekai_line_registry):
    native = sekai.make_vec("testing/Line-v0", 2)
    sync = sekai.make_vec("testing/Line-v0", 2, vectorization_mode="sync")
    assert native.observation_space == sync.observation_space
    assert (
        native.reset(seed=0).observations.shape == sync.reset(seed=0).observations.shape == (2, 1)
    )


@pytest.mark.parametrize("bad", [3, [("num_workers", 2)]])
def test_vector_kwargs_that_are_not_a_dict_are_a_type_error_naming_them(sekai_line_registry, bad):
    with pytest.raises(TypeError, match=r"^vector_kwargs must be a dict, got (int|list)\.$"):
        sekai.make_vec("testing/Line-v0", 2, vector_kwargs=bad)


def test_native_kwargs_that_do_not_fit_name_the_env_and_its_vector_entry_point(
    sekai_line_registry,
):
    sekai.register("native/Line-v0", LineEnv, vector_entry_point=LineVecEnv)
    with pytest.raises(TypeError) as caught:
        sekai.make_vec("native/Line-v0", 2, nope=1)
    assert str(caught.value).startswith(
        "native/Line-v0: its vector_entry_point LineVecEnv does not take the keyword argument "
        "'nope' (given: num_envs, nope): "
    )


class ForwardingLineVecEnv(LineVecEnv):
    """A native env that passes the keywords it does not name on to its single env, as the
    finance ones do."""

    def __init__(self, num_envs, *, autoreset=True, max_episode_steps=None, **kwargs):
        template = LineEnv(**kwargs)
        super().__init__(
            num_envs, size=template.size, autoreset=autoreset, max_episode_steps=max_episode_steps
        )


def _message(**make_vec_kwargs):
    with pytest.raises(TypeError) as caught:
        sekai.make_vec("fwd/Line-v0", 2, **make_vec_kwargs)
    return str(caught.value)


@pytest.fixture
def forwarding(sekai_line_registry):
    sekai.register("fwd/Line-v0", LineEnv, vector_entry_point=ForwardingLineVecEnv)


def test_a_native_env_passing_on_an_unknown_keyword_gives_the_sync_modes_error(forwarding):
    native = _message(nope=1)
    assert native == _message(nope=1, vectorization_mode="sync")
    assert native.startswith(
        "fwd/Line-v0: its entry point LineEnv does not take the keyword argument 'nope' "
        "(given: nope): "
    )


def test_a_native_env_passing_on_render_mode_gives_the_renderer_hint(forwarding):
    native = _message(render_mode="rgb_array")
    assert native.startswith("fwd/Line-v0 takes no render_mode='rgb_array': sekai.make_vec() ")
    assert native.partition(":")[2] == (
        _message(render_mode="rgb_array", vectorization_mode="sync")
        .partition(":")[2]
        .replace("sekai.make()", "sekai.make_vec()")
    )


def test_a_native_env_passing_on_a_vector_kwarg_names_itself_and_the_proc_option(forwarding):
    message = _message(vector_kwargs={"num_workers": 2, "nope": 1})
    assert message.startswith(
        "fwd/Line-v0: its vector_entry_point ForwardingLineVecEnv does not take the keyword "
        "arguments 'num_workers', 'nope' (given: num_envs, num_workers, nope): "
    )
    assert message.endswith(
        ". 'num_workers' is an option of ProcVecEnv: pass it with vectorization_mode='proc'."
    )


@pytest.mark.parametrize("mode", ["native", "sync", "async"])
def test_proc_options_in_vector_kwargs_of_another_mode_point_to_proc(sekai_line_registry, mode):
    sekai.register("native/Line-v0", LineEnv, vector_entry_point=LineVecEnv)
    with pytest.raises(TypeError) as caught:
        sekai.make_vec(
            "native/Line-v0",
            2,
            vectorization_mode=mode,
            vector_kwargs={"num_workers": 2, "shared_memory": True},
        )
    message = str(caught.value)
    assert message.startswith("native/Line-v0: ")
    assert message.endswith(
        ". 'num_workers', 'shared_memory' are options of ProcVecEnv: pass them with "
        "vectorization_mode='proc'."
    )


@pytest.mark.parametrize(
    ("vector_kwargs", "hint"),
    [
        ({"bogus": 1}, ""),
        (
            {"context": "spawn"},
            ". 'context' is an option of ProcVecEnv: pass it with vectorization_mode='proc'.",
        ),
    ],
    ids=["unknown", "proc-option"],
)
def test_a_kernel_mode_names_the_env_and_a_vector_kwarg_it_refuses(
    sekai_registry, vector_kwargs, hint
):
    # The jax and torch modes gave the bare "JaxVecEnv.__init__() got an unexpected keyword
    # argument": no env, no ProcVecEnv hint, unlike the other modes.
    sekai_registry.add_backend("kernel", KernelVecEnv, None)
    sekai.register("k/KStep-v0", KStepEnv, kernel_entry_point=KStepKernel, kwargs={"ks": [2]})
    with pytest.raises(TypeError) as caught:
        sekai.make_vec("k/KStep-v0", 1, vectorization_mode="kernel", vector_kwargs=vector_kwargs)
    (key,) = vector_kwargs
    assert str(caught.value) == (
        f"k/KStep-v0: vectorization_mode 'kernel' (KernelVecEnv) does not take the keyword "
        f"argument {key!r} (given: {key}): KernelVecEnv.__init__() got an unexpected keyword "
        f"argument {key!r}{hint}"
    )


class NotAVecEnv:
    def __init__(self, **kwargs):
        self.kwargs = kwargs


def test_a_vector_entry_point_that_builds_no_vec_env_is_refused(sekai_registry):
    sekai.register("n/Probe-v0", Probe, vector_entry_point=NotAVecEnv)
    with pytest.raises(TypeError, match=r"n/Probe-v0: its vector_entry_point NotAVecEnv returned"):
        sekai.make_vec("n/Probe-v0", 2)


@pytest.mark.parametrize("mode", ["native", "sync"])
@pytest.mark.parametrize("key", ["num_envs", "max_episode_steps"])
def test_vector_kwargs_may_not_hold_num_envs_or_the_time_limit(sekai_line_registry, mode, key):
    with pytest.raises(TypeError, match=f"make_vec got '{key}' in vector_kwargs; pass it as"):
        sekai.make_vec("testing/Line-v0", 2, vectorization_mode=mode, vector_kwargs={key: 3})


def test_native_refuses_autoreset_as_an_env_keyword_and_takes_it_in_vector_kwargs(
    sekai_line_registry,
):
    with pytest.raises(TypeError, match=r"pass vector_kwargs=\{'autoreset': \.\.\.\}"):
        sekai.make_vec("testing/Line-v0", 2, vectorization_mode="native", autoreset=False)
    vec = sekai.make_vec("testing/Line-v0", 2, vector_kwargs={"autoreset": False})
    assert vec.autoreset is False and "autoreset" not in vec.spec.kwargs


def test_the_native_twin_hint_names_only_the_same_env(sekai_registry):
    sekai.register("Line-v0", LineEnv)
    sekai.register("twin/Line-v0", LineEnv, vector_entry_point=LineVecEnv)
    sekai.register("other/Line-v0", Probe, vector_entry_point=LineVecEnv)
    with pytest.raises(ValueError) as info:
        sekai.make_vec("Line-v0", 2, vectorization_mode="native")
    assert "twin/Line-v0 has one" in str(info.value)
    assert "other/Line-v0" not in str(info.value)
    assert native_twins("Line-v0") == native_twins(sekai.spec("Line-v0")) == ["twin/Line-v0"]


def test_a_mode_whose_libraries_were_all_found_is_not_checked_again(
    sekai_line_registry, monkeypatch
):
    import sekai._metadata

    checked = []
    real = sekai._metadata.missing_requirements

    def counting(name):
        checked.append(name)
        return real(name)

    monkeypatch.setattr(sekai._metadata, "missing_requirements", counting)
    monkeypatch.setattr(sekai.registry.api, "_COMPLETE", set(), raising=False)
    for _ in range(3):
        sekai.make_vec("testing/Line-v0", 2, vectorization_mode="sync").close()
    assert checked == ["sekai-core"]  # installed metadata is read once, not on every call
