from __future__ import annotations

import pytest

from papers.ingest.upsert import upsert_records
from papers.models import Paper
from tests.ask.pdfs import PAGES
from tests.ask.pdfs import tiny_pdf
from tests.papers.factories import collaboration
from topics.ask.answerers import MAX_SOURCE_CHARS
from topics.ask.extractive import ExtractiveAnswerer
from topics.ask.fulltext import FullTextError
from topics.ask.fulltext import extract_pages
from topics.ask.fulltext import passages
from topics.ask.retrieval import Scope
from topics.ask.retrieval import retrieve


def test_extracts_the_text_of_each_page():
    assert extract_pages(tiny_pdf(PAGES)) == PAGES


def test_refuses_a_broken_pdf():
    with pytest.raises(FullTextError):
        extract_pages(b"%PDF-1.4 this is not a pdf")


def test_cuts_pages_into_passages_that_never_cross_pages():
    found = passages(["one two three four five", "six"], words=2)

    assert [(p.page, p.text) for p in found] == [
        (1, "one two"),
        (1, "three four"),
        (1, "five"),
        (2, "six"),
    ]


def test_askpdf_answers_from_the_full_text_when_the_pdf_is_there(
    paper, settings, tmp_path
):
    settings.MOMENTUM_ASK_PDF_DIR = str(tmp_path)
    (tmp_path / "2606.00001.pdf").write_bytes(tiny_pdf(PAGES))
    question = "What does the ablation show about the value head?"

    sources = retrieve(Scope(paper=paper), question)
    answer = ExtractiveAnswerer().answer(question, sources)

    assert sources[0].label == "Abstract"
    assert sources[1].label == "Page 2"
    assert sources[1].url == f"{paper.pdf_url}#page=2"
    assert answer.claims[0].text == PAGES[1].split(". ", 1)[1]
    # Numbered in reading order: the passage quoted first is [1].
    assert answer.claims[0].citations == (1,)
    assert answer.by_number[1].label == "Page 2"


def test_askpdf_uses_abstract_and_metadata_without_a_pdf(paper, settings, tmp_path):
    settings.MOMENTUM_ASK_PDF_DIR = str(tmp_path)  # empty folder

    sources = retrieve(Scope(paper=paper), "tree search")

    assert len(sources) == 1
    assert sources[0].label == "Abstract"
    assert "Title: Tree search agent." in sources[0].text
    assert "Monte Carlo tree search" in sources[0].text


def test_unreadable_pdf_falls_back_to_the_abstract(paper, settings, tmp_path):
    settings.MOMENTUM_ASK_PDF_DIR = str(tmp_path)
    (tmp_path / "2606.00001.pdf").write_bytes(b"garbage")

    assert [s.label for s in retrieve(Scope(paper=paper), "tree search")] == [
        "Abstract"
    ]


def test_a_large_collaborations_abstract_reaches_the_answerer(db, settings, tmp_path):
    # 2,000 names before the abstract filled the source an answerer reads
    # (MAX_SOURCE_CHARS) with names alone.
    settings.MOMENTUM_ASK_PDF_DIR = str(tmp_path)
    upsert_records(collaboration(1, 2000))
    paper = Paper.objects.get()

    [source] = retrieve(Scope(paper=paper), "agents")

    assert "We train agents with reinforcement learning." in source.text
    assert len(source.text) < MAX_SOURCE_CHARS
    assert "Authors: Spokesperson, Deputy, Member 2," in source.text
    assert "Member 9 and 1,990 others." in source.text
