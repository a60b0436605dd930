"""`.env.example` lists every variable the settings read (README: Operating it)."""

from __future__ import annotations

import ast
import inspect
from pathlib import Path

import config.env

BASE_DIR = Path(__file__).resolve().parent.parent
# config.env's readers (secret, integer, rate...) and django-environ's (env.str).
READERS = {name for name, _ in inspect.getmembers(config.env, inspect.isfunction)}


def read_variables(path: Path) -> set[str]:
    """The names `path` reads: env.<type>("NAME"), env("NAME"), a config.env
    reader's "NAME", os.environ["NAME"] and os.environ.<method>("NAME")."""
    names = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Call) and node.args and reads(node.func):
            first = node.args[0]
        elif (
            isinstance(node, ast.Subscript) and ast.unparse(node.value) == "os.environ"
        ):
            first = node.slice
        else:
            continue
        if isinstance(first, ast.Constant) and isinstance(first.value, str):
            names.add(first.value)
    return names


def reads(func: ast.expr) -> bool:
    called = ast.unparse(func)
    return (
        called in READERS
        or called == "env"
        or called.startswith(("env.", "os.environ."))
    )


def listed() -> set[str]:
    lines = (BASE_DIR / ".env.example").read_text().splitlines()
    return {line.split("=", 1)[0] for line in lines if "=" in line and line[0] != "#"}


def settings_variables() -> set[str]:
    read = set()
    for path in (BASE_DIR / "config" / "settings").glob("*.py"):
        read |= read_variables(path)
    return read


def test_the_example_lists_every_variable_the_settings_read():
    read = settings_variables()

    assert {"MOMENTUM_SEEN_DAYS", "DATABASE_URL"} <= read  # the parse finds them
    assert read - listed() == set()
