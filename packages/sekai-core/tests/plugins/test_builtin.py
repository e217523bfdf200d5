from sekai.testing import registry_sandbox
from sekai.vector import _builtin


def test_builtin_plugin_registers_core_modes_as_strings():
    assert _builtin.BACKENDS == {
        "sync": "sekai.vector.sync_vec_env:SyncVecEnv",
        "async": "sekai.vector.async_vec_env:AsyncVecEnv",
        "proc": "sekai.vector.proc.vec_env:ProcVecEnv",
    }
    with registry_sandbox() as registry:
        assert registry.vectorization_modes() == ["native", "sync", "async", "proc"]
        assert all(registry.backend(mode) == ep for mode, ep in _builtin.BACKENDS.items())
        assert registry.backend_source("sync").distribution == "sekai-core"


def test_builtin_backend_entry_points_resolve_to_vec_env_classes():
    from sekai.registry.spec import load_entry_point

    for mode in ("sync", "async"):
        cls = load_entry_point(_builtin.BACKENDS[mode])
        assert cls.__name__ == {"sync": "SyncVecEnv", "async": "AsyncVecEnv"}[mode]
