"""The API's JSON parser, bounded: a body is refused (400, the API's error shape)
when it is larger than MOMENTUM_API_MAX_BODY_BYTES or nested deeper than
MAX_DEPTH, before it can cost memory or recursion. Every body the API takes is a
small flat object, each key once."""

from __future__ import annotations

import json
from collections import Counter
from typing import Any

from django.conf import settings
from rest_framework.exceptions import ErrorDetail
from rest_framework.exceptions import ParseError
from rest_framework.exceptions import ValidationError
from rest_framework.parsers import BaseParser
from rest_framework.renderers import JSONRenderer

MAX_DEPTH = 32


# Not a JSONParser: after DRF 3.16 a request reads the whole body into memory
# before calling one (Request._parse), which would defeat the bound (and raise
# Django's RequestDataTooBig, a 500, past DATA_UPLOAD_MAX_MEMORY_SIZE).
class BoundedJSONParser(BaseParser):
    media_type = "application/json"
    renderer_class = JSONRenderer

    def parse(
        self, stream: Any, media_type: str | None = None, parser_context: Any = None
    ) -> Any:
        limit = settings.MOMENTUM_API_MAX_BODY_BYTES
        # At most one byte past the limit is read, whatever Content-Length says.
        body = stream.read(limit + 1) if stream is not None else b""
        if len(body) > limit:
            raise ParseError(f"The body is larger than {limit:,} bytes.")
        encoding = (parser_context or {}).get("encoding", settings.DEFAULT_CHARSET)
        try:
            data = json.loads(body.decode(encoding), object_pairs_hook=_once_each)
        except RecursionError as exc:
            raise ParseError(f"The JSON is nested deeper than {MAX_DEPTH}.") from exc
        except ValueError as exc:
            raise ParseError(f"JSON parse error - {exc}") from exc
        except LookupError as exc:  # a codec of bytes to bytes: charset=rot13
            raise ParseError(
                f"The body's charset {encoding!r} is not a text encoding."
            ) from exc
        if _depth(data) > MAX_DEPTH:
            raise ParseError(f"The JSON is nested deeper than {MAX_DEPTH}.")
        return data


def _once_each(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """An object whose keys are all different: of {"rating": 1, "rating": -1},
    the last alone was read and the first never checked, as of a query
    parameter given twice (core.api.views.StrictQueryParams)."""
    data = dict(pairs)
    if len(data) < len(pairs):
        counts = Counter(name for name, _ in pairs)
        repeated = sorted(name for name, count in counts.items() if count > 1)
        raise ValidationError(
            {
                name: [ErrorDetail("Given more than once.", "repeated_field")]
                for name in repeated
            }
        )
    return data


def _depth(value: Any) -> int:
    """How deeply lists and objects nest in a parsed value (without recursing)."""
    deepest, stack = 0, [(value, 0)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, dict | list):
            depth += 1
            deepest = max(deepest, depth)
            children = item.values() if isinstance(item, dict) else item
            stack.extend((child, depth) for child in children)
    return deepest
