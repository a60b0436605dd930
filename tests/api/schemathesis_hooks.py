"""What schemathesis cannot read from the OpenAPI schema, told in its own terms.

Loaded by schemathesis.toml (the CLI, run from the project root) and by
tests/api/test_schema.py. Five rules of the API are beyond OpenAPI:

- A date range's start must not follow its end (`announced_from` and
  `announced_to`, `since` and `until`): the API answers a reversed range with a
  documented 400, but a schema cannot compare two parameters, so valid requests
  are generated in order.
- Ask's `weeks` and `since` are alternatives (weeks count back from the latest
  harvest, or from `until`): both are a documented 400, so valid requests send
  one.
- A topic rule (`format: topic-rule`) follows a grammar with nested parentheses,
  which no pattern can describe; valid rules are generated from a small part
  of it. A saved search's query (`format: saved-search-query`) is one of those
  rules with no field prefix or category (the search syntax refuses arXiv's
  field prefixes), which the search syntax reads as words too.
- A topic is not its own related topic: valid requests do not name the
  topic they change among its `related`.
- A topic's slug is not that of a page at /topics/<slug>/ ("trending"): a
  schema pattern would need a lookahead, which not every reader of the schema
  has, so valid requests never send one.

No project code is imported: the CLI loads this without Django.
"""

from __future__ import annotations

from typing import Any

import schemathesis
from hypothesis import strategies as st

RANGES = [("announced_from", "announced_to"), ("since", "until")]
RESERVED_SLUGS = {"trending"}  # topics.models.topic.RESERVED_SLUGS

FIELDS = st.sampled_from(["", "ti:", "abs:", "all:"])
WORDS = st.sampled_from(["agent", "robot", "graph", "diffusion", '"language model"'])
CATEGORIES = st.sampled_from(["cat:cs.LG", "cat:cs", "cat:math.*"])
TERMS = st.builds(str.__add__, FIELDS, WORDS) | CATEGORIES
OPERATORS = st.sampled_from([" AND ", " OR ", " ANDNOT ", " "])


def rules(terms: st.SearchStrategy[str]) -> st.SearchStrategy[str]:
    return st.builds(
        lambda first, rest: first + "".join(op + term for op, term in rest),
        terms,
        st.lists(st.tuples(OPERATORS, terms), max_size=3),
    )


schemathesis.openapi.format("topic-rule", rules(TERMS))
# A saved search's query is valid in both of its syntaxes when it is such a
# rule of words alone.
schemathesis.openapi.format("saved-search-query", rules(WORDS))


@schemathesis.hook
def map_case(context: Any, case: Any) -> Any:
    """Valid requests keep each date range in order (dates as YYYY-MM-DD sort
    as text), send weeks or since, relate no topic to itself and name no
    reserved slug; invalid ones are left as generated."""
    meta = case.meta
    query = case.query
    if meta is None or not meta.generation.mode.is_positive:
        return case
    body = case.body
    if isinstance(body, dict) and body.get("slug") in RESERVED_SLUGS:
        body["slug"] += "-topic"
    changed = (case.path_parameters or {}).get("slug")
    if isinstance(body, dict) and isinstance(body.get("related"), list):
        body["related"] = [slug for slug in body["related"] if slug != changed]
    if not isinstance(query, dict):
        return case
    if "weeks" in query:
        query.pop("since", None)
    for start, end in RANGES:
        first, last = query.get(start), query.get(end)
        if isinstance(first, str) and isinstance(last, str) and first > last:
            query[start], query[end] = last, first
    return case
