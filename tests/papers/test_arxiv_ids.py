"""Reading an arXiv id out of what people and feeds write (split_arxiv_id)."""

from __future__ import annotations

import pytest

from papers.ingest.records import ParseError
from papers.ingest.records import split_arxiv_id
from papers.ingest.upsert import upsert_records
from tests.papers.factories import paper_record


@pytest.mark.parametrize(
    ("text", "read"),
    [
        ("2607.21595", ("2607.21595", None)),
        ("2607.21595v3", ("2607.21595", 3)),
        ("0704.0001", ("0704.0001", None)),
        ("arXiv:2607.21595", ("2607.21595", None)),
        ("oai:arXiv.org:2607.21595", ("2607.21595", None)),
        ("http://arxiv.org/abs/2607.21595v1", ("2607.21595", 1)),
        ("https://arxiv.org/pdf/2607.21595v2.pdf", ("2607.21595", 2)),
        ("math/0601001", ("math/0601001", None)),
        ("hep-th/9901001v2", ("hep-th/9901001", 2)),
        ("math.AG/0601001", ("math.AG/0601001", None)),
        ("http://arxiv.org/abs/cond-mat/0601001v1", ("cond-mat/0601001", 1)),
    ],
)
def test_an_id_in_any_of_its_written_forms_is_read(text, read):
    assert split_arxiv_id(text) == read


@pytest.mark.parametrize(
    "text",
    [
        # A digit too many is a typo, not the paper whose id it holds.
        "2607.215951",
        "12607.21595",
        "x2607.21595y",
        # A subject class that is no part of an id, not "str-el/0601001".
        "cond-mat.str-el/0601001",
        "not an id",
    ],
)
def test_text_that_only_holds_an_id_inside_a_longer_run_is_no_id(text):
    with pytest.raises(ParseError, match="not an arXiv identifier"):
        split_arxiv_id(text)


@pytest.mark.django_db
def test_a_mistyped_id_opens_no_other_paper(client):
    upsert_records([paper_record("2606.00001")])

    assert client.get("/papers/2606.000011/").status_code == 404
    assert client.get("/papers/2606.00001/").status_code == 200


@pytest.mark.django_db
def test_an_old_style_id_in_capitals_opens_its_paper(client):
    """As search reads it: people copy HEP-TH/9901001 from old references."""
    upsert_records([paper_record("hep-th/9901001")])

    for asked, moved in [
        ("HEP-TH/9901001", "/papers/hep-th/9901001/"),
        ("HEP-TH/9901001v2", "/papers/hep-th/9901001/?v=2"),
        ("arXiv:HEP-TH/9901001", "/papers/hep-th/9901001/"),
    ]:
        response = client.get(f"/papers/{asked}/")
        assert response.status_code == 301, asked
        assert response["Location"] == moved


@pytest.mark.django_db
def test_an_old_style_id_not_held_in_capitals_says_where_to_read_it(client):
    response = client.get("/papers/MATH.GT/0309136v1/")

    assert response.status_code == 404
    assert "math.GT/0309136v1" in response.text
