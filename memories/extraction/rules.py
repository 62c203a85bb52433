"""A table of clause rules tried in order, for either language: each pattern is written on the builder that
reads its groups, so a rule reads top to bottom in one place instead of a pattern here and its use there."""

import re
from collections.abc import Callable

from memories.extraction.candidates import Ctx
from memories.providers.llm_types import CandidateMemory

# A pattern is a regex, or a function that finds the match itself (one with a guard, or a normalised clause).
Matcher = Callable[[str], re.Match | None]
Builder = Callable[[re.Match, str, Ctx], CandidateMemory | None]


class FirstMatch:
    """Rules tried in the order they are added: the first whose pattern matches decides, even when its builder
    then keeps nothing. Called with a clause and its context, it is a clause rule itself."""

    def __init__(self, flags: int = 0) -> None:
        self.flags = flags
        self.rules: list[tuple[Matcher, Builder]] = []

    def add(self, pattern: str | Matcher, build: Builder) -> Builder:
        match = re.compile(pattern, self.flags).match if isinstance(pattern, str) else pattern
        self.rules.append((match, build))
        return build

    def rule(self, pattern: str | Matcher) -> Callable[[Builder], Builder]:
        """Decorator: the builder below is the rule for `pattern`."""
        return lambda build: self.add(pattern, build)

    def extended(self) -> "FirstMatch":
        """A new table that tries these rules first, then the ones added to it (rules added here later are not
        in it)."""
        table = FirstMatch(self.flags)
        table.rules = list(self.rules)
        return table

    def __call__(self, clause: str, ctx: Ctx) -> CandidateMemory | None:
        for match, build in self.rules:
            m = match(clause)
            if m:
                return build(m, clause, ctx)
        return None
