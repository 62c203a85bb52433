"""Contradiction detection for the plain cases: a negation flip, or a new value for the same
subject and predicate."""

import re
from dataclasses import dataclass

from memory_project.text import cjk_ngrams

_NEGATIONS = {
    "not",
    "no",
    "never",
    "don't",
    "dont",
    "doesn't",
    "doesnt",
    "isn't",
    "isnt",
    "aren't",
    "arent",
    "won't",
    "wont",
    "can't",
    "cant",
    "cannot",
    "didn't",
    "didnt",
    "wasn't",
    "wasnt",
    "hate",
    "hates",
    "dislike",
    "dislikes",
    "stopped",
    "quit",
}
# Words that only accompany a negation ("no longer", "not … anymore"): not a second negation, which
# would cancel the first, and not content either.
_NEGATION_PARTICLES = {"anymore", "longer"}
_CJK_NEGATIONS = ("不", "没", "别", "不要", "不再", "讨厌")
# Longest first, so "不要" / "不再" count once, not also as "不".
_CJK_NEGATION = re.compile("|".join(sorted(_CJK_NEGATIONS, key=len, reverse=True)))
_STOP = {
    "i",
    "the",
    "a",
    "an",
    "to",
    "my",
    "is",
    "am",
    "are",
    "user",
    "user's",
    "and",
    "of",
    "for",
    "in",
    "on",
    "it",
    "do",
    "does",
}
_WORD = re.compile(r"[a-z0-9']+")


def _stem(word: str) -> str:
    """Third-person -s off, so "likes" and "doesn't like" talk about the same thing."""
    return word[:-1] if len(word) > 3 and word.endswith("s") and not word.endswith("ss") else word


# Words that only look negated: 特别 "especially", 别人 "others", 不错 "good", 差不多 "about the same".
_CJK_NOT_NEGATIONS = re.compile(
    "特别|别人|区别|分别|个别|告别|级别|类别|性别|识别|不错|不仅|不少|不久|不断|不同|不管|不过|差不多|了不起|不得不"
)


def _terms(text: str) -> tuple[set[str], int]:
    lowered = text.lower().replace("’", "'")
    words = _WORD.findall(lowered)
    negations = sum(1 for w in words if w in _NEGATIONS) + len(
        _CJK_NEGATION.findall(_CJK_NOT_NEGATIONS.sub(" ", lowered))
    )
    content = {_stem(w) for w in words if w not in _NEGATIONS and w not in _NEGATION_PARTICLES and w not in _STOP}
    stripped = _CJK_NEGATION.sub("", lowered)
    content |= set(cjk_ngrams(stripped, for_query=True).split())
    return content, negations


def negated(text: str) -> bool:
    """An odd number of negations: "doesn't like jazz", "不再喝咖啡"."""
    return _terms(text)[1] % 2 == 1


# One subject can hold several of these at once ("has a dog" and "has a cat"): never a contradiction.
MULTI_VALUED_PREDICATES = {"has", "speaks", "works on", "includes"}


@dataclass(frozen=True)
class Slot:
    """The slot a statement fills, when it is known: "residence" / "lives in" / "Berlin"."""

    subject: str = ""
    predicate: str = ""
    value: str = ""


def contradicts(old: str, new: str, old_slot: Slot = Slot(), new_slot: Slot = Slot()) -> bool:
    """Does `new` contradict `old`? A new value in the same slot (but for a multi-valued predicate),
    or, slots aside, a negation flip between two texts about the same thing."""
    if old_slot.subject and new_slot.subject and old_slot.predicate and new_slot.predicate:
        same_slot = (
            old_slot.subject.lower() == new_slot.subject.lower()
            and old_slot.predicate.lower() == new_slot.predicate.lower()
        )
        if same_slot:
            if old_slot.predicate.lower() in MULTI_VALUED_PREDICATES:
                return False
            if old_slot.value and new_slot.value:
                return old_slot.value.strip().casefold() != new_slot.value.strip().casefold()
            return old.strip().casefold() != new.strip().casefold()
    old_terms, old_neg = _terms(old)
    new_terms, new_neg = _terms(new)
    if not old_terms or not new_terms:
        return False
    overlap = len(old_terms & new_terms) / len(old_terms | new_terms)
    return overlap >= 0.6 and (old_neg % 2) != (new_neg % 2)
