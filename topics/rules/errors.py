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

    def near(self, rule: str, width: int = 30) -> str:
        """Where in the rule the problem is, for a reader: the text around it,
        its place marked (a rule may run to thousands of characters on one
        line, where "position 2718" is hard to find)."""
        start = max(self.position - width, 0)
        before = ("…" if start else "") + rule[start : self.position]
        end = self.position + width
        after = rule[self.position : end] + ("…" if end < len(rule) else "")
        return f"near “{before}⟨here⟩{after}”"
