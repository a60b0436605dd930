"""Running a test module again on the embedded SQLite default, from a suite
that runs on PostgreSQL, for code with a path per database."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from django.conf import settings


def run_module_on_sqlite(module: str, tmp_path: Path) -> subprocess.CompletedProcess:
    """pytest on `module` (a test file) in a fresh SQLite database; -rs lists why
    tests were skipped."""
    env = {
        **os.environ,
        "DATABASE_URL": f"sqlite:///{tmp_path / 'db.sqlite3'}",
        "MOMENTUM_VAR_DIR": str(tmp_path),
    }
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-rs", "-p", "no:randomly", module],
        cwd=settings.BASE_DIR,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
