"""The offline answerer's choices, on hand-made sources (no database)."""

from __future__ import annotations

from papers.models import Paper
from topics.ask.extractive import ExtractiveAnswerer
from topics.ask.extractive import approach_name
from topics.ask.retrieval import Source
from topics.ask.retrieval import paper_text
from topics.ask.sentence_scores import quotable_sentences

QUESTION = "How do agents assign credit across turns in multi-turn RL?"


def source(number: int, title: str, abstract: str) -> Source:
    paper = Paper(pk=number, arxiv_id=f"2607.{number:05d}", title=title)
    paper.abstract = abstract
    return Source(number=number, paper=paper, text=paper_text(paper))


TRACE = source(
    1,
    "TRACE: Turn-level Reward Assignment via Credit Estimation for Multi-Turn Agents",
    "Agents are increasingly deployed in the wild. "
    "We propose TRACE, which assigns credit to each turn of a multi-turn agent "
    "from temporal-difference changes in value. "
    "On BrowseComp-Plus it raises accuracy from 7.2 to 35.6 points.",
)
ECHO = source(
    2,
    "ECHO: Epistemic Credit for Language Agents",
    "Language agents must decide what to seek. "
    "We introduce ECHO, which assigns turn-level credit to multi-turn agents "
    "with posterior-sensitive rewards in RL. "
    "Digital Adoption Platforms are embedded overlays for enterprise software.",
)
ECHO_AGAIN = source(
    3,
    "Turn credit, revisited",
    "A replication of earlier work on interfaces. "
    "We introduce ECHO, which assigns turn-level credit to multi-turn agents "
    "with posterior-sensitive rewards in RL training.",
)
UNRELATED = source(
    4,
    "A survey of protein folding",
    "Protein folding is studied with diffusion. We review twenty methods.",
)


def test_never_quotes_a_title_even_when_it_matches_best():
    answer = ExtractiveAnswerer().answer(QUESTION, [TRACE, ECHO])

    quoted = " ".join(claim.text for claim in answer.claims)
    assert "Turn-level Reward Assignment via Credit Estimation" not in quoted
    assert all(sentence != TRACE.paper.title for sentence in quotable_sentences(TRACE))


def test_title_with_a_question_mark_is_not_split_into_quotable_pieces():
    paper = source(
        5,
        "Is GraphRAG Needed? From Basic RAG to Graph and Agentic Solutions",
        "We compare nine RAG scenarios on semi-structured knowledge bases.",
    )

    assert quotable_sentences(paper) == [
        "We compare nine RAG scenarios on semi-structured knowledge bases."
    ]


def test_sentences_without_a_question_term_are_dropped():
    answer = ExtractiveAnswerer().answer(QUESTION, [TRACE, ECHO, UNRELATED])

    quoted = " ".join(claim.text for claim in answer.claims)
    assert "Digital Adoption Platforms" not in quoted
    assert "Protein" not in quoted
    assert UNRELATED.paper in [s.paper for s in answer.also_relevant]


def test_a_near_duplicate_from_another_paper_is_cited_with_the_claim_it_repeats():
    answer = ExtractiveAnswerer().answer(QUESTION, [TRACE, ECHO, ECHO_AGAIN])

    echo_claims = [c for c in answer.claims if "We introduce ECHO" in c.text]
    assert len(echo_claims) == 1
    cited = {answer.by_number[n].paper for n in echo_claims[0].citations}
    assert cited == {ECHO.paper, ECHO_AGAIN.paper}


def test_citations_read_in_order_and_the_lead_names_the_approaches():
    answer = ExtractiveAnswerer().answer(QUESTION, [UNRELATED, ECHO, TRACE])

    numbers = [n for claim in answer.claims for n in claim.citations]
    assert numbers == sorted(numbers)
    assert numbers[0] == 1
    first, second = (approach.name for approach in answer.approaches)
    assert {first, second} == {"TRACE", "ECHO"}
    assert answer.lead == f"Two lines of work: {first} [1] and {second} [2]."
    assert answer.text.startswith(answer.lead)
    # The unquoted paper comes after the cited ones.
    assert [s.paper for s in answer.also_relevant] == [UNRELATED.paper]
    assert answer.also_relevant[0].number == 3


def test_the_best_ranked_paper_has_a_voice_even_when_others_match_more():
    weak_first = source(
        1,
        "Memory for agents",
        "Background on memory. We propose a memory store for agents in RL.",
    )
    strong = [
        source(
            n,
            f"Paper {n}",
            f"Method {n} assigns credit across turns of multi-turn agents in RL "
            f"with variant {n} of the critic.",
        )
        for n in range(2, 8)
    ]

    answer = ExtractiveAnswerer().answer(QUESTION, [weak_first, *strong])

    assert weak_first.paper in [s.paper for s in answer.cited]


def test_collection_weights_decide_between_sentences():
    # In this collection "credit" is everywhere and "posterior" is rare.
    rare_posterior = {"credit": 0.01, "posterior": 5.0, "turn": 0.01}
    question = "Which methods use posterior credit per turn?"
    a = source(1, "A", "Methods assign credit per turn with a posterior estimate.")
    b = source(2, "B", "Credit per turn, credit per step, credit per token.")

    answer = ExtractiveAnswerer(rare_posterior).answer(question, [b, a])

    assert answer.by_number[answer.claims[0].citations[0]].paper == a.paper


def test_approach_names_come_from_the_title_or_the_abstract():
    assert approach_name(TRACE) == "TRACE"
    dre = source(
        6,
        "Dynamic Rollout Editing for Reducing Overthinking in RL-Trained Models",
        "Models overthink. To address this, we introduce Dynamic Rollout "
        "Editing (DRE), a training-time intervention.",
    )
    assert approach_name(dre) == "DRE"
    plain = source(7, "Safe Exploration via Policy Priors", "We explore safely.")
    assert approach_name(plain) == "Safe Exploration via Policy Priors"
    long = source(8, "When Web Agents Finish but Still Fail in the Wild", "Agents.")
    assert approach_name(long) == "When Web Agents Finish but Still Fail…"


def test_one_paper_gets_no_lead_and_may_give_two_sentences_per_source():
    answer = ExtractiveAnswerer().answer(QUESTION, [TRACE])

    assert answer.lead == ""
    assert answer.claims
    assert all(c.citations == (1,) for c in answer.claims)


def test_a_sentence_with_one_common_word_of_a_long_question_is_not_an_answer():
    question = "Which reward shaping methods help long-horizon web agents?"
    off_topic = source(
        1,
        "Overlays",
        "Digital Adoption Platforms are embedded overlays that guide agents "
        "through enterprise software.",
    )

    answer = ExtractiveAnswerer().answer(question, [off_topic])

    assert answer.claims == []


def test_an_acronym_other_papers_use_too_is_the_fields_not_an_approach_name():
    """A paper presenting "an approach to ... Automatic Speech Recognition (ASR)"
    was named "ASR" in the lead ("Two lines of work: ASR [1] and ..."): the
    field's name, which the other papers use too."""
    decoding = source(
        1,
        "Cross-lingual Embedding Clustering for Hierarchical Softmax in "
        "Low-Resource Multilingual Speech Recognition",
        "We present a novel approach centered on the decoding stage of Automatic "
        "Speech Recognition (ASR) that enhances multilingual performance for "
        "low-resource languages.",
    )
    transfer = source(
        2,
        "Evaluating the Effect of Linguistic Relatedness on Cross-Lingual Transfer",
        "Extending automatic speech recognition (ASR) to low-resource African "
        "languages is constrained by data collection. We introduce Related-Language "
        "Adaptation (RLA), which adapts speech recognition to related languages.",
    )
    question = "How is speech recognition done for low-resource languages?"

    answer = ExtractiveAnswerer().answer(question, [decoding, transfer])

    assert answer.lead.startswith("Two lines of work: ")
    assert "ASR" not in answer.lead
    assert "Cross-lingual Embedding Clustering for Hierarchical Softmax…" in answer.lead
    # Its own acronym, which no other paper uses, still names a paper.
    assert "RLA" in answer.lead
