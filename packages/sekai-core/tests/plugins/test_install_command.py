"""The install command every "not installed" hint names: it works where the user is."""

from pathlib import Path

from sekai._providers import install_command_from


def checkout(tmp_path: Path, *dists: str) -> Path:
    """A fake sekai checkout holding ``packages/<dist>/pyproject.toml`` for each of ``dists``."""
    for dist in dists:
        (tmp_path / "packages" / dist).mkdir(parents=True)
        (tmp_path / "packages" / dist / "pyproject.toml").write_text("")
    return tmp_path


def dir_url(path: Path, *, editable: bool) -> dict[str, object]:
    return {"url": path.as_uri(), "dir_info": {"editable": editable} if editable else {}}


def test_an_editable_checkout_gets_an_editable_relative_path_from_its_root(tmp_path):
    root = checkout(tmp_path, "sekai-core", "sekai-classic")
    core = dir_url(root / "packages" / "sekai-core", editable=True)
    assert install_command_from("sekai-classic", core, root) == (
        "pip install -e ./packages/sekai-classic"
    )


def test_a_plain_checkout_install_gets_a_plain_path_absolute_outside_the_checkout(tmp_path):
    root = checkout(tmp_path / "repo", "sekai-core", "sekai-finance")
    core = dir_url(root / "packages" / "sekai-core", editable=False)
    elsewhere = tmp_path / "elsewhere"
    assert install_command_from("sekai-finance", core, elsewhere) == (
        f"pip install {root / 'packages' / 'sekai-finance'}"
    )


def test_a_wheel_install_gets_the_sibling_wheel_of_the_same_version(tmp_path):
    for name in (
        "sekai_core-0.3.0",
        "sekai_classic-0.2.0",
        "sekai_classic-0.3.0",
        "sekai_classic-0.4.0",
    ):
        (tmp_path / f"{name}-py3-none-any.whl").write_text("")
    core = {"url": (tmp_path / "sekai_core-0.3.0-py3-none-any.whl").as_uri(), "archive_info": {}}
    assert install_command_from("sekai-classic", core, tmp_path / "elsewhere") == (
        f"pip install {tmp_path / 'sekai_classic-0.3.0-py3-none-any.whl'}"
    )


def test_an_index_install_gets_the_published_name():
    assert install_command_from("sekai-ray", None, Path("/")) == "pip install sekai-ray"


def test_an_unreachable_origin_names_the_checkout_path_and_why(tmp_path):
    core = dir_url(tmp_path / "gone" / "sekai-core", editable=True)
    assert install_command_from("sekai-ray", core, tmp_path) == (
        "pip install ./packages/sekai-ray (in a sekai checkout: it is not on an index)"
    )


def test_a_path_with_spaces_is_quoted_for_the_shell(tmp_path):
    root = checkout(tmp_path / "my repo", "sekai-core", "sekai-ray")
    core = dir_url(root / "packages" / "sekai-core", editable=False)
    assert install_command_from("sekai-ray", core, tmp_path) == (
        "pip install './my repo/packages/sekai-ray'"
    )
