"""data/ask/scope_ids.txt, the subset of the demo corpus the Ask tests load, is
what the seed rules of the questions' topics match (rebuild it with
`PYTHONPATH=. .venv/bin/python -m bench.ask --rebuild-scope-ids`)."""

from __future__ import annotations

import pytest

from bench.ask import load_questions
from bench.ask import needed_rows
from bench.ask import read_scope_ids


@pytest.mark.slow  # matches all 25,002 demo papers against the rules
def test_scope_ids_match_the_seed_rules():
    wanted = {row["id"] for row in needed_rows(load_questions())}

    assert read_scope_ids() == wanted
