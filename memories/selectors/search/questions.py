"""What a search query says about how to search: the speakers it names, and whether it asks for
several things at once. English wording only; any other query gets the plain search."""

import re

# An auxiliary right after the wh-phrase ("What events has …", "Which cities did …").
_AUX = r"(?:has|have|had|does|do|did|is|are|was|were)"
# "What activities does …", "Which European countries has …": the wh-phrase's head noun is plural.
_PLURAL_HEAD = re.compile(rf"^\W*(?:in\s+)?(?:what|which)\s+((?:[\w'’+/-]+\s+){{0,2}}?)([\w'’+/-]+)\s+{_AUX}\b")
# "What has Melanie painted?", "Where have Jon and Gina danced?": the present perfect gathers
# everything up to now.
_PERFECT = re.compile(
    r"^\W*(?:what|which|where|who)\b(?:\s+(?!do\b|does\b|did\b)[\w'’+/-]+){0,3}\s+(?:has|have)\s+"
    r"[\w'’-]+(?:\s+and\s+[\w'’-]+)?\s+(?!been\b)[a-z]+(?:ed|en|ne|de|ht|ead|ung|unk)\b"
)
_SEVERAL = re.compile(r"\b(?:both|in common|how many)\b")
_IRREGULAR_PLURALS = frozenset({"people", "children", "kids", "men", "women"})
_NOT_PLURAL = frozenset({"is", "was", "has", "does", "this", "his", "its", "us", "yes", "always"})


def asks_for_several(query: str) -> bool:
    """Whether the question asks for several things, which a conversation usually holds in several
    sessions ("What activities does Melanie partake in?", "Which cities has Jon visited?", "What
    do Jon and Gina both have in common?"), rather than for one fact."""
    text = query.casefold()
    if _SEVERAL.search(text) or _PERFECT.search(text):
        return True
    match = _PLURAL_HEAD.match(text)
    if match is None:
        return False
    head = match[2].split("/")[-1]
    return head in _IRREGULAR_PLURALS or (head.endswith("s") and not head.endswith("ss") and head not in _NOT_PLURAL)


def without_speakers(query: str, speakers: list[str]) -> str:
    """The query without the given speakers' names (whole name or first name, possessive too).

    A turn's words do not say who speaks (the speaker is a field of its own, which ranking weighs,
    and only a prefix of the turn's vector): a name in the question mostly pulls towards the turns
    that address that person by name, which are the other speaker's.
    """
    names = {part for speaker in speakers if speaker for part in (speaker, speaker.split()[0]) if len(part) > 1}
    if not names:
        return query
    pattern = "|".join(re.escape(name) for name in sorted(names, key=len, reverse=True))
    stripped = re.sub(rf"(?<!\w)(?:{pattern})(?:'s|’s)?(?!\w)", " ", query, flags=re.IGNORECASE)
    return re.sub(r"\s+", " ", stripped).strip()
