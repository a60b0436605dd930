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
