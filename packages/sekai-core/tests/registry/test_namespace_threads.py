"""Namespace loaders and discovery with several threads, and in a process forked meanwhile."""

import os
import signal
import threading
import traceback
import warnings
from concurrent.futures import ThreadPoolExecutor

import pytest

import sekai
from sekai.error import EnvNotFound, PluginLoadWarning
from sekai.plugins import hookimpl
from sekai.plugins._host import EntryPointRecord, PluginHost
from sekai.registry import EnvRegistry
from sekai.registry.registry import _DISCOVERY
from sekai.testing.fixtures import in_thread

needs_fork = pytest.mark.skipif(not hasattr(os, "fork"), reason="no fork on this platform")
# Python 3.12+ warns that a multi-threaded process forks; these tests fork one on purpose.
forks_threads = pytest.mark.filterwarnings("ignore:.*use of fork:DeprecationWarning")


class Dummy(sekai.Env):
    def reset(self, *, seed=None, options=None):
        return sekai.ResetResult(0, {})

    def step(self, action):
        return sekai.StepResult(0, 0.0, False, False, {})


class _WatchedEvent(threading.Event):
    """An event that sets ``progress`` when a thread starts waiting on it."""

    def __init__(self, progress):
        super().__init__()
        self.progress = progress

    def wait(self, timeout=None):
        self.progress.set()
        return super().wait(timeout)


def _finished(*threads):
    for thread in threads:
        thread.join(timeout=10)
    return not any(thread.is_alive() for thread in threads)


def _loader_in_flight(reg, fail_first=False):
    """Start a thread whose ``reg.spec("lazy/A-v0")`` runs the ``lazy`` loader, which registers
    ``lazy/Half-v0``, waits for ``release`` on its first run, registers ``lazy/A-v0``, then
    raises on its first run if ``fail_first``. Returns the thread, what its lookup got,
    ``release`` and the loader's run count."""
    started, release, runs = threading.Event(), threading.Event(), []

    def loader():
        runs.append(1)
        reg.register("lazy/Half-v0", Dummy)
        if len(runs) == 1:
            started.set()
            assert release.wait(timeout=10), "the test never released the loader"
        reg.register("lazy/A-v0", Dummy)
        if fail_first and len(runs) == 1:
            raise ImportError("optional dependency missing")

    reg.register_namespace("lazy", loader)
    thread, got = in_thread(lambda: reg.spec("lazy/A-v0").id)
    assert started.wait(timeout=10)
    return thread, got, release, runs


def _waiter(reg, namespace, env_id):
    """Start a thread looking ``env_id`` up once it will wait for ``namespace``'s running loader;
    returns the thread and what its lookup got, after checking that it waits."""
    progress = threading.Event()
    reg._loading[namespace].done = _WatchedEvent(progress)
    thread, got = in_thread(lambda: reg.spec(env_id).id)
    assert progress.wait(timeout=10)
    assert got == []  # still waiting: the loader has not returned
    return thread, got


def test_a_lookup_while_another_thread_runs_the_namespace_loader_waits_for_it():
    reg = EnvRegistry()
    loading, got, release, runs = _loader_in_flight(reg)
    waiting, waited = _waiter(reg, "lazy", "lazy/A-v0")
    release.set()
    assert _finished(loading, waiting)
    assert got == waited == ["lazy/A-v0"]
    assert runs == [1]


def test_a_lookup_waiting_for_a_loader_that_fails_runs_it_again():
    reg = EnvRegistry()
    loading, got, release, runs = _loader_in_flight(reg, fail_first=True)
    waiting, waited = _waiter(reg, "lazy", "lazy/A-v0")
    release.set()
    assert _finished(loading, waiting)
    assert isinstance(got[0], ImportError) and waited == ["lazy/A-v0"]
    assert runs == [1, 1]  # no EnvAlreadyRegistered for lazy/Half-v0: the first run's undone


def test_registry_changes_and_hits_do_not_wait_for_a_running_namespace_loader():
    reg = EnvRegistry()
    reg.register("Known-v0", Dummy)
    loading, got, release, _ = _loader_in_flight(reg)
    try:
        assert reg.spec("Known-v0").id == "Known-v0"
        reg.register("Other-v0", Dummy)
        reg.deregister("Known-v0")
        reg.register_namespace("later", lambda: None)
    finally:
        release.set()
    assert _finished(loading)
    assert got == ["lazy/A-v0"]
    assert [s.id for s in reg.all_specs()] == ["lazy/Half-v0", "Other-v0", "lazy/A-v0"]


def test_a_failed_namespace_loader_keeps_what_other_threads_changed_meanwhile():
    reg = EnvRegistry()
    reg.register("Kept-v0", Dummy)
    loading, got, release, _ = _loader_in_flight(reg, fail_first=True)
    reg.register("Other-v0", Dummy)
    reg.deregister("Kept-v0")
    release.set()
    assert _finished(loading)
    assert isinstance(got[0], ImportError)
    assert [s.id for s in reg.all_specs()] == ["Other-v0"]  # lazy/* rolled back, Kept-v0 gone


@pytest.mark.parametrize("fail", [False, True])
def test_a_namespace_loader_may_register_from_another_thread(fail):
    reg = EnvRegistry()

    def loader():  # a plugin module building its specs in a worker thread, waiting for it
        helper, helped = in_thread(lambda: reg.register("mine/Drift-v0", Dummy))
        assert _finished(helper), "register() from the loader's helper thread hangs"
        assert len(helped) == 1 and not isinstance(helped[0], Exception), helped
        if fail:
            raise ImportError("optional dependency missing")

    reg.register_namespace("mine", loader)
    lookup, got = in_thread(lambda: reg.spec("mine/Drift-v0").id)
    assert _finished(lookup), "the lookup running the loader hangs"
    if fail:  # the helper's ID is in the loader's namespace: it is undone with the loader
        assert isinstance(got[0], ImportError) and reg.all_specs() == []
    else:
        assert got == ["mine/Drift-v0"]


def test_loaders_of_two_threads_looking_each_other_up_do_not_wait_for_each_other_forever():
    reg = EnvRegistry()
    a_started, b_started = threading.Event(), threading.Event()
    nested = []

    def loader(mine, started, other_started, other_id):
        def load():
            started.set()
            assert other_started.wait(timeout=10)
            try:  # the later of the two lookups would wait for itself: it gets EnvNotFound
                nested.append(reg.spec(other_id).id)
            except EnvNotFound as exc:
                nested.append(exc)
            reg.register(f"{mine}/Y-v0", Dummy)

        return load

    reg.register_namespace("a", loader("a", a_started, b_started, "b/Y-v0"))
    reg.register_namespace("b", loader("b", b_started, a_started, "a/Y-v0"))
    first, got_a = in_thread(lambda: reg.spec("a/Y-v0").id)
    second, got_b = in_thread(lambda: reg.spec("b/Y-v0").id)
    assert _finished(first, second), "the two loaders wait for each other"
    assert got_a == ["a/Y-v0"] and got_b == ["b/Y-v0"]
    assert sorted(type(n).__name__ for n in nested) == ["EnvNotFound", "str"]


def test_a_helper_thread_of_a_loader_looking_up_a_missing_id_of_its_namespace_times_out():
    reg = EnvRegistry()
    reg._wait_timeout = 0.2

    def load_mine():  # waits for a helper that waits for this loader: neither would go on
        helper, helped = in_thread(lambda: reg.spec("mine/Later-v0"))
        assert _finished(helper), "the helper's lookup waits for its loader forever"
        reg.register("mine/Later-v0", Dummy)
        raise helped[0]

    reg.register_namespace("mine", load_mine)
    lookup, got = in_thread(lambda: reg.spec("mine/Later-v0"))
    assert _finished(lookup)
    assert isinstance(got[0], TimeoutError)
    assert str(got[0]) == (
        "Looking up 'mine/Later-v0' waited 0.2 s for the loader "
        f"{__name__}.test_a_helper_thread_of_a_loader_looking_up_a_missing_id_of_its_namespace_"
        "times_out.<locals>.load_mine of namespace 'mine', which another thread runs. If that "
        "loader waits for this thread (a helper thread or thread pool it started), neither can "
        "go on: register the IDs that thread looks up before it starts, or look them up in the "
        "loader's thread."
    )
    assert reg.all_specs() == []  # the failed loader's IDs are undone; it runs again later


def _in_forked_child(check):
    """Run ``check`` in a forked child (killed after 10 s); returns the child's exit code."""
    pid = os.fork()
    if pid == 0:
        signal.alarm(10)  # a hang in the child fails the test instead of hanging it
        code = 1
        try:
            check()
            code = 0
        except BaseException:
            traceback.print_exc()
        finally:
            os._exit(code)
    _, status = os.waitpid(pid, 0)
    return os.waitstatus_to_exitcode(status)


@needs_fork
@forks_threads
def test_a_child_forked_while_another_thread_runs_a_namespace_loader_runs_it_again():
    reg = EnvRegistry()
    loading, got, release, runs = _loader_in_flight(reg)

    def child():  # the loader's thread is not here: its run does not continue
        reg.register("Local-v0", Dummy)
        assert reg.spec("lazy/A-v0").id == "lazy/A-v0"  # runs it, here, without waiting
        assert runs == [1, 1]  # and without EnvAlreadyRegistered for lazy/Half-v0
        assert [s.id for s in reg.all_specs()] == ["Local-v0", "lazy/Half-v0", "lazy/A-v0"]

    try:
        assert _in_forked_child(child) == 0
    finally:
        release.set()
    assert _finished(loading)
    assert got == ["lazy/A-v0"] and runs == [1]


class AcmePlugin:
    @staticmethod
    @hookimpl
    def sekai_register_envs(registry):
        registry.register("acme/Foo-v0", "acme.envs:Foo")


@needs_fork
@forks_threads
def test_a_child_forked_while_another_thread_discovers_plugins_discovers_them_again():
    started, release, calls = threading.Event(), threading.Event(), []
    plugin = EntryPointRecord("acme", "acme-envs", "1.2.0", lambda: AcmePlugin)

    def factory(reg):
        calls.append(1)
        if len(calls) == 1:
            started.set()
            assert release.wait(timeout=10), "the test never released discovery"
        return PluginHost(reg, entry_points=[plugin], disabled="")

    reg = EnvRegistry(factory)
    discovering, found = in_thread(lambda: [s.id for s in reg.all_specs()])
    assert started.wait(timeout=10)

    def child():
        reg.register("Local-v0", Dummy)
        assert [s.id for s in reg.all_specs()] == ["acme/Foo-v0", "Local-v0"]
        assert calls == [1, 1]

    try:
        assert _in_forked_child(child) == 0
    finally:
        release.set()
    assert _finished(discovering)
    assert found == [["acme/Foo-v0"]] and calls == [1]


def _looking_plugin(reg, name, looked_up):
    """A plugin whose hook looks ``mine/Drift-v0`` up (running the ``mine`` loader) and then
    calls ``looked_up()``, before registering ``{name}/Foo-v0``."""

    class Looking:
        @staticmethod
        @hookimpl
        def sekai_register_envs(registry):
            reg.spec("mine/Drift-v0")
            looked_up()
            registry.register(f"{name}/Foo-v0", "acme.envs:Foo")

    return EntryPointRecord(name, f"{name}-envs", "1.0", lambda: Looking)


def test_a_namespace_loader_run_by_a_discovery_cut_short_runs_again():
    runs = []

    def interrupt_once():
        runs.append(1)
        if len(runs) == 1:
            raise KeyboardInterrupt  # Ctrl-C during a slow import, after the loader ran

    reg = EnvRegistry(lambda reg: PluginHost(reg, entry_points=[plugin], disabled=""))
    plugin = _looking_plugin(reg, "acme", interrupt_once)
    reg.register_namespace("mine", lambda: reg.register("mine/Drift-v0", Dummy))
    with pytest.raises(KeyboardInterrupt):
        reg.all_specs()
    with warnings.catch_warnings():
        warnings.simplefilter("error", PluginLoadWarning)  # acme finds mine/Drift-v0 again
        assert sorted(s.id for s in reg.all_specs()) == ["acme/Foo-v0", "mine/Drift-v0"]
    assert runs == [1, 1]


@needs_fork
@forks_threads
def test_a_child_forked_while_a_plugin_hook_waits_runs_the_loader_it_ran_again():
    looked, release = threading.Event(), threading.Event()

    def wait_in_parent():
        looked.set()
        assert release.wait(timeout=10), "the test never released discovery"

    reg = EnvRegistry(lambda reg: PluginHost(reg, entry_points=[plugin], disabled=""))
    plugin = _looking_plugin(reg, "acme", wait_in_parent)
    reg.register_namespace("mine", lambda: reg.register("mine/Drift-v0", Dummy))
    discovering, found = _discovering(reg)
    assert looked.wait(timeout=10)

    def child():  # discovery's thread is not here: the child discovers again
        release.set()  # the hook runs again in the child: let it through
        assert reg.spec("mine/Drift-v0").id == "mine/Drift-v0"

    try:
        assert _in_forked_child(child) == 0
    finally:
        release.set()
    assert _finished(discovering)
    assert sorted(*found) == ["acme/Foo-v0", "mine/Drift-v0"]


class PooledPlugin:
    """Builds its specs in a thread pool, which registers them through the hook's argument."""

    @staticmethod
    @hookimpl
    def sekai_register_envs(registry):
        with ThreadPoolExecutor(2) as pool:
            names = ["acme/A-v0", "acme/B-v0", "acme/C-v0"]
            list(pool.map(lambda name: registry.register(name, "acme.envs:Env"), names))


def _discovering(reg):
    """Start a thread discovering ``reg``'s plugins; returns it and the IDs it then lists."""
    return in_thread(lambda: [s.id for s in reg.all_specs()])


def test_a_plugin_hook_may_register_from_a_thread_pool():
    plugin = EntryPointRecord("acme", "acme-envs", "1.2.0", lambda: PooledPlugin)
    reg = EnvRegistry(lambda reg: PluginHost(reg, entry_points=[plugin], disabled=""))
    discovering, found = _discovering(reg)
    assert _finished(discovering), "discovery waits for the hook's pool, which waits for it"
    assert found == [["acme/A-v0", "acme/B-v0", "acme/C-v0"]]
    assert {s.source.plugin for s in reg.all_specs()} == {"acme"}


def test_a_lookup_while_another_thread_discovers_plugins_waits_for_it():
    started, release = threading.Event(), threading.Event()

    class SlowPlugin:
        @staticmethod
        @hookimpl
        def sekai_register_envs(registry):
            started.set()
            assert release.wait(timeout=10), "the test never released discovery"
            registry.register("acme/Foo-v0", "acme.envs:Foo")

    plugin = EntryPointRecord("acme", "acme-envs", "1.2.0", lambda: SlowPlugin)
    reg = EnvRegistry(lambda reg: PluginHost(reg, entry_points=[plugin], disabled=""))
    discovering, found = _discovering(reg)
    assert started.wait(timeout=10)
    progress = threading.Event()
    reg._loading[_DISCOVERY].done = _WatchedEvent(progress)
    lookup, got = in_thread(lambda: reg.spec("acme/Foo-v0").id)
    assert progress.wait(timeout=10)
    assert got == []  # waiting: no EnvNotFound before the plugin has registered it
    release.set()
    assert _finished(discovering, lookup)
    assert found == [["acme/Foo-v0"]] and got == ["acme/Foo-v0"]


def test_a_hook_waiting_for_a_thread_that_calls_the_registry_fails_that_plugin_in_time():
    reg = None

    class StuckPlugin:  # its pool calls reg.spec(), which waits for discovery, which waits
        @staticmethod
        @hookimpl
        def sekai_register_envs(registry):
            with ThreadPoolExecutor(1) as pool:
                pool.submit(reg.spec, "classic/CartPole-v1").result()

    records = [
        EntryPointRecord("acme", "acme-envs", "1.2.0", lambda: AcmePlugin),
        EntryPointRecord("stuck", "stuck-envs", "0.1.0", lambda: StuckPlugin),
    ]
    reg = EnvRegistry(lambda reg: PluginHost(reg, entry_points=records, disabled=""))
    reg._wait_timeout = 0.2
    with pytest.warns(PluginLoadWarning) as caught:
        discovering, found = _discovering(reg)
        assert _finished(discovering)
    assert found == [["acme/Foo-v0"]]
    assert str(caught[0].message) == (
        "sekai plugin 'stuck' (stuck-envs 0.1.0) failed to load and was skipped: TimeoutError: "
        "This registry operation waited 0.2 s for the plugin discovery that another thread "
        "runs (it is loading plugin 'stuck' (stuck-envs 0.1.0)). If a plugin's hook waits for "
        "this thread (a thread pool it started), neither can go on: that thread registers "
        "through the hook's registry argument (registry.register(...)), not with sekai's "
        "registry functions, which wait for discovery. Set SEKAI_DISABLE_PLUGINS=stuck to "
        "silence this."
    )
