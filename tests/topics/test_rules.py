from __future__ import annotations

import itertools
import json
import pickle
from pathlib import Path

import pytest

from topics.rules import MAX_DEPTH
from topics.rules import MAX_PHRASE_WORDS
from topics.rules import MAX_RULE_LENGTH
from topics.rules import MAX_TERMS
from topics.rules import And
from topics.rules import AndNot
from topics.rules import Document
from topics.rules import Or
from topics.rules import RuleError
from topics.rules import RuleSet
from topics.rules import Term
from topics.rules import compile_new_rule
from topics.rules import compile_rule
from topics.rules import parse_rule
from topics.rules import to_arxiv_query
from topics.rules.patterns import build_pattern
from topics.rules.patterns import pattern_in
from topics.rules.terms import UNSTORED_IN_RUNS
from topics.rules.terms import AllOf
from topics.rules.terms import Condition
from topics.rules.terms import InCategory
from topics.rules.terms import Not
from topics.rules.terms import Word
from topics.rules.terms import document_terms
from topics.rules.terms import rule_condition
from topics.rules.terms import sure_condition
from topics.rules.text import _strip_latex_fully
from topics.rules.text import fold_plural
from topics.rules.text import split_words
from topics.rules.text import strip_latex
from topics.templatetags.rule_terms import matched_term

KAGGLE = next(
    (Path(__file__).parents[1] / "fixtures" / "arxiv" / "kaggle_jsonl").glob("*.jsonl")
)


def doc(
    title: str = "",
    abstract: str = "",
    authors: tuple[str, ...] = (),
    categories: tuple[str, ...] = (),
    comment: str = "",
) -> Document:
    return Document.from_fields(
        title=title,
        abstract=abstract,
        authors=authors,
        categories=categories,
        comment=comment,
    )


def matches(rule: str, document: Document) -> bool:
    return compile_rule(rule).match(document) is not None


# --- Matching ----------------------------------------------------------------

MATCH_TABLE = [
    # Words: case-insensitive, on word boundaries.
    ("agent", doc(abstract="An Agent acts."), True),
    ("agent", doc(abstract="A reagent reacts."), False),
    ("bert", doc(title="BERT rediscovers the pipeline"), True),
    ("bus", doc(abstract="business as usual"), False),
    # Phrases are consecutive words.
    ('"large language model"', doc(abstract="We train large language models."), True),
    ('"large language model"', doc(abstract="large models of language"), False),
    ('"language model"', doc(abstract="language. Model"), True),
    ('"agent robot"', doc(title="An agent", abstract="Robot arms"), False),
    ('"model agent"', doc(title="A model", comment="agent"), False),
    ('"robot arm"', doc(abstract="robot", comment="arm"), False),
    ('"robot arm control"', doc(abstract="robot arm, control"), True),
    ('"robot arm control"', doc(abstract="robot arm. arm control"), False),
    ('ti:"robot arm"', doc(title="Robot arms"), True),
    ('ti:"robot arm"', doc(title="Robot", abstract="arms"), False),
    # Implicit AND, and AND binding tighter than OR.
    ("agent robot", doc(abstract="agent and robot"), True),
    ("agent robot", doc(abstract="agent only"), False),
    ("agent OR robot AND arm", doc(abstract="an agent"), True),
    ("agent OR robot AND arm", doc(abstract="a robot"), False),
    ("agent OR robot AND arm", doc(abstract="a robot arm"), True),
    ("agent OR robot arm", doc(abstract="a robot"), False),
    ("robot AND arm OR agent", doc(abstract="an agent"), True),
    ("(agent OR robot) AND arm", doc(abstract="an agent"), False),
    # ANDNOT: binary, same level as AND, read left to right.
    ("agent ANDNOT robot", doc(abstract="an agent"), True),
    ("agent ANDNOT robot", doc(abstract="an agent and a robot"), False),
    ("agent ANDNOT robot OR arm", doc(abstract="agent robot arm"), True),
    ("agent ANDNOT robot ANDNOT arm", doc(abstract="agent arm"), False),
    ("agent ANDNOT robot arm", doc(abstract="agent arm"), True),
    ("agent ANDNOT (robot OR arm)", doc(abstract="agent arm"), False),
    # Every field; no field means all of title, abstract, authors and comment.
    ("ti:agent", doc(title="Agents at work"), True),
    ("ti:agent", doc(abstract="Agents at work"), False),
    ("abs:agent", doc(abstract="Agents at work"), True),
    ("abs:agent", doc(title="Agents at work"), False),
    ("co:workshop", doc(comment="Accepted at the NeurIPS workshop"), True),
    ("co:workshop", doc(abstract="a workshop"), False),
    ("au:hinton", doc(authors=("Geoffrey Hinton",)), True),
    ("au:hinton", doc(abstract="Hinton's idea"), False),
    ("all:hinton", doc(authors=("Geoffrey Hinton",)), True),
    ("hinton", doc(authors=("Geoffrey Hinton",)), True),
    ("workshop", doc(comment="workshop paper"), True),
    ("all:agent", doc(categories=("cs.AI",)), False),
    ("abs:(agent OR robot)", doc(abstract="a robot"), True),
    ("abs:(agent OR robot)", doc(title="a robot"), False),
    (
        'ti:("multi agent" OR swarm) cat:cs.MA',
        doc("Multi-agent", "", (), ("cs.MA",)),
        True,
    ),
    # Plurals, applied the same way to rules and text.
    ("agents", doc(abstract="one agent"), True),
    ("policy", doc(abstract="learned policies"), True),
    ("policies", doc(abstract="one policy"), True),
    ("search", doc(abstract="beam searches"), True),
    ("class", doc(abstract="three classes"), True),
    ("bias", doc(abstract="social biases"), True),
    ("cache", doc(abstract="KV caches"), True),
    ("llm", doc(abstract="LLMs reason"), True),
    ("LMs", doc(abstract="an LM"), True),
    ("mRNA", doc(abstract="mRNAs"), True),
    ("news", doc(abstract="new results"), False),
    ('"graph neural network"', doc(abstract="Graph Neural Networks"), True),
    # Hyphenation.
    ("multi-turn", doc(abstract="multi-turn dialogue"), True),
    ("multi-turn", doc(abstract="multi turn dialogue"), True),
    ("multi-turn", doc(abstract="multiturn dialogue"), True),
    ("multiturn", doc(abstract="multi-turn dialogue"), True),
    ("multiturn", doc(abstract="multi turn dialogue"), False),
    ('"multi turn"', doc(abstract="multi-turn dialogue"), True),
    ('"multi-turn dialogue"', doc(abstract="multiturn dialogues"), True),
    ('"multiturn dialogue"', doc(abstract="multi-turn dialogue"), True),
    ("multi-agents", doc(abstract="a multiagent system"), True),
    ('"multiagent selfplay"', doc(abstract="multi-agent self-play"), True),
    ('ti:"multiagent selfplay"', doc(title="Multi-Agent Self-Play"), True),
    ('abs:"multiagent selfplay"', doc(abstract="multi-agent self-play"), True),
    ('"multiagent play"', doc(abstract="multi-agent self-play"), False),
    ("art", doc(abstract="state-of-the-art results"), True),
    ('"state of the art"', doc(abstract="state-of-the-art results"), True),
    ("GPT4", doc(abstract="GPT-4 answers"), True),
    # Accents.
    ("Pérez", doc(abstract="as Perez showed"), True),
    ("perez", doc(abstract="as Pérez showed"), True),
    ("au:perez", doc(authors=("José Pérez",)), True),
    ("au:muller", doc(authors=("Jürgen Müller",)), True),
    ("naive", doc(abstract="a naïve Bayes classifier"), True),
    # LaTeX.
    ("lambdacdm", doc(abstract="the $\\Lambda$CDM model"), True),
    ("ΛCDM", doc(abstract="the $\\Lambda$CDM model"), True),
    ('"lambda cdm"', doc(abstract="the $\\Lambda$ CDM model"), True),
    ("foo", doc(abstract="a \\textit{foo} bar"), True),
    ("bar", doc(abstract="a {\\em bar} baz"), True),
    ("schrodinger", doc(abstract='the Schr\\"odinger equation'), True),
    ("schrodinger", doc(abstract='the Schr{\\"o}dinger equation'), True),
    ("au:erdos", doc(authors=("Paul Erd\\H{o}s",)), True),
    ("ecole", doc(abstract="at \\'Ecole Normale"), True),
    ("beta-VAE", doc(abstract="a $\\beta$-VAE prior"), True),
    ("beta-VAE", doc(abstract="a β-VAE prior"), True),
    ("alpha", doc(abstract="the $\\alpha$-stable law"), True),
    ("cite", doc(abstract="as shown \\cite{smith2020}"), False),
    # Wildcards: a prefix of one word.
    ("agent*", doc(abstract="agentic workflows"), True),
    ("agent*", doc(abstract="an agency"), False),
    ("ti:transform*", doc(title="Transformers"), True),
    ("ti:transform*", doc(abstract="Transformers"), False),
    ("polic*", doc(abstract="policies"), True),
    ("multi-ag*", doc(abstract="multi-agent systems"), True),
    ("au:sutske*", doc(authors=("Ilya Sutskever",)), True),
    # Authors: surname, full name, arXiv's underscores; never across two names.
    ("au:del_maestro", doc(authors=("Adrian Del Maestro",)), True),
    ("au:maestro", doc(authors=("Adrian Del Maestro",)), True),
    ('au:"Adrian Del Maestro"', doc(authors=("Adrian Del Maestro",)), True),
    ("au:Adrian_Del_Maestro", doc(authors=("Adrian Del Maestro",)), True),
    ("au:adrian_maestro", doc(authors=("Adrian Del Maestro",)), False),
    ("au:del_maestro", doc(authors=("Ann Del", "Maestro Jones")), False),
    ("au:jean-pierre", doc(authors=("Jean Pierre Serre",)), True),
    ("au:obrien", doc(authors=("Mary O'Brien",)), True),
    ("au:jones", doc(authors=("Ann Jone",)), False),
    # Categories: exact, or the archive.
    ("cat:cs.LG", doc(categories=("cs.LG", "stat.ML")), True),
    ("cat:cs.lg", doc(categories=("cs.LG",)), True),
    ("cat:cs.LG", doc(categories=("cs.LO",)), False),
    ("cat:cs", doc(categories=("cs.AI",)), True),
    ("cat:cs.*", doc(categories=("stat.ML", "cs.AI")), True),
    ("cat:cs", doc(categories=("math.CO",)), False),
    ("cat:math", doc(categories=("math-ph",)), False),
    ("cat:astro-ph", doc(categories=("astro-ph.GA",)), True),
    ("cat:astro-ph.*", doc(categories=("astro-ph",)), True),
    ("cat:hep-th", doc(categories=("hep-th",)), True),
    ("cat:(cs.LG OR stat.ML)", doc(categories=("stat.ML",)), True),
    # Operator words in quotes are plain words.
    ('"and"', doc(abstract="this and that"), True),
]


@pytest.mark.parametrize(("rule", "document", "expected"), MATCH_TABLE)
def test_rule_matches_text(rule: str, document: Document, expected: bool) -> None:
    assert matches(rule, document) is expected


def test_match_reports_the_terms_that_matched_in_rule_order() -> None:
    rule = compile_rule(
        'robot OR ti:agent OR abs:"reinforcement learning" OR au:hinton'
    )
    paper = doc(
        title="Agents that learn",
        abstract="Deep reinforcement learning for agents.",
        authors=("Geoffrey Hinton",),
    )
    assert rule.match(paper) == (
        "ti:agent",
        'abs:"reinforcement learning"',
        "au:hinton",
    )
    assert rule.terms == (
        "robot",
        "ti:agent",
        'abs:"reinforcement learning"',
        "au:hinton",
    )


def test_match_leaves_out_terms_of_branches_that_failed() -> None:
    rule = compile_rule("(agent ANDNOT robot) OR arm OR (hand AND leg)")
    assert rule.match(doc(abstract="agent robot arm hand")) == ("arm",)
    assert rule.match(doc(abstract="agent hand leg")) == ("agent", "hand", "leg")
    assert rule.match(doc(abstract="robot")) is None


def test_match_reports_a_repeated_term_once() -> None:
    rule = compile_rule("agent OR (agent AND robot)")
    assert rule.match(doc(abstract="agent robot")) == ("agent", "robot")
    assert rule.terms == ("agent", "robot")


def test_or_of_key_terms_reports_each_matching_term_once_in_rule_order() -> None:
    # Words, word pairs and author names are decided by index keys together;
    # a phrase in one field needs positions; a term may hold by two keys.
    rule = compile_rule(
        'robot OR "deep learning" OR ti:agent OR abs:"learning agent" '
        "OR au:hinton OR hinton OR cat:cs.AI"
    )
    paper = doc(
        title="Agents",
        abstract="A deep learning agent by Hinton.",
        authors=("Geoffrey Hinton",),
    )
    assert rule.match(paper) == (
        '"deep learning"',
        "ti:agent",
        'abs:"learning agent"',
        "au:hinton",
        "hinton",
    )
    assert rule.match(doc(abstract="agent learning deep")) is None
    assert rule.match(doc(categories=("cs.AI",))) == ("cat:cs.AI",)


def test_field_group_terms_are_shown_as_written() -> None:
    rule = compile_rule("abs:(agent OR robot) cat:cs.*")
    assert rule.terms == ("agent", "robot", "cat:cs.*")


# --- Normalisation -----------------------------------------------------------


@pytest.mark.parametrize(
    ("word", "folded"),
    [
        ("agents", "agent"),
        ("agent", "agent"),
        ("policies", "policy"),
        ("policy", "policy"),
        ("searches", "search"),
        ("approaches", "approach"),
        ("meshes", "mesh"),
        ("boxes", "box"),
        ("classes", "class"),
        ("losses", "loss"),
        ("loss", "loss"),
        ("cases", "case"),
        ("ideas", "idea"),
        ("videos", "video"),
        ("bus", "bus"),
        ("corpus", "corpus"),
        ("status", "status"),
        ("analysis", "analysis"),
        ("analyses", "analysis"),
        ("basis", "basis"),
        ("bias", "bias"),
        ("biases", "bias"),
        ("news", "news"),
        ("indices", "index"),
        ("matrices", "matrix"),
        ("movies", "movy"),
        ("movie", "movy"),
        ("caches", "cach"),
        ("cache", "cach"),
        ("ties", "ties"),
        ("gas", "gas"),
        ("its", "its"),
        ("3ds", "3ds"),
    ],
)
def test_fold_plural(word: str, folded: str) -> None:
    assert fold_plural(word) == folded


def test_split_words_normalises_case_accents_latex_and_hyphens() -> None:
    text = "Multi-Turn $\\Lambda$CDM \\textit{Pérez}'s LLMs, naïve x--y"
    assert split_words(text) == [
        ("multi", "turn"),
        ("lambdacdm",),
        ("perezs",),
        ("llm",),
        ("naive",),
        ("x",),
        ("y",),
    ]


def test_an_accented_letter_ends_where_its_word_does() -> None:
    """The accent's letter took the space after it: "Lam\\'e Curve" was the one
    word "lamecurve", and ti:"Lamé curve" matched nothing."""
    assert split_words(r"Lam\'e Curve, Poincar{\'e} maps, {\AA}ngstr\"om") == [
        ("lame",),
        ("curve",),
        ("poincare",),
        ("maps",),
        ("angstrom",),
    ]


def test_latex_fast_path_agrees_with_the_full_pass_on_real_papers() -> None:
    # strip_latex skips its regular expressions for text without a backslash.
    texts = ["$k$-means on {braces} and a~tilde", "no markup at all"]
    for line in KAGGLE.read_text().splitlines():
        paper = json.loads(line)
        texts += [paper["title"], paper["abstract"], paper["authors"]]
        texts.append(paper.get("comments") or "")
    assert sum("\\" not in text and "$" in text for text in texts) > 10
    for text in texts:
        assert strip_latex(text) == _strip_latex_fully(text)


def test_document_rejects_a_string_of_authors() -> None:
    with pytest.raises(TypeError):
        Document.from_fields(title="t", authors="Ann Smith, Bob Jones")


# --- Syntax ------------------------------------------------------------------


def test_parse_builds_the_tree_with_and_above_or() -> None:
    a, b, c = (
        Term("all", name, name, position)
        for name, position in (("a", 0), ("b", 2), ("c", 7))
    )
    assert parse_rule("a b OR c") == Or((And((a, b)), c))


def test_parse_turns_an_andnot_chain_into_one_exclusion() -> None:
    node = parse_rule("a ANDNOT b ANDNOT c")
    assert isinstance(node, AndNot)
    assert isinstance(node.right, Or)
    assert [term.value for term in node.right.operands] == ["b", "c"]


def test_parse_applies_a_field_to_a_group() -> None:
    node = parse_rule('abs:(agent OR "tool use") AND ti:robot*')
    assert isinstance(node, And)
    group, robot = node.operands
    assert isinstance(group, Or)
    assert [(t.field, t.value, t.quoted) for t in group.operands] == [
        ("abs", "agent", False),
        ("abs", "tool use", True),
    ]
    assert robot == Term("ti", "robot", "ti:robot*", 30, wildcard=True)


ERROR_TABLE = [
    ("", "rule is empty", 0),
    ("   ", "rule is empty", 0),
    ("agent)", 'unexpected ")"', 5),
    # Shown on every paper the rule tags: an escape would be too.
    ("ti:koopman\x1b", "a control character (U+001B) cannot be in a rule", 10),
    ('ti:"agent\x00"', "a control character (U+0000) cannot be in a rule", 9),
    ("(agent", 'unclosed "("', 0),
    ("(a OR (b)", 'unclosed "("', 0),
    ("a AND (b", 'unclosed "("', 6),
    ('ti:"multi agent', "unterminated quote", 3),
    ("xx:foo", 'unknown field "xx:" (use ti, abs, au, co, cat or all)', 0),
    ("agent jr:foo", 'unknown field "jr:" (use ti, abs, au, co, cat or all)', 6),
    ("foo AND", '"AND" needs a term after it', 4),
    ("foo OR", '"OR" needs a term after it', 4),
    ("(foo ANDNOT)", '"ANDNOT" needs a term after it', 5),
    ("OR bar", '"OR" needs a term before it', 0),
    ("AND", '"AND" needs a term before it', 0),
    ("ANDNOT robot", '"ANDNOT" needs a term before it', 0),
    ("(ANDNOT robot)", '"ANDNOT" needs a term before it', 1),
    ("a AND OR b", 'unexpected "OR" after "AND"', 6),
    ('""', "empty phrase", 0),
    ('ti:"  "', "empty phrase", 3),
    ("()", "empty parentheses", 0),
    ("a AND ( )", "empty parentheses", 6),
    ("abs:()", "empty parentheses", 4),
    ("*", 'wildcard "*" needs a word before it', 0),
    ('"agent"*', 'wildcard "*" needs a word before it', 7),
    ("ag*nt", '"*" can only end a word', 2),
    ("ab*", 'a wildcard needs at least 3 letters before "*"', 0),
    ("ti:", '"ti:" needs a term right after it', 0),
    ("ti: agent", '"ti:" needs a term right after it', 0),
    ("ti:OR", '"ti:" needs a term right after it', 0),
    ("ti:abs:agent", 'a field cannot follow "ti:"', 3),
    ("ti:(abs:agent)", 'field "abs:" inside "ti:(...)"', 4),
    (
        "agent or robot",
        '"or" is not an operator: write OR in capitals, '
        'or quote "or" to search for the word',
        6,
    ),
    (
        "agent and robot",
        '"and" is not an operator: write AND in capitals, '
        'or quote "and" to search for the word',
        6,
    ),
    (
        "agent NOT robot",
        '"NOT" is not an operator: write "a ANDNOT b", or quote "NOT"',
        6,
    ),
    ("- agent", '"-" has no letters or digits to match', 0),
    ("agent -robot", '"-robot" does not exclude: write "ANDNOT robot"', 6),
    ('"%%"', '"%%" has no letters or digits to match', 0),
    ("cat:cs.LG*", 'a category wildcard must be written "cs.*"', 0),
    ("cat:cs_LG", 'invalid category "cs_LG": write cs.LG, cs or cs.*', 0),
    ('cat:"cs.LG cs.AI"', 'invalid category "cs.LG cs.AI": write cs.LG, cs or cs.*', 0),
    ('"a b c d e f g h i j k l m"', "phrase is too long (13 words, limit 12)", 0),
    ("ti:a-b-c-d-e-f-g-h-i-j-k-l-m", "phrase is too long (13 words, limit 12)", 0),
]


@pytest.mark.parametrize(("rule", "message", "position"), ERROR_TABLE)
def test_invalid_rule_names_the_problem_and_its_position(
    rule: str, message: str, position: int
) -> None:
    with pytest.raises(RuleError) as caught:
        parse_rule(rule)
    assert (caught.value.message, caught.value.position) == (message, position)
    assert str(caught.value) == f"{message} at position {position}"


def test_rule_error_is_a_value_error_that_pickles() -> None:
    error = RuleError('unexpected ")"', 14)
    assert isinstance(error, ValueError)
    assert str(error) == 'unexpected ")" at position 14'
    copy = pickle.loads(pickle.dumps(error))
    assert (copy.message, copy.position) == ('unexpected ")"', 14)


def test_compile_rule_raises_the_same_errors() -> None:
    with pytest.raises(RuleError, match='unexpected "\\)" at position 1'):
        compile_rule("a)")


# --- Limits ------------------------------------------------------------------


def test_limits_allow_rules_up_to_them() -> None:
    depth = "(" * MAX_DEPTH + "agent" + ")" * MAX_DEPTH
    terms = " OR ".join(f"w{number}" for number in range(MAX_TERMS))
    phrase = '"' + " ".join(["agent"] * MAX_PHRASE_WORDS) + '"'
    longest = "agent" + " " * (MAX_RULE_LENGTH - 5)
    for rule in (depth, terms, phrase, longest):
        parse_rule(rule)


@pytest.mark.parametrize(
    ("rule", "message", "position"),
    [
        (
            "(" * 1_000 + "a" + ")" * 1_000,
            "parentheses nested too deeply (limit 20)",
            20,
        ),
        (
            "ti:(" + "(" * 20 + "a" + ")" * 21,
            "parentheses nested too deeply (limit 20)",
            23,
        ),
        (
            " OR ".join(["x"] * 10_000),
            "rule is too long (49996 characters, limit 5000)",
            5_000,
        ),
        (
            '"' + "a" * 1_000_000 + '"',
            "rule is too long (1000002 characters, limit 5000)",
            5_000,
        ),
        (" OR ".join(["x"] * 301), "too many terms (limit 300)", 1_500),
        ("x " * 400, "too many terms (limit 300)", 600),
    ],
    ids=[
        "nesting-1000",
        "nesting-in-field-group",
        "10000-terms",
        "1MB-phrase",
        "301-terms",
        "400-implicit-terms",
    ],
)
def test_pathological_rules_are_refused_by_a_limit(
    rule: str, message: str, position: int
) -> None:
    # A limit, not a RecursionError or a long stall: parsing is linear and each
    # parenthesis costs a bounded number of stack frames.
    with pytest.raises(RuleError) as caught:
        parse_rule(rule)
    assert (caught.value.message, caught.value.position) == (message, position)


# --- arXiv queries -----------------------------------------------------------


@pytest.mark.parametrize(
    ("rule", "query"),
    [
        ("agent", "all:agent"),
        ("ti:Agents", "ti:agents"),
        ('abs:"Large Language Models"', 'abs:"large language models"'),
        ("agent robot", "all:agent AND all:robot"),
        ("a OR b c", "all:a OR (all:b AND all:c)"),
        ("(a OR b) c", "(all:a OR all:b) AND all:c"),
        ("a ANDNOT b", "all:a ANDNOT all:b"),
        ("a ANDNOT b ANDNOT c", "all:a ANDNOT (all:b OR all:c)"),
        ("abs:(agent OR robot)", "abs:agent OR abs:robot"),
        ("ti:multi-turn", '(ti:"multi turn" OR ti:multiturn)'),
        ('ti:"multi-turn dialogue"', 'ti:"multi turn dialogue"'),
        ("agent*", "all:agent*"),
        ("au:del_maestro", "au:del_maestro"),
        ('au:"Adrian Del Maestro"', "au:adrian_del_maestro"),
        ("au:Pérez", "au:perez"),
        ("cat:cs.lg", "cat:cs.LG"),
        ("cat:cond-mat.stat-mech", "cat:cond-mat.stat-mech"),
        ("cat:cs", "(cat:cs OR cat:cs.*)"),
        ("cat:astro-ph.*", "(cat:astro-ph OR cat:astro-ph.*)"),
        ("$\\Lambda$CDM", "all:lambdacdm"),
    ],
)
def test_to_arxiv_query(rule: str, query: str) -> None:
    assert to_arxiv_query(parse_rule(rule)) == query


# --- Realistic papers and the rule set ---------------------------------------

PAPERS = [
    (
        "Tool-Augmented Large Language Model Agents for Multi-Turn Dialogue",
        "We study large language models (LLMs) acting as agents that call external "
        "tools over multi-turn conversations. Our benchmark shows that agentic "
        "policies trained with reinforcement learning outperform prompting.",
        ("Wei Zhang", "Adrian Del Maestro", "Sofía Martínez"),
        ("cs.CL", "cs.AI"),
        "Accepted at ACL 2026",
    ),
    (
        "Scaling Laws for Sparse Mixture-of-Experts Transformers",
        "We fit scaling laws for mixture-of-experts transformers with up to 1T "
        "parameters and find that expert count trades off against depth.",
        ("Noam Shazeer", "Barret Zoph"),
        ("cs.LG",),
        "",
    ),
    (
        "Constraints on $\\Lambda$CDM from Weak Lensing Surveys",
        "Cosmic shear measurements from three surveys constrain $\\Omega_m$ and "
        "$\\sigma_8$; we find no tension with the $\\Lambda$CDM model.",
        ("Hiranya Peiris", "Jürgen Müller"),
        ("astro-ph.CO",),
        "12 pages, 8 figures",
    ),
    (
        "Graph Neural Networks for Molecular Property Prediction",
        "Message-passing graph neural networks predict quantum-chemical properties "
        "of small molecules; we add equivariant layers and 3D coordinates.",
        ("Ann O'Brien", "Kyunghyun Cho"),
        ("cs.LG", "physics.chem-ph", "q-bio.BM"),
        "",
    ),
    (
        "Diffusion Policies for Robot Manipulation",
        "Diffusion models generate action sequences for a robot arm; the policy "
        "handles multimodal demonstrations in contact-rich tasks.",
        ("Cheng Chi", "Shuran Song"),
        ("cs.RO", "cs.LG"),
        "Project page online",
    ),
    (
        "Quantum Error Correction with Surface Codes below Threshold",
        "We demonstrate logical qubits whose error rate falls as the surface code "
        "distance grows, using real-time decoding.",
        ("John Martinis", "Rami Barends"),
        ("quant-ph",),
        "",
    ),
    (
        "Retrieval-Augmented Generation: A Survey",
        "Retrieval-augmented generation (RAG) grounds a language model in retrieved "
        "documents; we survey retrievers, rerankers and evaluation.",
        ("Patrick Lewis", "Ethan Perez"),
        ("cs.CL", "cs.IR"),
        "Survey, 40 pages",
    ),
    (
        'On the Schr\\"odinger Bridge Problem',
        'We connect the Schr\\"odinger bridge to entropic optimal transport and '
        "give a convergent algorithm for its numerical solution.",
        ("Yongxin Chen", "Tryphon Georgiou"),
        ("math.OC", "stat.ML"),
        "",
    ),
    (
        "Multi-Agent Reinforcement Learning in Traffic Networks",
        "A multiagent actor-critic method coordinates traffic signals; agents "
        "share a learned communication channel.",
        ("Marta Pérez", "Lucas Weber"),
        ("cs.MA", "cs.LG"),
        "",
    ),
    (
        "Exoplanet Atmospheres with JWST",
        "Transmission spectra of three hot Jupiters reveal water and carbon "
        "dioxide; we retrieve abundances with nested sampling.",
        ("Natasha Batalha",),
        ("astro-ph.EP",),
        "",
    ),
    (
        "Self-Supervised Speech Representations",
        "We pretrain speech encoders with masked prediction and evaluate on "
        "low-resource speech recognition.",
        ("Alexei Baevski", "Michael Auli"),
        ("cs.CL", "eess.AS"),
        "",
    ),
    (
        "Topological Phases in Twisted Bilayer Graphene",
        "Flat bands in twisted bilayer graphene host correlated insulators and "
        "superconductivity near the magic angle.",
        ("Pablo Jarillo-Herrero",),
        ("cond-mat.mes-hall", "cond-mat.str-el"),
        "",
    ),
    (
        "A Theory of In-Context Learning",
        "Transformers implement gradient descent in context; we prove this for "
        "linear regression tasks and test it on small language models.",
        ("Sébastien Bubeck", "Yin Tat Lee"),
        ("cs.LG", "stat.ML"),
        "",
    ),
    (
        "Vision-Language Models for Medical Imaging",
        "We adapt vision-language models to radiology reports and chest X-rays, "
        "reducing hallucinations with retrieval.",
        ("Pranav Rajpurkar",),
        ("cs.CV", "eess.IV"),
        "",
    ),
    (
        "Bounds on the Ramsey Numbers R(4,t)",
        "We improve the lower bound for the off-diagonal Ramsey numbers using "
        "a random greedy process.",
        ("Paul Erd\\H{o}s", "Joel Spencer"),
        ("math.CO",),
        "",
    ),
    (
        "Gravitational Waves from Binary Neutron Star Mergers",
        "We analyse the tidal deformability of neutron stars from gravitational "
        "wave signals detected by LIGO and Virgo.",
        ("Kip Thorne", "Gabriela González"),
        ("gr-qc", "astro-ph.HE"),
        "",
    ),
    (
        "Efficient KV Caches for Long-Context Inference",
        "Compressing key-value caches lets LLMs serve 1M-token contexts; we "
        "quantise caches and evict stale entries.",
        ("Tri Dao",),
        ("cs.LG", "cs.DC"),
        "",
    ),
    (
        "Fairness and Social Biases in Language Models",
        "We measure social biases in language model outputs and propose a "
        "debiasing objective; bias drops without hurting accuracy.",
        ("Timnit Gebru", "Emily Bender"),
        ("cs.CL", "cs.CY"),
        "",
    ),
    (
        "Protein Structure Prediction with Deep Learning",
        "An attention-based network predicts protein structures from sequences "
        "with atomic accuracy.",
        ("John Jumper", "Demis Hassabis"),
        ("q-bio.BM", "cs.LG"),
        "",
    ),
    (
        "Neural Operators for Partial Differential Equations",
        "Fourier neural operators learn solution maps of PDEs such as "
        "Navier-Stokes and generalise across resolutions.",
        ("Zongyi Li", "Anima Anandkumar"),
        ("cs.LG", "math.NA"),
        "",
    ),
]

RULES = {
    "agents": 'ti:agent* OR abs:("language model" AND agent*)',
    "llm": '"large language model" OR LLM OR "language model"',
    "rl": '"reinforcement learning" OR RL',
    "marl": 'multi-agent "reinforcement learning"',
    "moe": '"mixture of experts" OR MoE',
    "cosmology": "cat:astro-ph.CO OR ΛCDM OR lensing",
    "astro": "cat:astro-ph ANDNOT cat:astro-ph.CO",
    "gnn": '"graph neural network" OR GNN',
    "robots": "cat:cs.RO OR (robot* ANDNOT survey)",
    "quantum": "cat:quant-ph OR qubit",
    "rag": '"retrieval augmented" OR RAG OR retrieval',
    "transport": 'schrödinger OR "optimal transport"',
    "speech": "speech cat:eess.*",
    "graphene": "graphene OR cat:cond-mat.mes-hall",
    "icl": '"in-context learning" OR ti:"in context"',
    "vision": '"vision-language" OR cat:cs.CV',
    "combinatorics": "cat:math.CO ramsey",
    "gw": '"gravitational wave" OR au:thorne',
    "efficiency": "cache* OR quantise OR quantize",
    "fairness": "bias OR fairness ANDNOT co:survey",
    "bio": "cat:q-bio.* OR protein*",
    "pde": "ti:(operator OR pde) OR Navier-Stokes",
    "authors": "au:del_maestro OR au:perez OR au:erdos OR au:müller",
    "comments": "co:accepted OR co:(survey AND pages)",
    "mixed": "(ti:learning OR abs:learn*) AND cat:cs.LG ANDNOT cat:stat.ML",
    "never": "zebrafish OR cat:hep-lat",
    "negation": "model ANDNOT (language OR diffusion OR neural)",
    "transformers": "transformer*",
}


def realistic_documents() -> list[Document]:
    """Return 400 documents: the papers above, their fields recombined."""
    count = len(PAPERS)
    documents = []
    for number in range(400):
        title = PAPERS[number % count][0]
        abstract = PAPERS[(number * 7 + number // count) % count][1]
        authors = PAPERS[(number * 3 + 1) % count][2]
        categories = PAPERS[(number * 11 + 2) % count][3]
        comment = PAPERS[(number * 5 + 3) % count][4]
        documents.append(doc(title, abstract, authors, categories, comment))
    return documents


def test_realistic_papers_are_tagged_as_expected() -> None:
    rules = RuleSet({key: compile_rule(text) for key, text in RULES.items()})
    tagged = {
        paper[0].split()[0]: " ".join(sorted(rules.match(doc(*paper))))
        for paper in PAPERS
    }
    assert tagged == {
        "Tool-Augmented": "agents authors comments llm rl",
        "Scaling": "moe transformers",
        "Constraints": "authors cosmology negation",
        "Graph": "bio gnn",
        "Diffusion": "robots",
        "Quantum": "quantum",
        "Retrieval-Augmented": "authors comments llm rag",
        "On": "transport",
        "Multi-Agent": "agents authors marl mixed rl",
        "Exoplanet": "astro",
        "Self-Supervised": "speech",
        "Topological": "graphene",
        "A": "icl llm transformers",
        "Vision-Language": "llm rag vision",
        "Bounds": "authors combinatorics",
        "Gravitational": "astro gw",
        "Efficient": "efficiency llm",
        "Fairness": "fairness llm",
        "Protein": "bio mixed",
        "Neural": "mixed pde",
    }
    explained = rules.match(doc(*PAPERS[2]))
    assert explained["cosmology"] == ("cat:astro-ph.CO", "ΛCDM", "lensing")
    assert explained["authors"] == ("au:müller",)


def test_rule_set_agrees_with_each_rule_on_its_own() -> None:
    documents = realistic_documents()
    compiled = {key: compile_rule(text) for key, text in RULES.items()}
    rules = RuleSet(compiled)
    total = 0
    for document in documents:
        expected = {
            key: terms
            for key, rule in compiled.items()
            if (terms := rule.match(document)) is not None
        }
        assert rules.match(document) == expected
        total += len(expected)
    assert total > 1_000  # the recombined papers do match, often


def test_rule_set_only_runs_rules_whose_words_occur() -> None:
    rules = RuleSet(
        {
            "agent": compile_rule("ti:agent OR abs:agents"),
            "phrase": compile_rule('"graph neural network"'),
            "category": compile_rule("cat:cs.LG"),
            "prefix": compile_rule("transform*"),
        }
    )
    paper = doc(title="Agents", abstract="Neural networks", categories=("math.CO",))
    assert rules.candidates(paper) == [0]
    assert rules.candidates(doc(abstract="graph neural networks")) == [1]
    assert rules.candidates(doc(categories=("cs.LG",))) == [2]
    assert rules.candidates(doc(title="Transformers")) == [3]
    assert rules.candidates(doc(title="nothing here")) == []


def test_rule_set_with_many_prefixes_agrees_with_each_rule() -> None:
    # Prefixes are filed under their first three letters, or five when they are
    # that long: check prefixes of four, five and six letters.
    words = sorted(
        {
            part
            for paper in PAPERS
            for parts in split_words(paper[1])
            for part in parts
            if len(part) >= 5
        }
    )
    compiled = {
        (word, length): compile_rule(f"{word[:length]}* ANDNOT {word}")
        for word in words
        for length in (4, 5, 6)
    }
    rules = RuleSet(compiled)
    for document in realistic_documents()[:60]:
        expected = {
            key: terms
            for key, rule in compiled.items()
            if (terms := rule.match(document)) is not None
        }
        assert rules.match(document) == expected


def test_word_pair_keys_agree_with_phrase_positions() -> None:
    # Two-word phrases in ti:, au: and all: are decided by the document's pair
    # keys alone, so the keys must say exactly what the positions say.
    phrases = set()
    for paper in PAPERS:
        words = split_words(" ".join([paper[0], paper[1], *paper[2]]))
        for first, second in itertools.pairwise(words):
            for left in {first[-1], "".join(first)}:
                for right in {second[0], "".join(second)}:
                    phrases.add((left, right))
                    phrases.add((right, left))  # mostly absent
    documents = [doc(*paper) for paper in PAPERS]
    for left, right in sorted(phrases):
        pattern = build_pattern([(left,), (right,)], fold=True)
        key = f"{pattern[0][0][0]} {pattern[1][0][0]}"
        for document in documents:
            fields = (document.title, document.abstract, document.comment)
            positions = any(pattern_in(field, pattern) for field in fields)
            assert (key in document.pairs) == positions, (left, right)


def holds(condition: Condition, terms: frozenset[str], document: Document) -> bool:
    """Whether a paper with these stored terms satisfies the condition, as the
    database's full-text match answers it."""
    if isinstance(condition, Word):
        if condition.prefix:
            return any(term.startswith(condition.value) for term in terms)
        return condition.value in terms
    if isinstance(condition, InCategory):
        kinds = document.archives if condition.archive else document.categories
        return condition.name in kinds
    if isinstance(condition, Not):
        return not holds(condition.item, terms, document)
    items = (holds(item, terms, document) for item in condition.items)
    return all(items) if isinstance(condition, AllOf) else any(items)


def spellings(words: list[tuple[str, ...]]) -> set[str]:
    """A phrase of split words as a curator may write it: each hyphenated word
    with its hyphens, spaced out or joined up."""
    options = [
        {"-".join(parts), " ".join(parts), "".join(parts)}
        if len(parts) > 1
        else {parts[0]}
        for parts in words
    ]
    return {" ".join(choice) for choice in itertools.product(*options)}


def test_stored_runs_of_words_decide_what_the_matcher_decides() -> None:
    # A phrase of up to three words in ti:, au: or all: is decided by the
    # stored terms alone, so they must say exactly what positions say; a
    # longer one is only admitted by them, and decided by the matcher.
    documents = [doc(*paper) for paper in PAPERS]
    phrases = set()
    for paper in PAPERS:
        for text in (paper[0], paper[1], paper[2][0]):
            words = split_words(text)
            for length in (1, 2, 3, 4):
                for start in range(0, len(words) - length + 1, 3):
                    window = words[start : start + length]
                    phrases |= spellings(window)
                    phrases |= spellings(window[::-1])  # mostly absent
    assert len(phrases) > 1000
    decided = 0
    for phrase in sorted(phrases):
        for field in ("ti", "au", "all"):
            rule = compile_rule(f'{field}:"{phrase}"')
            sure = sure_condition(rule.node)
            necessary = rule_condition(rule.node)
            assert necessary is not None
            # Every spelling of a phrase of up to three words is one stored
            # run, unless a function word makes it three words left unstored.
            spaced = [part for parts in split_words(phrase) for part in parts]
            short = len(spaced) < 3 or (
                len(spaced) == 3 and UNSTORED_IN_RUNS.isdisjoint(spaced)
            )
            for document in documents:
                terms = document_terms(document)
                matches = rule.match(document) is not None
                assert not matches or holds(necessary, terms, document), (phrase, field)
                if sure is not None and holds(sure, terms, document):
                    assert matches, (phrase, field)
                    decided += 1
                elif matches and short:
                    raise AssertionError(f"{field}:{phrase!r} matches, not decided")
    assert decided > 500
    # A word of a hyphenated phrase may be a compound of the paper's: its stored
    # run "email_address" and the matcher agree.
    rule = compile_rule('ti:"email-address"')
    document = doc(title="E-mail address books")
    assert rule.match(document) is not None
    assert holds(sure_condition(rule.node), document_terms(document), document)


def test_rule_set_accepts_pairs_and_counts_its_rules() -> None:
    rules = RuleSet([(1, compile_rule("agent")), (2, compile_rule("robot"))])
    assert len(rules) == 2
    assert rules.match(doc(abstract="robot agents")) == {1: ("agent",), 2: ("robot",)}


def test_arxiv_query_means_what_the_rule_means() -> None:
    # Rendered queries parse again and match the same papers locally.
    documents = realistic_documents()[:100]
    for text in RULES.values():
        rule = compile_rule(text)
        rendered = compile_rule(to_arxiv_query(rule.node))
        for document in documents:
            assert (rule.match(document) is None) == (rendered.match(document) is None)


def test_compiled_rules_and_rule_sets_pickle() -> None:
    rule = compile_rule('ti:"multi agent" OR cat:cs.MA')
    copy = pickle.loads(pickle.dumps(rule))
    assert copy.text == rule.text
    assert copy.terms == rule.terms
    rules = pickle.loads(pickle.dumps(RuleSet({"r": rule})))
    assert rules.match(doc(title="Multi-agent systems")) == {"r": ('ti:"multi agent"',)}


@pytest.mark.parametrize(
    ("source", "worded"),
    [
        ("ti:agentic", "<q>agentic</q> in the title"),
        ('abs:"tool use"', "<q>tool use</q> in the abstract"),
        ("au:Levine", "<q>Levine</q> among the authors"),
        ("cat:cs.RO", "category cs.RO"),
        ('"world model"', "<q>world model</q>"),
        ("agent*", "<q>agent*</q>"),
        ("http://x", "<q>http://x</q>"),
        ("ti:<b>", "<q>&lt;b&gt;</q> in the title"),
    ],
)
def test_a_matched_term_is_worded_for_readers(source, worded):
    assert matched_term(source) == worded


@pytest.mark.parametrize(
    "rule", ["cat:cs.AI", "cat:cs.ai", "cat:cs", "cat:cs.*", "cat:hep-th", "cat:cmp-lg"]
)
def test_a_new_rule_names_categories_and_archives_of_arxivs_taxonomy(rule):
    assert compile_new_rule(rule).text == rule


@pytest.mark.parametrize(
    ("rule", "position"),
    [("cat:cs.Al", 0), ("ti:robot AND (cat:cs.RO OR cat:cs.RB)", 27), ("cat:xx.*", 0)],
)
def test_a_new_rule_naming_no_arxiv_category_is_refused_where_it_does(rule, position):
    """A typo (cs.Al for cs.AI, cs.RB for cs.RO) matched nothing, silently; a
    rule stored before is compiled as it is."""
    with pytest.raises(RuleError) as refused:
        compile_new_rule(rule)

    assert refused.value.position == position
    assert "arXiv has no such category" in str(refused.value)
    assert compile_rule(rule).text == rule


def test_an_error_says_where_it_is_in_a_long_rule() -> None:
    """A seed rule runs to 4,672 characters on one line: its text around the
    problem is shown, the place marked."""
    rule = " OR ".join(f'abs:"term {n}"' for n in range(200)) + " AND (ti:agent"
    with pytest.raises(RuleError) as caught:
        parse_rule(rule)

    assert caught.value.near(rule) == (
        'near “…rm 198" OR abs:"term 199" AND ⟨here⟩(ti:agent”'
    )
    assert RuleError('unexpected ")"', 1).near("a)") == "near “a⟨here⟩)”"
