"""The topics app's models, one module per concern."""

from topics.models.activity import Question
from topics.models.activity import TopicMomentum
from topics.models.activity import TopicRelation
from topics.models.relevance import JudgeVerdict
from topics.models.relevance import RelevanceFlag
from topics.models.relevance import ReviewItem
from topics.models.relevance import TopicModel
from topics.models.rules import RuleDocument
from topics.models.rules import RuleTermsField
from topics.models.saved import SavedSearch
from topics.models.saved import SavedSearchMatch
from topics.models.topic import NOT_ITS_OWN_RELATED
from topics.models.topic import RESERVED_SLUGS
from topics.models.topic import Follow
from topics.models.topic import PaperTopic
from topics.models.topic import Topic
from topics.models.topic import TopicAlias
from topics.models.topic import TopicDate
from topics.models.topic import TopicExclusion

__all__ = [
    "NOT_ITS_OWN_RELATED",
    "RESERVED_SLUGS",
    "Follow",
    "JudgeVerdict",
    "PaperTopic",
    "Question",
    "RelevanceFlag",
    "ReviewItem",
    "RuleDocument",
    "RuleTermsField",
    "SavedSearch",
    "SavedSearchMatch",
    "Topic",
    "TopicAlias",
    "TopicDate",
    "TopicExclusion",
    "TopicModel",
    "TopicMomentum",
    "TopicRelation",
]
