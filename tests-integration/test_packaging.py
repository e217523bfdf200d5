"""Packaging invariants of guide §2, checked on the built wheels and the installed distributions."""

from __future__ import annotations

import configparser
import email.parser
import json
import sys
import zipfile
from importlib import metadata
from pathlib import Path, PurePosixPath
from typing import Any

import pytest
from packaging.requirements import Requirement

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - the test dependency group installs tomli below 3.11
    import tomli as tomllib  # type: ignore[import-not-found,unused-ignore]

pytestmark = pytest.mark.full

REPO_ROOT = Path(__file__).resolve().parents[1]
FIRST_PARTY = ("sekai-core", "sekai-classic", "sekai-finance", "sekai-compat", "sekai-cli")
# Built by `nox -s wheels` but installed by their own sessions only (heavy dependencies).
OWN_SESSION = ("sekai-ray", "sekai-jax", "sekai-torch")
META = "sekai"
PACKS = ("sekai-example-pack", "sekai-broken-pack")
CORE_ONLY = {"sekai/__init__.py", "sekai/envs/__init__.py"}


def _pyproject(folder: Path) -> dict[str, Any]:
    with (folder / "pyproject.toml").open("rb") as file:
        data: dict[str, Any] = tomllib.load(file)
    return data


def _first_party_pyprojects() -> dict[str, dict[str, Any]]:
    """Every first-party pyproject.toml (the meta-distribution's too), by distribution name."""
    found = {}
    for path in sorted((REPO_ROOT / "packages").glob("*/pyproject.toml")):
        data = _pyproject(path.parent)
        found[data["project"]["name"]] = data
    return found


def _wheel(wheelhouse: Path, dist: str) -> zipfile.ZipFile:
    found = sorted(wheelhouse.glob(f"{dist.replace('-', '_')}-*.whl"))
    assert len(found) == 1, f"expected one wheel of {dist} in {wheelhouse} (run `nox -s wheels`)"
    return zipfile.ZipFile(found[0])


def _files(wheel: zipfile.ZipFile) -> set[str]:
    """The files a wheel installs, without its .dist-info metadata."""
    return {name for name in wheel.namelist() if ".dist-info/" not in name}


def _written_packs() -> list[str]:
    return [p for p in PACKS if (REPO_ROOT / "tests-integration" / "packs" / p).is_dir()]


def test_wheelhouse_holds_one_wheel_per_distribution_at_the_pyproject_version(
    wheelhouse: Path,
) -> None:
    pyprojects = _first_party_pyprojects()
    for dist in (*FIRST_PARTY, *OWN_SESSION, META):
        with _wheel(wheelhouse, dist) as wheel:
            info = next(n for n in wheel.namelist() if n.endswith(".dist-info/METADATA"))
            headers = email.parser.Parser().parsestr(wheel.read(info).decode(), headersonly=True)
            assert headers["Version"] == pyprojects[dist]["project"]["version"], dist
    for pack in _written_packs():
        _wheel(wheelhouse, pack).close()


def test_only_sekai_core_ships_the_sekai_and_sekai_envs_init_modules(wheelhouse: Path) -> None:
    with _wheel(wheelhouse, "sekai-core") as core:
        assert _files(core) >= CORE_ONLY
    for dist in (*FIRST_PARTY[1:], META, *_written_packs()):
        with _wheel(wheelhouse, dist) as wheel:
            clash = _files(wheel) & CORE_ONLY
            assert not clash, f"{dist} ships {sorted(clash)}, which would overwrite sekai-core's"


def _contributed_roots(files: set[str]) -> tuple[set[PurePosixPath], set[str]]:
    """Return the top packages a wheel contributes to ``sekai`` and modules outside any package.

    A contributed root is a package whose parent has no ``__init__.py`` in the same wheel
    (``sekai/finance``, ``sekai/envs/finance``; ``sekai`` itself for sekai-core).
    """
    paths = {PurePosixPath(name) for name in files if name.startswith("sekai/")}
    packages = {p.parent for p in paths if p.name == "__init__.py"}
    roots = {p for p in packages if p.parent not in packages}
    stray = {
        str(p)
        for p in paths
        if p.suffix == ".py" and not any(p.is_relative_to(package) for package in packages)
    }
    return roots, stray


def test_every_contributed_subpackage_has_its_own_py_typed(wheelhouse: Path) -> None:
    for dist in (*FIRST_PARTY, *OWN_SESSION):
        with _wheel(wheelhouse, dist) as wheel:
            files = _files(wheel)
        roots, stray = _contributed_roots(files)
        assert roots, f"{dist} contributes no package under sekai/"
        assert not stray, f"{dist} ships modules outside a package of its own: {sorted(stray)}"
        untyped = sorted(str(root) for root in roots if f"{root}/py.typed" not in files)
        assert not untyped, f"{dist} lacks py.typed in {untyped}"


def test_contributed_roots_find_each_portion_and_stray_modules() -> None:
    files = {
        "sekai/finance/__init__.py",
        "sekai/finance/sub/__init__.py",
        "sekai/envs/finance/__init__.py",
        "sekai/envs/stray.py",
    }
    roots, stray = _contributed_roots(files)
    assert roots == {PurePosixPath("sekai/finance"), PurePosixPath("sekai/envs/finance")}
    assert stray == {"sekai/envs/stray.py"}


def test_the_meta_distribution_ships_no_modules(wheelhouse: Path) -> None:
    with _wheel(wheelhouse, META) as wheel:
        assert _files(wheel) == set()


def test_packs_put_no_module_under_the_first_party_namespace(wheelhouse: Path) -> None:
    for pack in _written_packs():
        with _wheel(wheelhouse, pack) as wheel:
            assert not {n for n in _files(wheel) if n.startswith("sekai/")}, pack


def test_every_distribution_ships_the_repository_licence_in_its_wheel(wheelhouse: Path) -> None:
    licence = (REPO_ROOT / "LICENSE").read_bytes()
    assert licence.startswith(b"MIT License\n\nCopyright (c) 2026 the sekai authors\n")
    pyprojects = _first_party_pyprojects()
    assert set(pyprojects) == {*FIRST_PARTY, *OWN_SESSION, META}
    for dist, data in pyprojects.items():
        # hatchling takes license files from the distribution's own folder: each keeps a copy
        folder = REPO_ROOT / "packages" / dist
        assert (folder / "LICENSE").read_bytes() == licence, f"{dist}: LICENSE differs"
        assert data["project"]["license-files"] == ["LICENSE"], dist
        with _wheel(wheelhouse, dist) as wheel:
            info = next(n for n in wheel.namelist() if n.endswith(".dist-info/METADATA"))
            headers = email.parser.Parser().parsestr(wheel.read(info).decode(), headersonly=True)
            assert headers.get_all("License-File") == ["LICENSE"], dist
            assert headers["License-Expression"] == "MIT", dist
            shipped = info.replace("/METADATA", "/licenses/LICENSE")
            assert wheel.read(shipped) == licence, dist


def test_first_party_pyprojects_share_one_version_pinned_with_compatible_release() -> None:
    pyprojects = _first_party_pyprojects()
    assert {*FIRST_PARTY, META} <= set(pyprojects)
    versions = {name: data["project"]["version"] for name, data in pyprojects.items()}
    assert len(set(versions.values())) == 1, versions
    version = next(iter(versions.values()))
    for name, data in pyprojects.items():
        project = data["project"]
        requirements = list(project.get("dependencies", []))
        for extra in project.get("optional-dependencies", {}).values():
            requirements += extra
        for text in requirements:
            requirement = Requirement(text)
            if requirement.name.startswith("sekai"):
                assert str(requirement.specifier) == f"~={version}", f"{name}: {text}"


def test_the_meta_distributions_extras_are_the_documented_ones_and_pull_no_heavy_library() -> None:
    # sekai-ray, sekai-jax and sekai-torch are installed by name (torch pinned to the CPU
    # build): an extra pulling sekai-torch would install an unpinned, multi-GB CUDA torch.
    extras = _first_party_pyprojects()[META]["project"]["optional-dependencies"]
    page = (REPO_ROOT / "docs" / "pages" / "installation.md").read_text()
    table = page.split("| Extra of `sekai` |", 1)[1].split("\n\n", 1)[0]
    documented = {line.split("`")[1] for line in table.splitlines()[2:]}
    assert set(extras) == documented
    pulled = {Requirement(text).name for texts in extras.values() for text in texts}
    assert not pulled & {"sekai-jax", "sekai-torch"}, pulled
    # Ray only on request: its own extra (guide §1), never in "all"
    assert [Requirement(text).name for text in extras["ray"]] == ["sekai-ray"]
    assert "sekai-ray" not in {Requirement(text).name for text in extras["all"]}


def test_the_gymnasium_extras_install_a_gymnasium_the_vector_bridges_accept() -> None:
    # to_gymnasium_vector / from_gymnasium_vector need the newest floor of the bridges: an
    # extra asking for less would let `pip install "sekai-compat[gymnasium]"` keep a gymnasium
    # they refuse. The meta-distribution's extras forward to these.
    from sekai.compat._gym_vector import _VECTOR_GYMNASIUM

    extras = _first_party_pyprojects()["sekai-compat"]["project"]["optional-dependencies"]
    for extra in ("gymnasium", "pettingzoo"):
        (gymnasium,) = [r for r in map(Requirement, extras[extra]) if r.name == "gymnasium"]
        floor = next(s.version for s in gymnasium.specifier if s.operator == ">=")
        assert floor == _VECTOR_GYMNASIUM, f"sekai-compat[{extra}]: {gymnasium}"
    meta = _first_party_pyprojects()[META]["project"]["optional-dependencies"]
    for extra in ("gymnasium", "pettingzoo"):
        (forwarded,) = map(Requirement, meta[extra])
        assert (forwarded.name, forwarded.extras) == ("sekai-compat", {extra}), forwarded


def test_wheel_entry_points_are_those_of_the_pyproject(wheelhouse: Path) -> None:
    for name, data in _first_party_pyprojects().items():
        declared = data["project"].get("entry-points", {}).get("sekai", {})
        with _wheel(wheelhouse, name) as wheel:
            text = next(
                (
                    wheel.read(n).decode()
                    for n in wheel.namelist()
                    if n.endswith("entry_points.txt")
                ),
                "",
            )
        parser = configparser.ConfigParser(delimiters=("=",))
        parser.optionxform = str  # type: ignore[assignment,method-assign]
        parser.read_string(text)
        shipped = dict(parser["sekai"]) if parser.has_section("sekai") else {}
        assert shipped == declared, name


@pytest.mark.minimal
def test_no_sekai_directory_at_the_repository_root() -> None:
    # It would join sekai.__path__ (extend_path) whenever the checkout is on sys.path.
    assert not (REPO_ROOT / "sekai").exists()


@pytest.mark.minimal
def test_installed_first_party_distributions_are_wheels_not_checkouts() -> None:
    installed = []
    for dist in FIRST_PARTY:
        try:
            distribution = metadata.distribution(dist)
        except metadata.PackageNotFoundError:
            continue
        installed.append(dist)
        direct_url = json.loads(distribution.read_text("direct_url.json") or "{}")
        assert not direct_url.get("dir_info", {}).get("editable"), f"{dist} is editable"
    assert "sekai-core" in installed
    import sekai

    assert "site-packages" in Path(sekai.__file__).parts, sekai.__file__
