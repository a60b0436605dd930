"""The error raised for a rule that cannot be parsed."""

from __future__ import annotations


class RuleError(ValueError):
    """A rule is invalid; ``position`` is the 0-based offset of the problem."""

    def __init__(self, message: str, position: int) -> None:
        super().__init__(f"{message} at position {position}")
        self.message = message
        self.position = position

    def __reduce__(self) -> tuple[type[RuleError], tuple[str, int]]:
        # ValueError pickles its formatted args, which __init__ would not accept.
        return (RuleError, (self.message, self.position))
