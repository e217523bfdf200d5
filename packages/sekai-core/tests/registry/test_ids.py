import pytest

from sekai.registry.ids import ParsedId, format_env_id, parse_env_id


@pytest.mark.parametrize(
    ("env_id", "expected"),
    [
        ("CartPole-v1", (None, "CartPole", 1)),
        ("ns/Env", ("ns", "Env", None)),
        ("my-env-v10", (None, "my-env", 10)),
        ("Env-v", (None, "Env-v", None)),
        ("quickstart/MeanReversion-v0", ("quickstart", "MeanReversion", 0)),
        ("a_b/c_d-v3", ("a_b", "c_d", 3)),
    ],
)
def test_parse_env_id_splits_namespace_name_and_version(env_id, expected):
    assert parse_env_id(env_id) == ParsedId(*expected)


@pytest.mark.parametrize("env_id", ["bad id!", "a/b/c", "", "/Env-v0", "ns/", "Env-v0 "])
def test_parse_env_id_rejects_malformed_ids_with_the_spec_message(env_id):
    with pytest.raises(ValueError) as info:
        parse_env_id(env_id)
    assert str(info.value) == (
        f"Invalid env ID {env_id!r}. Must match [namespace/]Name[-vN] "
        "(e.g. 'CartPole-v1', 'qc/MarketEnv-v0')."
    )


def test_parse_env_id_rejects_non_strings_with_type_error():
    with pytest.raises(TypeError, match="must be a str, got int"):
        parse_env_id(3)


@pytest.mark.parametrize("env_id", ["CartPole-v1", "ns/Env", "my-env-v10", "x/y-v0"])
def test_format_env_id_inverts_parse(env_id):
    assert format_env_id(*parse_env_id(env_id)) == env_id
