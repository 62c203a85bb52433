"""Category names of the seed systems mapped onto ours (DESIGN §3), and ours back onto seed 004's.

Imports read whatever a seed wrote: 000 preference/fact/pattern/skill, 001 FACT/PREFERENCE/SKILL/
ERROR/RULE, 002 experience/skill_usage, 003 knowledge, 004 preferences/facts/tasks/reflections/
procedural/general. Seed 004's `procedural` is split by meaning: a recorded failure is an `error`
lesson, anything else a `skill`.
"""

import re

from memories.models import Category

_ALIASES = {
    # seed 000
    "pattern": Category.WORKFLOW,
    # seed 002
    "experience": Category.SKILL,
    "skill_usage": Category.WORKFLOW,
    # seed 003
    "knowledge": Category.FACT,
    # seed 004
    "preferences": Category.PREFERENCE,
    "facts": Category.FACT,
    "tasks": Category.TODO,
    "reflections": Category.SKILL,
    "general": Category.FACT,
    # plurals and near names people type into a hand-edited file
    "projects": Category.PROJECT,
    "decisions": Category.DECISION,
    "workflows": Category.WORKFLOW,
    "habit": Category.WORKFLOW,
    "habits": Category.WORKFLOW,
    "skills": Category.SKILL,
    "errors": Category.ERROR,
    "lesson": Category.ERROR,
    "lessons": Category.ERROR,
    "rules": Category.RULE,
    "task": Category.TODO,
    "todos": Category.TODO,
}

# Ours → seed 004's six names; the exact category travels next to it as `x_category`.
_TO_SEED_004 = {
    Category.PREFERENCE: "preferences",
    Category.FACT: "facts",
    Category.TODO: "tasks",
    Category.SKILL: "reflections",
    Category.ERROR: "procedural",
    Category.RULE: "procedural",
    Category.WORKFLOW: "procedural",
    Category.PROJECT: "general",
    Category.DECISION: "general",
}

# Seed 004 search/list filters name one of its categories; these are ours it covers.
SEED_004_FILTERS = {
    "preferences": [Category.PREFERENCE],
    "facts": [Category.FACT],
    "tasks": [Category.TODO],
    "reflections": [Category.SKILL],
    "procedural": [Category.SKILL, Category.ERROR, Category.RULE, Category.WORKFLOW],
    "general": [Category.FACT, Category.PROJECT, Category.DECISION],
}

_FAILURE = re.compile(
    r"\b(?:fail(?:s|ed|ure)?|error|errors|broken|does(?:n't| not) work|did(?:n't| not) work|not working|"
    r"invalid|crash(?:es|ed)?|timed? ?out|cannot|can't|unable|don't|never)\b"
    r"|失败|无效|错误|报错|出错|异常|不可用|不能|无法|不要|别再|超时|崩溃",
    re.IGNORECASE,
)
_FAILURE_CONTEXT_KEYS = ("error", "error_type", "failure", "exception", "stderr")


def records_failure(content: str, context: dict | None = None) -> bool:
    """Whether a seed-004 procedural memory records a failure (a lesson) rather than a working procedure."""
    if isinstance(context, dict) and any(context.get(key) for key in _FAILURE_CONTEXT_KEYS):
        return True
    return bool(_FAILURE.search(content or ""))


def category_from_seed(name, *, content: str = "", context: dict | None = None) -> str | None:
    """Our category for a seed's category name, or None when the name means nothing to us."""
    if not isinstance(name, str):
        return None
    key = name.strip().lower().replace("-", "_").replace(" ", "_")
    if key == "procedural":
        return Category.ERROR if records_failure(content, context) else Category.SKILL
    if key in Category.values:
        return key
    return _ALIASES.get(key)


def category_to_seed_004(category: str) -> str:
    return _TO_SEED_004.get(category, "general")


def categories_for_filter(name: str) -> list[str] | None:
    """Our categories matching a filter written with either our names or seed 004's; None if unknown."""
    key = (name or "").strip().lower()
    if key in SEED_004_FILTERS:
        return list(SEED_004_FILTERS[key])
    mapped = category_from_seed(key)
    return [mapped] if mapped else None
