"""LaTeX in titles and abstracts reads as plain text wherever a paper is shown."""

from __future__ import annotations

import feedparser
import pytest
from django.urls import reverse

from papers.ingest.upsert import upsert_records
from papers.latex import latex_to_text
from papers.links import linked
from papers.models import Paper
from tests.papers.factories import paper_record
from tests.topics.factories import make_topic
from topics.models import ReviewItem
from topics.tagging import tag_papers

TITLE = r"$\alpha$-divergence bounds for \emph{sparse} agents"
ABSTRACT = r"We bound it in $O(n^2)$ time for 50% of \textbf{all} inputs."
SHOWN_TITLE = "\u03b1-divergence bounds for sparse agents"
SHOWN_ABSTRACT = "We bound it in O(n²) time for 50% of all inputs."


@pytest.mark.parametrize(
    ("latex", "text"),
    [
        (r"$\alpha$-divergence", "\u03b1-divergence"),
        (r"\emph{x}", "x"),
        (r"$O(n^2)$", "O(n²)"),
        (r"Re$^3$Sim: $10^{-3}$ and $x^{-1/2}$", "Re³Sim: 10⁻³ and x^-1/2"),
        # Degrees (41 demo papers), and TeX's \char with the space it ends on.
        (r"Feed-Forward 360$^{\circ}$ Avatar", "Feed-Forward 360° Avatar"),
        (r"a 90$^\circ$ turn", "a 90° turn"),
        (r"Day\char45 Ahead", "Day-Ahead"),
        (r'a\char"2D b', "a-b"),
        (r"$\mathbb{H}_2$ control", "ℍ₂ control"),
        (r"Schr\"odinger and Erd\H{o}s--R\'enyi", "Schrödinger and Erdős–Rényi"),  # noqa: RUF001
        (r"$a \le \pi(x)$", "a ≤ \u03c0(x)"),
        (r"$\mathcal{O}(\log n)$", "𝒪(log n)"),  # noqa: RUF001
        # An unbraced argument is the next token, a character or a command, as
        # TeX reads it (174 in the demo): \sqrt n is \sqrt{n}.
        (r"$\sqrt n$, $\sqrt{n}$", "√(n), √(n)"),
        (r"$\frac 12$, $\frac{1}{2}$", "1/2, 1/2"),
        (r"$\tilde O(d)$, $\tilde{O}(d)$", "Õ(d), Õ(d)"),
        (r"$\mathbb R$, $\mathbb{R}$", "ℝ, ℝ"),  # noqa: RUF001
        (r"$\mathcal O(n)$, $\mathcal{O}(n)$", "𝒪(n), 𝒪(n)"),  # noqa: RUF001
        (r"$\hat x$, $\hat{x}$", "x̂, x̂"),
        (r"$\frac \sigma \varepsilon$", "σ/ε"),  # noqa: RUF001
        # A command without one keeps the space written after it.
        (r"$\alpha x$, $x \in \mathbb R$", "α x, x ∈ ℝ"),  # noqa: RUF001
        (r"$\bar\Theta = \Theta/G$", "Θ̅ = Θ/G"),
        # A link keeps its address, for the page to link (test below).
        (
            r"see \href{https://x.org}{the code} \cite{k}.",
            "see the code (https://x.org) .",
        ),
        (r"at \url{https://x.org/a\_b?c=1&d=2#e}.", "at https://x.org/a_b?c=1&d=2#e."),
        (r"\href{https://a.io/~me/}{\url{https://a.io/~me/}}", "https://a.io/~me/"),
        (
            r"found $\href{https://x.org/p/}{\text{here}}$.",
            "found here (https://x.org/p/).",
        ),
        (r"\href{}{no address}", "no address"),
        (r"at \href{https://www.x.org/a/}{x.org/a}.", "at https://www.x.org/a/."),
        (r"\texttt{vLLM}, i.i.d.\ samples", "vLLM, i.i.d. samples"),
        # TeX's quotes, in text with no other TeX too; a lone '' (f'') stays.
        (
            "``islands of competence'' and the model's ``don't know''",
            "“islands of competence” and the model's “don't know”",
        ),
        (r"an ``\emph{agent}'' and f''", "an “agent” and f''"),
        ('a ``black-box" model, a "box"', 'a “black-box” model, a "box"'),
        (
            "hedged (e.g., `usually') or `Sit'",
            "hedged (e.g., \u2018usually\u2019) or \u2018Sit\u2019",
        ),
        ("a `don't' and `a `b' c", "a `don't' and `a \u2018b\u2019 c"),
        # TeX's dashes: -- an en dash, --- an em dash...
        (
            "skills -- a space; Read--Write, 4--12, $4$--$12$ GHz---yet",
            "skills \u2013 a space; Read\u2013Write, 4\u201312, 4\u201312 GHz\u2014yet",
        ),
        # ...but not in an arrow, a flag or an address.
        (
            "a --> b <-- c <!-- d, run with --help at https://x.org/a--b",
            "a --> b <-- c <!-- d, run with --help at https://x.org/a--b",
        ),
        # TeX's tie, a space that does not break; not a "~" of an address or
        # of "about" (~2x).
        (
            "PSNR 28.7~dB within 5~ms, ~2x faster, at https://x.org/~me/",
            "PSNR 28.7\u00a0dB within 5\u00a0ms, ~2x faster, at https://x.org/~me/",
        ),
        # Braces alone are TeX's groups: a thousands separator, a kept capital.
        (
            "13{,}600 sessions of {S}ignal {P}reservation",
            "13,600 sessions of Signal Preservation",
        ),
        # Scripts in text read as in math: numbers raised, other text as it is.
        (
            r"Sn\textsuperscript{2+}, H\textsubscript{2}O, the 4\textsuperscript{th}, "
            r"x\textsuperscript{2}",
            "Sn2+, H₂O, the 4th, x²",
        ),
        # A percent sign is text, not a comment hiding the rest.
        (r"$x$ gains 50% over $y$", "x gains 50% over y"),
        # Dollars that are money, not math.
        (r"costs $5 and $10 with \emph{x}", "costs $5 and $10 with x"),
        (r"an odd $ and \emph{x}", "an odd $ and x"),
        # An author's own macro (411 demo papers) reads as its name, as arXiv's
        # listing shows it, not as a hole in the sentence.
        (
            r"Tool Attack Chaining (\STAC), a weakly \NP-hard case; \ours{} wins",
            "Tool Attack Chaining (STAC), a weakly NP-hard case; ours wins",
        ),
        (
            r"\eg the model, \ie its \etal{} text",
            "e.g. the model, i.e. its et al. text",
        ),
        # One with an argument is markup: its argument is the text.
        (r"a \revise{Type 2 Diabetes} study", "a Type 2 Diabetes study"),
        # Standard macros pylatexenc does not know read as typeset.
        (
            r"two 360{\deg} cameras, {\it which} ${\rm sign}(g)$",
            "two 360° cameras, which sign(g)",
        ),
        (r"a \enquote{free lunch} at \SI{12}{\percent}", "a “free lunch” at 12 %"),
        (r"$o\big(\tfrac{1}{n}\big)$, $f\colon X \ne Y$", "o(1/n), f: X ≠ Y"),
        (r"behavior $\unicode{x2013}$ as in SOC\@.", "behavior \u2013 as in SOC."),
        (r"LLaMA\nobreakdash-3.1, {\color{black} GNNs}", "LLaMA-3.1, GNNs"),
        # What the parser knows takes arguments stays hidden, as it was...
        (r"\label{sec:intro}Intro \citeauthor{vaswani2017} \vphantom{x}", "Intro"),
        # ...but for the text some show: \textsf{Cajal}, \verb|OLMo2-1B|.
        (
            r"$\textsf{Cajal}$ and \mbox{fast} \verb|OLMo2-1B| models",
            "Cajal and fast OLMo2-1B models",
        ),
        # An operator is set apart from what comes before it, as TeX sets it.
        (
            r"$O(n\log(1/\epsilon))$, $\min_x\max_y f$ and $(\log n)$",
            "O(n log(1/ϵ)), min_x max_y f and (log n)",
        ),
        # ...but not from a sign or an opening bracket.
        (r"$\Omega(d/\log(1/\delta))$", "Ω(d/log(1/δ))"),
        (r"$f(x)=\ln(\sum_i\exp(x_i))$", "f(x)=ln(∑_i exp(x_i))"),
        (r"$\exp(u)-\log(v)$, $1-\exp(-t)$", "exp(u)-log(v), 1-exp(-t)"),
        (r"$o(N/\log\log N)$, $\Theta( \log k)$", "o(N/log log N), Θ(log k)"),
        (r"$O(\bar{k}\log n)$, $\nabla\log p$", "O(k̅ log n), ∇ log p"),
        # \deg is the degree of a vertex, but a degree sign after a number.
        (r"$\deg(v)\ge 2$, $\deg(v) \ge 2$", "deg(v)≥ 2, deg(v) ≥ 2"),
        (r"a 3.9\deg error, $90\deg$, $n\deg(v)$", "a 3.9° error, 90°, n deg(v)"),
        # A line break before a word is not a macro: \\foo{x} is no markup.
        (r"a\\b", "a b"),
        # A character no page can hold is left out, not written.
        (r'a $\unicode{xD800}$ b \char"D800 c', "a b c"),
        # What pylatexenc cannot read loses its commands and braces only.
        (r"\begin{itemize} \item one \end{itemize}", "* one"),
        (r"<script>$x$</script>", "<script>x</script>"),
    ],
)
def test_latex_reads_as_plain_text(latex, text):
    assert latex_to_text(latex) == text


def test_text_without_latex_is_returned_as_it_is():
    text = "Plain text and 50% - untouched"

    assert latex_to_text(text) is text


@pytest.fixture
def paper(db):
    topic = make_topic("Agents", rule="ti:agents", slug="agents")
    upsert = upsert_records(
        [paper_record("2606.00101", title=TITLE, abstract=ABSTRACT)]
    )
    tag_papers(upsert.changed_ids)
    return topic


def test_the_paper_page_shows_latex_as_text(client, paper):
    page = client.get("/papers/2606.00101/").text

    assert f'<h1 id="paper-title">{SHOWN_TITLE}</h1>' in page
    assert f"<title>{SHOWN_TITLE}" in page
    assert f'<p class="abstract">{SHOWN_ABSTRACT}</p>' in page
    # BibTeX keeps the LaTeX, as BibTeX should.
    assert "title = {{$\\alpha$-divergence bounds for \\emph{sparse} agents}}" in page


def test_a_shared_papers_preview_and_citation_read_as_its_page(client, paper, settings):
    """What a chat app's link preview and a reference manager's browser button
    read: the page's own address, its title as shown, each author."""
    page = client.get("/papers/2606.00101v1/", follow=True).text
    site = settings.MOMENTUM_SITE_URL

    assert f'<link rel="canonical" href="{site}/papers/2606.00101/">' in page
    assert f'<meta property="og:url" content="{site}/papers/2606.00101/">' in page
    assert f'<meta property="og:title" content="{SHOWN_TITLE}">' in page
    assert f'<meta name="citation_title" content="{SHOWN_TITLE}">' in page
    assert '<meta name="citation_author" content="Ada Lovelace">' in page
    assert '<meta name="citation_author" content="Alan Turing">' in page
    assert '<meta name="citation_arxiv_id" content="2606.00101">' in page
    assert '<meta name="citation_date" content="2026/06/08">' in page
    pdf = "https://arxiv.org/pdf/2606.00101v1"
    assert f'<meta name="citation_pdf_url" content="{pdf}">' in page


def test_a_shared_topics_preview_is_its_page(client, paper, settings):
    page = client.get("/topics/agents/").text
    site = settings.MOMENTUM_SITE_URL

    assert f'<link rel="canonical" href="{site}/topics/agents/">' in page
    assert '<meta property="og:title" content="Agents">' in page
    week = client.get("/topics/agents/", {"week": "2026-06-08", "page": "1"}).text
    canonical_week = f"{site}/topics/agents/?week=2026-06-08"
    assert f'<link rel="canonical" href="{canonical_week}">' in week


def test_a_topic_pages_canonical_address_names_the_page_it_shows(
    client, paper, settings, monkeypatch
):
    """As Paginator reads ?page=: "02" and "٢" are page 2, "x" and "²" the
    first, 0, -1 and past the end the last (they named the first, or a page
    that does not exist)."""
    monkeypatch.setattr("topics.views.PAPERS_PER_PAGE", 1)
    tag_papers(
        upsert_records(
            [paper_record(f"2606.0010{n}", title=f"Agents {n}") for n in (2, 3)]
        ).changed_ids
    )
    first = f"{settings.MOMENTUM_SITE_URL}/topics/agents/"
    named = {
        "2": f"{first}?page=2",
        "02": f"{first}?page=2",
        "\u0662": f"{first}?page=2",
        "x": first,
        "\u00b2": first,
        "0": f"{first}?page=3",
        "-1": f"{first}?page=3",
        "999999": f"{first}?page=3",
    }
    for page, canonical in named.items():
        response = client.get("/topics/agents/", {"page": page, "x": "1"})
        assert response.status_code == 200, page
        assert f'<link rel="canonical" href="{canonical}">' in response.text, page


@pytest.mark.parametrize(
    ("text", "html"),
    [
        (
            "(https://x.org/a).",
            '(<a href="https://x.org/a" rel="nofollow">https://x.org/a</a>).',
        ),
        (
            "https://en.wikipedia.org/wiki/A_(B), then",
            '<a href="https://en.wikipedia.org/wiki/A_(B)" rel="nofollow">'
            "https://en.wikipedia.org/wiki/A_(B)</a>, then",
        ),
        # Written without a scheme, an address with a path, "www." or a host
        # of three names or more is a link (to https)...
        (
            "Code at github.com/a/b_c. Data (osf.io/23r67).",
            'Code at <a href="https://github.com/a/b_c" rel="nofollow">'
            'github.com/a/b_c</a>. Data (<a href="https://osf.io/23r67" '
            'rel="nofollow">osf.io/23r67</a>).',
        ),
        (
            "Pages: www.x.org, team-x.github.io",
            'Pages: <a href="https://www.x.org" rel="nofollow">www.x.org</a>, '
            '<a href="https://team-x.github.io" rel="nofollow">team-x.github.io</a>',
        ),
        # ...but a name with one dot is a file, a company, a category or a
        # missing space, never a link.
        (
            "see setup.py, AGENTS.md, JD.com, cs.AI and tasks.To do",
            "see setup.py, AGENTS.md, JD.com, cs.AI and tasks.To do",
        ),
        # Nor other schemes, which linkify-it would take.
        (
            "ftp://x.org/f, //x.org/g, javascript:alert(1)",
            "ftp://x.org/f, //x.org/g, javascript:alert(1)",
        ),
        ("a < b & c", "a &lt; b &amp; c"),
    ],
)
def test_linked_links_web_addresses_only(text, html):
    assert linked(text) == html


LINKED = (
    r"Code: \href{https://github.com/a/b\_c}{our repository}. Data: https://x.org/d."
    ' Not a link: https://x.org/"><script>alert(1)</script>'
)


def test_addresses_in_an_abstract_are_links(client, db):
    make_topic("Agents", rule="ti:agents", slug="agents")
    upsert = upsert_records(
        [
            paper_record(
                "2606.00102",
                title="Linked agents",
                abstract=LINKED,
                comment="9 pages; code: https://github.com/a/d",
            )
        ]
    )
    tag_papers(upsert.changed_ids)

    # The paper page, and the row's drawer that the side panel copies.
    for page in (
        client.get("/papers/2606.00102/").text,
        client.get("/topics/agents/").text,
    ):
        assert (
            'our repository (<a href="https://github.com/a/b_c" rel="nofollow">'
            "https://github.com/a/b_c</a>). "
            'Data: <a href="https://x.org/d" rel="nofollow">https://x.org/d</a>.'
        ) in page
        assert "<script>alert(1)" not in page
        assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page
    # The paper page's comment too.
    assert (
        '<dd>9 pages; code: <a href="https://github.com/a/d" rel="nofollow">'
        "https://github.com/a/d</a></dd>"
    ) in client.get("/papers/2606.00102/").text


def test_a_topic_feed_summary_is_the_abstract_as_html(client, db):
    make_topic("Agents", rule="ti:agents", slug="agents")
    abstract = (
        r"For $x < y$, see \href{https://x.org/code}{the code}. A <b>bold</b> claim."
    )
    upsert = upsert_records(
        [paper_record("2606.00103", title="Feed agents", abstract=abstract)]
    )
    tag_papers(upsert.changed_ids)

    feed = feedparser.parse(client.get("/topics/agents/feed/").content)

    # Atom marks a summary as HTML: the text escaped, its address a link.
    [entry] = feed.entries
    assert entry.summary_detail.type == "text/html"
    assert entry.summary == (
        "For x &lt; y, see the code "
        '(<a href="https://x.org/code" rel="nofollow">https://x.org/code</a>). '
        "A &lt;b&gt;bold&lt;/b&gt; claim."
    )


def test_ask_pages_show_latex_titles_as_text(client, paper):
    question = {"q": "What do the bounds cover?"}

    asked_paper = client.get("/papers/2606.00101/ask/", question).text
    asked_topic = client.get("/topics/agents/ask/", question).text

    assert f"<h1>AskPDF: {SHOWN_TITLE}</h1>" in asked_paper
    # The answer's sources, listed and in its citations' tooltips.
    assert f'<a href="/papers/2606.00101/">{SHOWN_TITLE}</a>' in asked_topic
    assert f'title="{SHOWN_TITLE}"' in asked_topic
    for page in (asked_paper, asked_topic):
        assert "\\emph" not in page


def test_curators_read_latex_as_text_in_the_queue_and_the_preview(admin_client, paper):
    ReviewItem.objects.create(topic=paper, paper=Paper.objects.get(), score=0.5)
    preview = reverse("admin:topics_topic_preview_saved", args=[paper.pk])

    queue = admin_client.get(reverse("admin:topics_reviewitem_changelist")).text
    [latest] = admin_client.get(preview, {"rule": "ti:agents"}).json()["latest"]

    assert f'<a href="/papers/2606.00101/">{SHOWN_TITLE}</a>' in queue
    assert SHOWN_ABSTRACT in queue
    assert "\\emph" not in queue
    assert latest["title"] == SHOWN_TITLE


def test_rows_and_the_side_panel_show_latex_as_text(client, paper):
    page = client.get("/topics/agents/").text

    assert f'<a href="/papers/2606.00101/">{SHOWN_TITLE}</a>' in page
    # The side panel copies the row's title and its drawer (static/js/site.js).
    assert f'<p class="abstract">{SHOWN_ABSTRACT}</p>' in page
    assert "\\emph" not in page


def test_atom_feed_titles_show_latex_as_text(client, paper):
    feed = client.get("/topics/agents/feed/").text

    assert f"<title>{SHOWN_TITLE}</title>" in feed


def test_latex_in_paper_text_is_escaped_once_rendered(client, db):
    upsert_records(
        [
            paper_record(
                "2606.00102",
                title=r"\emph{<img src=x onerror=alert(1)>} $a<b$",
                abstract=r"\textbf{<script>alert(2)</script>}",
            )
        ]
    )

    page = client.get("/papers/2606.00102/").text

    assert '<h1 id="paper-title">&lt;img src=x onerror=alert(1)&gt; a&lt;b</h1>' in page
    assert "&lt;script&gt;alert(2)&lt;/script&gt;" in page
    assert "<img src=x" not in page
