from __future__ import annotations

from papers.ingest.authors import MAX_AFFILIATION_LENGTH
from papers.ingest.authors import MAX_NAME_LENGTH
from papers.ingest.authors import author_from_parts
from papers.ingest.authors import authors_from_parsed
from papers.ingest.authors import split_authors
from papers.ingest.records import AuthorRecord


def names(raw: str) -> list[str]:
    return [author.name for author in split_authors(raw)]


def test_splits_on_commas_and_a_final_and():
    assert names("Ileana Streinu and Louis Theran") == [
        "Ileana Streinu",
        "Louis Theran",
    ]
    assert names("Paul Bendich, Sang Chin, and Adam Watkins") == [
        "Paul Bendich",
        "Sang Chin",
        "Adam Watkins",
    ]


def test_collapses_line_wraps_inside_names():
    raw = "D. Lutz, E. Sturm, M. Schweitzer, H.\n  Netzer, R. Maiolino"
    assert names(raw)[3] == "H. Netzer"


def test_turns_latex_accents_into_unicode():
    raw = r"C. Bal\'azs, B\'ela Bollob\'as, Jan S{\l}upi\'nski, Fran\c{c}ois Dupont"
    assert names(raw) == [
        "C. Balázs",
        "Béla Bollobás",
        "Jan Słupiński",
        "François Dupont",
    ]


def test_reads_an_accent_glued_to_its_letter():
    # TeX would read "\ccois" as one unknown macro; authors mean \c{c}.
    assert names(r"Fran\ccois Dupont") == ["François Dupont"]


def test_keeps_a_percent_sign_from_eating_the_rest_of_the_name():
    assert names(r"A. M\"uller 50% B. Smith") == ["A. Müller 50% B. Smith"]


def test_spaces_glued_initials_like_arxiv_does():
    # arXiv's authors_parsed turns "J.P.Hague" into forenames "J. P.".
    assert names("J.P.Hague and N.d'Ambrumenil") == ["J. P. Hague", "N. d'Ambrumenil"]


def test_reads_parenthesised_affiliations():
    raw = (
        "Barbara Pascal (CRIStAL), Patrice Abry (Phys-ENS), "
        r"St\'ephane G. Roux (Phys-ENS), R\'emi Gribonval (Inria)"
    )
    assert split_authors(raw) == (
        AuthorRecord("Barbara Pascal", ("CRIStAL",)),
        AuthorRecord("Patrice Abry", ("Phys-ENS",)),
        AuthorRecord("Stéphane G. Roux", ("Phys-ENS",)),
        AuthorRecord("Rémi Gribonval", ("Inria",)),
    )


def test_keeps_nested_parentheses_inside_one_affiliation():
    raw = "Ali Ahmadi (Iran Telecommunication Research Center (ITRC), Tehran, Iran)"
    assert split_authors(raw) == (
        AuthorRecord(
            "Ali Ahmadi",
            ("Iran Telecommunication Research Center (ITRC), Tehran, Iran",),
        ),
    )


def test_does_not_split_on_and_inside_an_affiliation():
    raw = (
        "Torsten Schaub (University of Potsdam, Germany and Potassco Solutions, "
        "Germany), Philipp Wanko (University of Potsdam)"
    )
    assert split_authors(raw)[0].affiliations == (
        "University of Potsdam, Germany and Potassco Solutions, Germany",
    )
    assert names(raw) == ["Torsten Schaub", "Philipp Wanko"]


def test_maps_numbered_footnotes_to_the_trailing_affiliation_block():
    # 2106.07799 in the recent snapshot, shortened.
    raw = (
        "Hannah Eyre (1 and 2), Jianlin Shi (2), Tamara L Box (3) ((1) VA Salt Lake "
        "City Health Care System, (2) University of Utah, Salt Lake City, UT, USA, "
        "(3) Veterans Health Administration Office of Analytics and Performance "
        "Integration)"
    )
    assert split_authors(raw) == (
        AuthorRecord(
            "Hannah Eyre",
            (
                "VA Salt Lake City Health Care System",
                "University of Utah, Salt Lake City, UT, USA",
            ),
        ),
        AuthorRecord("Jianlin Shi", ("University of Utah, Salt Lake City, UT, USA",)),
        AuthorRecord(
            "Tamara L Box",
            (
                "Veterans Health Administration Office of Analytics and Performance "
                "Integration",
            ),
        ),
    )


def test_maps_footnote_lists_with_serial_comma():
    # 2110.11864: "(1, 3, and 4)" and entries separated by ". (3)".
    raw = (
        "Enshuo Hsu (1, 3, and 4), Ioannis Malagaris (1) ((1) Office of "
        "Biostatistics, (2) Division of Pulmonary, Texas, USA. (3) School of "
        "Biomedical Informatics, Houston. (4) Center for Outcomes Research)"
    )
    hsu, malagaris = split_authors(raw)
    assert hsu.affiliations == (
        "Office of Biostatistics",
        "School of Biomedical Informatics, Houston.",
        "Center for Outcomes Research",
    )
    assert malagaris.affiliations == ("Office of Biostatistics",)


def test_reads_a_footnote_block_that_arxiv_cut_short():
    raw = "Feng-Lei Fan (1) and Tieyong Zeng (2) ((1) Center A, (2) Independent, WA, US"
    assert [a.affiliations for a in split_authors(raw)] == [
        ("Center A",),
        ("Independent, WA, US",),
    ]


def test_splits_authors_whose_commas_were_left_out():
    raw = "Isabel Xu (The Overlake School) Cynthia Xu (The Overlake School)"
    assert names(raw) == ["Isabel Xu", "Cynthia Xu"]


def test_keeps_a_nickname_in_parentheses_inside_the_name():
    assert names("Baolu Li, Tenglong (Victor) Gu, Zhuangzhuang Ding") == [
        "Baolu Li",
        "Tenglong (Victor) Gu",
        "Zhuangzhuang Ding",
    ]


def test_attaches_a_suffix_after_a_comma_to_the_previous_author():
    assert names("Robert W. Heath, Jr., Sriram Vishwanath") == [
        "Robert W. Heath Jr.",
        "Sriram Vishwanath",
    ]


def test_drops_et_al_and_keeps_collaborations():
    assert names("A. Smith et al.") == ["A. Smith"]
    assert names("The ATLAS Collaboration") == ["The ATLAS Collaboration"]


def test_a_group_before_a_colon_is_an_author_of_its_own():
    # As arXiv's own parser reads it: the collaboration, then its people.
    assert names("Gemma Team: Sherif El Abd, Vaibhav Aggarwal") == [
        "Gemma Team",
        "Sherif El Abd",
        "Vaibhav Aggarwal",
    ]
    # A colon inside an affiliation is the affiliation's.
    [author] = split_authors("A. Person (Lab: Vision Group)")
    assert author == AuthorRecord(name="A. Person", affiliations=("Lab: Vision Group",))


def test_returns_no_authors_for_an_empty_string():
    assert split_authors("  \n ") == ()


def test_caps_name_and_affiliation_lengths():
    author = split_authors(f"{'N' * 400} ({'A' * 600})")[0]
    assert len(author.name) == MAX_NAME_LENGTH
    assert len(author.affiliations[0]) == MAX_AFFILIATION_LENGTH


def test_builds_forenames_keyname_suffix_from_oai_parts():
    # OAI arXiv records keep the comma before a suffix in the keyname ("Heath,").
    author = author_from_parts("Heath,", "Robert W.", "Jr.", ["UT Austin"])
    assert author == AuthorRecord("Robert W. Heath Jr.", ("UT Austin",))


def test_decodes_latex_braces_in_oai_parts():
    # 0704.0858 in OAI page 1: <keyname>Ka{&#xe2;}niche</keyname>.
    assert author_from_parts("Ka{â}niche", "Mohamed").name == "Mohamed Kaâniche"


def test_builds_authors_from_snapshot_authors_parsed():
    parsed = [["Bal\u00e1zs", "C.", ""], ["Mishchenko", "A. S.", "", "1 and 2"]]
    assert authors_from_parsed(parsed) == (
        AuthorRecord("C. Balázs"),
        AuthorRecord("A. S. Mishchenko"),
    )


def test_raw_string_and_authors_parsed_give_the_same_names():
    # 0704.0099 in the Kaggle snapshot head.
    raw = "Koenraad M.R. Audenaert and Jaspal Singh Aujla"
    parsed = [["Audenaert", "Koenraad M. R.", ""], ["Aujla", "Jaspal Singh", ""]]
    assert split_authors(raw) == authors_from_parsed(parsed)
