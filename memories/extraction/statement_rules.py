"""The clause rules both languages run alike.

Each language package (`english/`, `chinese/`) has modules of the same names holding rules of the
same names; each language's sentence module runs these, with rules of its own around them.
"""

from types import ModuleType

from memories.extraction.candidates import ClauseRule, Ctx
from memories.providers.llm_types import CandidateMemory


def instruction(text: str, ctx: Ctx, *, instructions: ModuleType, extract_clause: ClauseRule) -> CandidateMemory | None:
    """Read before the statement rules: a statement about the future ("from now on …"), read by
    `extract_clause` as said for the future, else a standing instruction."""
    statement = instructions.future_statement(text, ctx)
    return extract_clause(statement, ctx.but(future=True)) if statement else instructions.rule(text, ctx)


def everyday_rules(
    *, plans: ModuleType, preferences: ModuleType, identity: ModuleType, belongings: ModuleType
) -> list[ClauseRule]:
    """The rules for everyday statements (todos, tastes, habits, who the user is, what they have and
    use), in the order both languages try them: the first that keeps a candidate wins."""
    return [
        plans.todo,
        preferences.favorite,
        preferences.prefer,
        preferences.sentiment,
        preferences.habit,
        identity.identity,
        belongings.my_attribute,
        plans.weak_decision,
        belongings.uses,
        belongings.project,
        belongings.have,
    ]
