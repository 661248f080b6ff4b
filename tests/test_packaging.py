"""Templates and migrations are found from a checkout and from an installed wheel."""

from __future__ import annotations

import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from referee.render import render_mail, template_dir

ROOT = Path(__file__).resolve().parent.parent


def test_templates_found_from_the_checkout():
    assert (template_dir() / "mail" / "common" / "error.txt").is_file()


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("wheel")
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(out), str(ROOT)],
        check=True,
        capture_output=True,
        timeout=300,
    )
    return next(out.glob("referee-*.whl"))


def test_wheel_ships_every_template_and_migration(wheel):
    names = set(zipfile.ZipFile(wheel).namelist())
    for path in (ROOT / "templates").rglob("*"):
        if path.is_file():
            assert f"referee/templates/{path.relative_to(ROOT / 'templates').as_posix()}" in names
    for path in (ROOT / "referee" / "store" / "migrations").rglob("*.py"):
        assert f"referee/{path.relative_to(ROOT / 'referee').as_posix()}" in names
    assert "scheduler/runner.py" in names


def test_templates_render_from_an_unpacked_wheel(wheel, tmp_path):
    zipfile.ZipFile(wheel).extractall(tmp_path)
    code = (
        "import referee.render as r, sys; d = r.template_dir(); "
        "assert str(d).startswith(sys.argv[1]), d; "
        "ctx = {'player': {'name': 'A'}, 'running': [], 'damaged': None}; "
        "print(r.render_mail('common', 'unaddressed', ctx).subject)"
    )
    assert "which match" in run_from(tmp_path, code)


def test_strict_undefined_catches_a_missing_variable():
    with pytest.raises(Exception, match="undefined"):
        render_mail("common", "unaddressed", {"player": {"name": "A"}})


def test_the_mail_stack_scripts_ship_in_the_wheel_and_are_found_from_it(wheel, tmp_path):
    """`referee demo --transport imap` runs them from an installed package too."""
    names = set(zipfile.ZipFile(wheel).namelist())
    for script in ("start-mailstack.sh", "install-mailstack.sh"):
        assert f"referee/mailstack_scripts/{script}" in names
    zipfile.ZipFile(wheel).extractall(tmp_path)
    code = (
        "import referee.mailstack as m, sys; "
        "assert str(m.SCRIPT).startswith(sys.argv[1]) and m.SCRIPT.is_file() and m.INSTALL_SCRIPT.is_file(), "
        "(m.SCRIPT, m.INSTALL_SCRIPT)"
    )
    run_from(tmp_path, code)


def run_from(folder, code: str) -> str:
    """Run ``code`` in a fresh interpreter that imports only what ``folder`` holds (an unpacked
    wheel); its output. ``sys.argv[1]`` is the folder."""
    proc = subprocess.run(
        [sys.executable, "-c", code, str(folder)],
        capture_output=True,
        text=True,
        cwd=folder,
        env={"PYTHONPATH": str(folder)},
        timeout=60,
    )
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


def test_wheel_ships_every_module(wheel):
    """Every module of the source tree is in the wheel (the package list is kept by hand)."""
    names = set(zipfile.ZipFile(wheel).namelist())
    for root in ("referee", "scheduler"):
        for path in (ROOT / root).rglob("*.py"):
            if "migrations" in path.parts:
                continue  # checked above, with the templates
            assert path.relative_to(ROOT).as_posix() in names, f"{path.relative_to(ROOT)} is not in the wheel"
