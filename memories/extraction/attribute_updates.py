"""A new value for something the user's memories already hold, said the way people say it.

"The landlord dropped my rent to $1,750 when I renewed" or "信用卡还款日改到3号了" follow no pattern
of a statement about the user, so the sentence rules keep nothing; yet the user's memories name the
attribute ("User's rent is $1,850 a month", "用户的信用卡还款日是每月15号"), and the sentence names it
again with another value. An extractor that knows what is remembered (as a language model told the
existing memories does) reads that as the attribute's new value; the merge decision then supersedes
the old one (memories.attributes).
"""

import re

from memories.attributes import Attribute, attribute_of, new_value
from memories.extraction.candidates import MEDIUM, Ctx, make
from memories.extraction.phrasing import is_chinese
from memories.providers.llm_types import CandidateMemory

# After the attribute's name, what introduces its value: "rent to $1,750", "number is now KL9", "改到3号".
_EN_INTRO = re.compile(
    r"^\s*(?:(?:is|are|was|'s|has been|will be)\s+(?:now\s+|currently\s+|actually\s+)?"
    r"|(?:\S+\s+){0,3}?(?:to|into)\s+|:\s*|=\s*|now\s+)(?P<value>.+)$",
    re.I,
)
_ZH_INTRO = re.compile(
    r"^(?:现在|目前|已经|也|又|都|这回|这次|从.{1,8}?)*"
    r"(?:是|为|改成了?|改到了?|改为|调成了?|调到了?|调整为|换成了?|变成了?|降到了?|降至|涨到了?|涨至|升到了?|升至|定在了?|"
    r"提高到了?|推到了?|挪到了?|延到了?|提前到了?)(?P<value>.+)$"
)
# Where a value ends: a clause of its own after it ("…, which is great", "when I renewed").
_EN_VALUE_END = re.compile(
    r"\s*(?:(?<!\d)[,.](?!\d)|[,.]\s|[;!?(—–]|\s-\s"
    r"|\b(?:when|because|since|after|before|as|so|but|and|which|who|thanks|starting|from)\b).*$",
    re.I,
)
_ZH_VALUE_END = re.compile(r"[，,。；;！!？?（(].*$")
_ZH_PARTICLES = re.compile(r"(?:了|啦|呢|哦|吧)+$")


def attribute_update(sentence: str, ctx: Ctx, known: list[Attribute]) -> CandidateMemory | None:
    """The sentence as the new value of one of the `known` attributes it names, or None."""
    chinese, lowered = is_chinese(sentence), sentence.casefold()
    for attribute in known:
        if chinese != is_chinese(attribute.name) or attribute.name not in lowered:
            continue
        value = _value_after(sentence, attribute.name, chinese=chinese)
        if not value:
            continue
        said = Attribute(attribute.name, value)
        if not new_value(attribute, said):
            continue
        content = f"用户的{attribute.name}是{value}" if chinese else f"User's {attribute.name} is {value}"
        return make(ctx, content, "fact", MEDIUM, subject=attribute.name, predicate="is", value=value)
    return None


def _value_after(sentence: str, name: str, *, chinese: bool) -> str:
    if chinese:
        at = sentence.find(name)
        if at < 0:
            return ""
        m = _ZH_INTRO.match(sentence[at + len(name) :])
        return _ZH_PARTICLES.sub("", _ZH_VALUE_END.sub("", m["value"])).strip() if m else ""
    m = re.search(rf"\b(?:my|our)\s+(?:\w+\s+)?{re.escape(name)}\b", sentence, re.I)
    if not m:
        return ""
    found = _EN_INTRO.match(sentence[m.end() :])
    return _EN_VALUE_END.sub("", found["value"]).strip(" .") if found else ""


def known_attributes(memories: list[str] | tuple[str, ...]) -> list[Attribute]:
    """The attributes the given memory texts give values to, longest name first (so "frequent flyer
    number" is tried before "number")."""
    found = {a.name: a for a in (attribute_of(text) for text in memories) if a}
    return sorted(found.values(), key=lambda a: -len(a.name))
