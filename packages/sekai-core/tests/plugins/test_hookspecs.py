from sekai.plugins import hookspecs


def test_both_hooks_are_historic_so_late_plugins_get_the_registrar():
    for hook in (hookspecs.sekai_register_envs, hookspecs.sekai_register_vector_backends):
        assert hook.sekai_spec["historic"] is True
        assert hook.__doc__.strip()
