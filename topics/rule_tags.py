"""Storing a chunk of papers' rule tags: what changes is decided without the
database (decide), and store_rule_tags reads what it needs and writes that in
bulk. A pin is never removed by a rule, and an excluded paper, or a rule match
a topic's model keeps out (a vetoed review item), never gets a rule tag.
"""

from __future__ import annotations

from collections.abc import Mapping
from collections.abc import Set
from dataclasses import dataclass

from django.db import transaction
from django.utils import timezone

from core.bulk import insert_rows
from papers.versions import pages_changed
from topics.documents import among
from topics.models import PaperTopic
from topics.models import ReviewItem
from topics.models import TopicExclusion

# (topic id, paper id)
Key = tuple[int, int]
Terms = tuple[str, ...]


@dataclass(frozen=True)
class TagDecision:
    """What to write for a chunk: the vetoes still matched (with the rule's
    current terms; the others are lifted), the rule tags to remove, the tags
    that become rule tags or get new terms, and the rule tags to add."""

    vetoes_kept: dict[Key, Terms]
    remove: frozenset[Key]
    update: dict[Key, Terms]
    add: dict[Key, Terms]


def decide(
    wanted: Mapping[Key, Terms],
    *,
    existing: Mapping[Key, tuple[str, list[str]]],
    excluded: Set[Key],
    vetoed: Set[Key],
) -> TagDecision:
    """The changes that make a chunk's rule tags `wanted` (the rules' matches),
    given the tags there are (source, matched terms), the exclusions and the
    vetoed review items. Pure."""
    # Still matched: stays out, with the rule's current terms. No longer
    # matched: nothing left to veto; the next scoring reviews it afresh.
    kept = {key: wanted[key] for key in vetoed if key in wanted}
    wanted = {
        key: terms
        for key, terms in wanted.items()
        if key not in excluded and key not in vetoed
    }
    rule = PaperTopic.Source.RULE
    # A model tag the rule now matches becomes a rule tag (and keeps its score).
    update = {
        key: wanted[key]
        for key, (source, terms) in existing.items()
        if key in wanted
        and source != PaperTopic.Source.PIN
        and (source, terms) != (rule, list(wanted[key]))
    }
    return TagDecision(
        vetoes_kept=kept,
        remove=frozenset(
            key
            for key, (source, _) in existing.items()
            if source == rule and key not in wanted
        ),
        update=update,
        add={key: terms for key, terms in wanted.items() if key not in existing},
    )


@transaction.atomic
def store_rule_tags(
    paper_ids: list[int], topic_ids: list[int], wanted: Mapping[Key, Terms]
) -> tuple[int, int]:
    """Make these papers' rule tags for these topics `wanted` (see decide);
    return how many tags were added and removed. Idempotent."""
    papers = among("paper_id", paper_ids)
    excluded = set(
        TopicExclusion.objects.filter(papers, topic_id__in=topic_ids).values_list(
            "topic_id", "paper_id"
        )
    )
    vetoed = {
        (item.topic_id, item.paper_id): item
        for item in ReviewItem.objects.filter(
            papers, topic_id__in=topic_ids, vetoed=True
        )
    }
    # Locked until this commits: a curator's pin of one of them waits, and is
    # not then deleted, or made a rule tag, by what was decided before it.
    existing = {
        (tag.topic_id, tag.paper_id): tag
        for tag in PaperTopic.objects.filter(papers, topic_id__in=topic_ids)
        .select_for_update()
        .order_by("pk")
    }
    decision = decide(
        wanted,
        existing={key: (t.source, t.matched_terms) for key, t in existing.items()},
        excluded=excluded,
        vetoed=vetoed.keys(),
    )
    for key, item in vetoed.items():
        item.rule_terms = list(decision.vetoes_kept.get(key, ()))
        item.rule_matched = item.vetoed = key in decision.vetoes_kept
    ReviewItem.objects.bulk_update(
        vetoed.values(), ["rule_terms", "rule_matched", "vetoed"]
    )
    if decision.remove:
        PaperTopic.objects.filter(
            pk__in=[existing[key].pk for key in decision.remove]
        ).delete()
    changed = [existing[key] for key in decision.update]
    for tag in changed:
        tag.source = PaperTopic.Source.RULE
        tag.matched_terms = list(decision.update[(tag.topic_id, tag.paper_id)])
    PaperTopic.objects.bulk_update(changed, ["source", "matched_terms"])
    # An exclusion a curator made since the read above keeps its paper out.
    excluded_since = _excluded(list(decision.add)) if decision.add else set()
    added = {
        key: terms for key, terms in decision.add.items() if key not in excluded_since
    }
    now = timezone.now()
    # ignore_conflicts: a concurrent tagger may have stored the same tag already.
    insert_rows(
        PaperTopic,
        ["topic_id", "paper_id", "source", "matched_terms", "created_at"],
        [
            (topic_id, paper_id, PaperTopic.Source.RULE, list(terms), now)
            for (topic_id, paper_id), terms in added.items()
        ],
        ignore_conflicts=True,
    )
    # Their pages say which topics they are in, and why.
    shown = {*decision.remove, *decision.update, *added}
    if shown:
        pages_changed(
            (paper_id for _, paper_id in shown),
            topics={topic_id for topic_id, _ in shown},
        )
    return len(added), len(decision.remove)


def _excluded(keys: list[Key]) -> set[Key]:
    """Those of these (topic, paper) pairs a curator excluded."""
    return set(
        TopicExclusion.objects.filter(
            among("paper_id", sorted({paper for _, paper in keys})),
            topic_id__in={topic for topic, _ in keys},
        ).values_list("topic_id", "paper_id")
    )
