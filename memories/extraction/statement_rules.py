"""The clause rules both languages run alike, in the same order.

Each language package (`english/`, `chinese/`) has modules of the same names holding rules of the
same names; each language's sentence module runs these, with rules of its own around them.
"""

from types import ModuleType

from memories.extraction.candidates import ClauseRule


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
