"""Character classes for what people type: the blanks, and the control
characters that pages, mails and XML cannot show."""

from __future__ import annotations

import re

from django.core.validators import RegexValidator

# Python's str.isspace() characters and the other C0 controls: a value made of
# these alone is blank. Spelled out rather than \s, which Python, ECMAScript and
# Rust (the API schema's readers) each read differently.
SPACE = r"\x00-\x20\x85\xa0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000"
# The control characters that are not whitespace a person types (unicodedata's
# Cc less tab, line feed and carriage return): NUL, escape, delete, and the
# vertical tab, form feed and separators U+001C-U+001F, which str.isspace()
# takes for spaces but XML 1.0 forbids (a topic's name holding one made its
# feeds a 500).
# With them, the bidirectional embeddings, overrides and isolates: shown, they
# turn the text around them (an unclosed override reverses the rest of a line).
# And the noncharacters U+FFFE and U+FFFF, which XML 1.0 forbids too: a feed
# holding one is a document no reader parses.
CONTROL = (
    r"\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x84\x86-\x9f"
    r"\u202a-\u202e\u2066-\u2069\ufffe\uffff"
)
# For text a curator writes that feeds, mails and pages show: an escape in a
# topic's name would make its Atom feed a document no reader can parse.
# A positive pattern, not an inverse match, which the API's schema would state
# as the opposite; empty values are not validated (blank is the field's to say),
# and the schema's other branch for a blank field is "".
SHOWABLE = RegexValidator(
    rf"\A[^{CONTROL}]+\Z",
    message="Control characters (such as NUL or escape) cannot be shown; remove them.",
    code="control_character",
)


def shown(text: str) -> str:
    """Text as a page may echo it back: without its control characters."""
    return re.sub(f"[{CONTROL}]", "", text)
