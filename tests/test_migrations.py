"""Migrations keep the meaning they had when written: a data migration carries
its own copy of the code it runs, and imports nothing of the apps' but what
Django's autodetector writes (a models module, for a custom field or manager)
and earlier migrations."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

BASE_DIR = Path(__file__).resolve().parent.parent
APPS = ("accounts", "core", "papers", "topics", "notifications", "config")
MIGRATIONS = sorted(
    path for app in APPS for path in (BASE_DIR / app / "migrations").glob("[0-9]*.py")
)


def imported(path: Path) -> set[str]:
    """The modules `path` imports: at its top, inside its functions, and by
    importlib.import_module("...")."""
    modules = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            modules |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module:
            modules.add(node.module)
        elif (
            isinstance(node, ast.Call)
            and ast.unparse(node.func).endswith("import_module")
            and isinstance(node.args[0], ast.Constant)
        ):
            modules.add(node.args[0].value)
    return modules


def live(module: str) -> bool:
    """A module of the apps whose code may change after the migration."""
    app, _, rest = module.partition(".")
    return app in APPS and rest != "models" and not rest.startswith("migrations.")


def test_every_migration_is_checked():
    assert len(MIGRATIONS) > 40


@pytest.mark.parametrize(
    "path", MIGRATIONS, ids=lambda path: f"{path.parent.parent.name}/{path.stem}"
)
def test_a_migration_imports_no_live_code_of_the_apps(path):
    assert sorted(filter(live, imported(path))) == []
