"""Who an author is: the name as arXiv prints it, normalised to a key.

arXiv has no author ids, so an author is a name. The key makes the printings of
one name that differ only in form the same author: accents ("Müller" and
"Muller"), case ("DE LA CRUZ" and "de la Cruz"), spaces and punctuation ("J.Smith",
"J. Smith" and "J Smith"; "Jean-Pierre" and "Jean Pierre"; "Smith, Jr." and
"Smith Jr"). It cannot tell two people who print one name apart, nor join one
person printed two ways ("J. Smith" and "John Smith", or with and without "Jr.").
"""

from __future__ import annotations

import re
import unicodedata
from collections import Counter
from collections import defaultdict
from typing import Any

from django.db import connection
from django.db.models import Count

from papers.ingest.authors import split_authors

MAX_KEY_LENGTH = 400
# Any run of what is not a letter or digit (spaces, dots, hyphens, commas,
# apostrophes) separates words; the key keeps one space between them.
_SEPARATORS_RE = re.compile(r"[\W_]+")
BATCH = 5000


def author_key(name: str) -> str:
    """The normalised form of a printed name: NFKD with the combining marks
    dropped, case-folded, words separated by one space."""
    decomposed = unicodedata.normalize("NFKD", name)
    bare = "".join(char for char in decomposed if not unicodedata.combining(char))
    return _SEPARATORS_RE.sub(" ", bare.casefold()).strip()[:MAX_KEY_LENGTH]


def merge_authors(
    author_model: Any, authorship_model: Any, follow_model: Any = None
) -> int:
    """Give every author its key, and make the authors whose keys collide one:
    their authorships (and follows) move to the one with the most papers (the
    first seen when tied), whose name stays the one shown. Positions stay as
    they were, so a paper that printed one person twice keeps both places.
    Takes the models, so a migration passes its historical ones; returns how
    many authors were merged away."""
    if connection.vendor == "postgresql":
        # Deferred foreign-key checks would otherwise still be pending when the
        # migration then alters the table.
        with connection.cursor() as cursor:
            cursor.execute("SET CONSTRAINTS ALL IMMEDIATE")
    papers = Counter(
        dict(
            authorship_model.objects.values("author_id")
            .annotate(n=Count("*"))
            .values_list("author_id", "n")
        )
    )
    by_key: dict[str, list[int]] = defaultdict(list)
    for pk, name in author_model.objects.order_by("pk").values_list("pk", "name"):
        by_key[author_key(name)].append(pk)
    merged: dict[int, int] = {}
    for ids in by_key.values():
        if len(ids) > 1:
            keeper = max(ids, key=lambda pk: (papers[pk], -pk))
            merged.update((pk, keeper) for pk in ids if pk != keeper)
    for pk, keeper in merged.items():
        authorship_model.objects.filter(author_id=pk).update(author_id=keeper)
        if follow_model is not None:
            kept = follow_model.objects.filter(author_id=keeper).values("user_id")
            follow_model.objects.filter(author_id=pk, user_id__in=kept).delete()
            follow_model.objects.filter(author_id=pk).update(author_id=keeper)
    author_model.objects.filter(pk__in=list(merged)).delete()
    # Keys are written once those merged away are gone: the key is unique.
    keyed = [
        author_model(pk=next(pk for pk in ids if pk not in merged), key=key)
        for key, ids in by_key.items()
    ]
    for start in range(0, len(keyed), BATCH):
        author_model.objects.bulk_update(keyed[start : start + BATCH], ["key"])
    if connection.vendor == "postgresql":
        with connection.cursor() as cursor:
            cursor.execute("SET CONSTRAINTS ALL DEFERRED")
    return len(merged)


def split_group_authors(
    author_model: Any, authorship_model: Any, follow_model: Any = None
) -> int:
    """Split the authors stored from a printed "Gemma Team: Sherif El Abd" as one
    (before ingest read that colon as arXiv does, papers.ingest.authors) into
    the group and the person, in their place on each paper; follows go to the
    person, and the joined author is removed. Takes the models, so a migration
    passes its historical ones; returns how many authors were split."""
    split = 0
    for joined in author_model.objects.filter(name__contains=":"):
        names = [author.name for author in split_authors(joined.name)]
        if len(names) < 2:
            continue
        ids = [_author_id(author_model, name) for name in names]
        *groups, person = ids
        for authorship in authorship_model.objects.filter(author_id=joined.pk):
            # Later authors move down one by one: a single UPDATE would collide
            # with the (paper, position) constraint on the way.
            later = authorship_model.objects.filter(
                paper_id=authorship.paper_id, position__gt=authorship.position
            ).order_by("-position")
            for other in later:
                other.position += len(groups)
                other.save(update_fields=["position"])
            place = authorship.position
            # The person keeps the authorship and with it its affiliations.
            authorship.author_id, authorship.position = person, place + len(groups)
            authorship.save(update_fields=["author_id", "position"])
            authorship_model.objects.bulk_create(
                authorship_model(paper_id=authorship.paper_id, author_id=pk, position=n)
                for n, pk in enumerate(groups, place)
            )
        if follow_model is not None:
            kept = follow_model.objects.filter(author_id=person).values("user_id")
            follow_model.objects.filter(author_id=joined.pk, user_id__in=kept).delete()
            follow_model.objects.filter(author_id=joined.pk).update(author_id=person)
        joined.delete()
        split += 1
    return split


def _author_id(author_model: Any, name: str) -> int:
    key = author_key(name)
    author = author_model.objects.filter(key=key).first()
    return (author or author_model.objects.create(name=name, key=key)).pk
