import pytest

from accounts.templatetags.counts import counted


@pytest.mark.parametrize(
    ("count", "nouns", "words"),
    [
        (0, "paper", "no papers"),
        (1, "paper", "1 paper"),
        (6, "paper", "6 papers"),
        (0, "search,searches", "no searches"),
        (1, "search,searches", "1 search"),
        (3, "search,searches", "3 searches"),
    ],
)
def test_counted_names_the_count_with_its_noun(count, nouns, words):
    assert counted(count, nouns) == words
