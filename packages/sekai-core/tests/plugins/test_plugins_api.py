import dataclasses
import pickle

import pytest

import sekai
from sekai.plugins import PluginFailure, PluginInfo, PluginReport, hookimpl, report
from sekai.testing import registry_sandbox


def test_hookimpl_marks_functions_for_the_sekai_project():
    @hookimpl
    def sekai_register_envs(registry):
        pass

    assert hasattr(sekai_register_envs, "sekai_impl")


def test_report_describes_the_default_registry():
    with registry_sandbox():
        result = report()
    assert isinstance(result, PluginReport)
    assert result.plugins == (
        PluginInfo("core", "sekai-core", sekai.__version__, (), ("sync", "async", "proc")),
    )
    assert result.failures == ()
    assert "sekai-ray" in result.missing


def test_report_types_are_frozen_and_picklable():
    failure = PluginFailure("acme", "acme-envs", "1.2.0", "import", "ImportError: x")
    assert pickle.loads(pickle.dumps(failure)) == failure
    assert failure.label == "plugin 'acme' (acme-envs 1.2.0)"
    with pytest.raises(dataclasses.FrozenInstanceError):
        failure.name = "other"


def test_env_not_found_with_failures_survives_pickling():
    failure = PluginFailure("acme", "acme-envs", "1.2.0", "import", "ImportError: x")
    error = sekai.EnvNotFound("acme/A-v0", failures=(failure,), hint="Plugin failed.")
    clone = pickle.loads(pickle.dumps(error))
    assert clone.failures == (failure,)
    assert str(clone) == str(error)
