"""Attributes: a memory that gives the value of a named thing of the user's ("User's bank is Barclays",
"User uses Chrome as their browser", "用户的信用卡还款日是每月15号"), read without a database.

A later statement giving the same attribute another value replaces the earlier one, however its words
or its vector differ: "User's frequent flyer number is KL907736" makes "User's KLM frequent flyer
number is KL448120, please keep it handy" stale, "User switched their browser to Firefox" makes
"User always uses Chrome as their browser" stale. The attribute is named by the words themselves (a
possessive, "as their …", "用户的…"), so no list of attributes is needed; what is left out is what
people have several of at once (friends, children, pets, languages, hobbies), whose second value is
another fact, not a correction.
"""

import re
from dataclasses import dataclass
from functools import lru_cache

from memories import updates

# "User's dentist appointment is on the 9th", "User's rent's $2,100", "User's rent went down to $1,750".
_EN_POSSESSIVE = re.compile(
    r"^(?:the )?user's (?P<attr>[^,;:.!?()]{2,60}?)"
    # ("User's wife's birthday …" is another person's thing: a glued 's is a copula only before a value.)
    r"(?:'s(?=\s+(?:now\s+)?(?-i:[\d$£€A-Z]))|\s+(?:is|are|was|has been|have been|will be)(?: now| currently| still)?"
    r"|\s+(?:changed|moved|switched|went (?:up|down)|dropped|fell|rose|increased|decreased|jumped|got (?:moved|changed|"
    r"pushed|bumped|raised|lowered|cut)|was (?:moved|changed|pushed|bumped|raised|lowered|cut|reduced|rotated|"
    r"reset|reassigned)|has (?:changed|moved|gone (?:up|down)))(?: back)? to)\s+(?P<value>\S.*)$",
    re.I,
)
# "User (always) uses Chrome as their browser, on every machine".
_EN_AS = re.compile(
    r"^user (?:[a-z]+ly |always |now |still )*(?:uses|is using|has|drives|runs|keeps|picked|chose|prefers)\s+"
    r"(?P<value>.+?) as (?:their|his|her|the) (?P<attr>[a-z][a-z -]{1,40}?)"
    r"(?=[,;.!]|\s+(?:and|for|on|at|in|since)\b|$)",
    re.I,
)
# "User switched their browser to Firefox last week", "User changed their phone number to …".
_EN_SET = re.compile(
    r"^user (?:[a-z]+ly |just |finally |now )*(?:switched|changed|moved|updated|set|swapped|reset|bumped|raised|"
    r"lowered|upgraded|downgraded)\s+(?:their|his|her) (?P<attr>[a-z][a-z -]{1,40}?)(?: over)? (?:to|into)\s+"
    r"(?P<value>\S.*)$",
    re.I,
)
# "用户的信用卡还款日是每月15号", "用户的信用卡还款日改到3号了".
_ZH_POSSESSIVE = re.compile(
    r"^用户的(?P<attr>[^，,。；;是为在有改调换变降涨升定从]{2,12}?)(?:现在|目前|已经|也|还|又|都)*"
    r"(?:是|为|叫做?|改成了?|改到了?|改为|调成了?|调到了?|调整为|换成了?|变成了?|降到了?|降至|涨到了?|涨至|升到了?|升至|定在了?|提高到了?)"
    r"(?P<value>[^，,。；;].*)$"
)
# The last words of an attribute that only say where or for what ("parking spot at the office").
_EN_ATTR_TAIL = re.compile(r"\s+(?:at|in|on|for|with|from|of)\s+(?:the|my|their|his|her|work|home)\b.*$", re.I)
_EN_ATTR_DROP = re.compile(r"\b(?:new|current|old|latest|usual|own|actual|main|primary|the|a|an|now)\b", re.I)
_ZH_ATTR_DROP = re.compile(r"^(?:新|现在的|目前的|最新的|原来的)|(?:现在|目前)$")

# What people have several of at once: a second value is another fact ("User's friend is Tom" and
# "User's friend is Anna"), and the people among them have many attributes of their own.
_SEVERAL = re.compile(
    r"\b(?:friend|friends|colleague|colleagues|coworker|coworkers|co-worker|kid|kids|child|children|son|sons|"
    r"daughter|daughters|brother|brothers|sister|sisters|sibling|siblings|cousin|cousins|nephew|niece|aunt|"
    r"uncle|grandparent|grandparents|parent|parents|pet|pets|dog|dogs|cat|cats|hobby|hobbies|language|"
    r"languages|skill|skills|interest|interests|allergy|allergies|goal|goals|plan|plans|project|projects|"
    r"client|clients|neighbour|neighbours|neighbor|neighbors|teammate|teammates|favou?rites|trip|trips)\b",
    re.I,
)
_ZH_SEVERAL = re.compile(
    r"朋友|同事|孩子|儿子|女儿|兄弟|姐妹|哥哥|弟弟|姐姐|妹妹|表|堂|宠物|狗|猫|爱好|兴趣|语言|技能|过敏|目标|计划|项目|客户|邻居"
)
# A possessive whose "value" is a description of the thing, not a value of it ("User's job is
# stressful", "User's commute is long"): only values with something to compare are read.
_DESCRIPTION = re.compile(
    r"^(?:so |very |really |pretty |quite |too |a bit |kind of |super )*(?:good|great|bad|nice|long|short|boring|"
    r"stressful|busy|hard|easy|fine|ok|okay|important|amazing|awful|terrible|brutal|expensive|cheap|big|small|"
    r"fun|tough)\b",
    re.I,
)


@dataclass(frozen=True)
class Attribute:
    """A named thing of the user's and the value a statement gives it."""

    name: str  # normalised: "frequent flyer number", "browser", "信用卡还款日"
    value: str  # as written: "KL907736", "Firefox last week (2026-11-30)"


def _reading(content: str) -> tuple[str, str, bool] | None:
    """(attribute as written, value, Chinese) of the first form the text has, or None."""
    text = content.strip().replace("’", "'")
    for pattern in (_EN_POSSESSIVE, _EN_AS, _EN_SET, _ZH_POSSESSIVE):
        m = pattern.match(text)
        if m:
            return m["attr"].strip(), m["value"].strip(), pattern is _ZH_POSSESSIVE
    return None


# The merge decision asks this of the draft once per neighbour and of every neighbour; extraction, of
# each candidate beside an attribute update.
@lru_cache(maxsize=4096)
def attribute_of(content: str) -> Attribute | None:
    """The attribute a memory's text gives a value to, or None when it names none (or one people
    have several of)."""
    reading = _reading(content)
    if reading is None:
        return None
    attr, value, chinese = reading
    if chinese:
        name = _ZH_ATTR_DROP.sub("", attr)
        if len(name) < 2 or _ZH_SEVERAL.search(name) or "的" in name:
            return None
        return Attribute(name, value)
    name = _en_name(attr)
    if not name or _SEVERAL.search(name) or "'s" in name or _DESCRIPTION.match(value):
        return None
    return Attribute(name, value)


@lru_cache(maxsize=4096)
def names_several(content: str) -> bool:
    """Whether the statement gives a value to something people have several of ("User's friend is
    Tom"): another value is another one of them, not a new value."""
    reading = _reading(content)
    return bool(reading) and bool((_ZH_SEVERAL if reading[2] else _SEVERAL).search(reading[0]))


def _en_name(attr: str) -> str:
    name = _EN_ATTR_TAIL.sub("", attr.strip())
    # Names and identifiers say whose or which one ("KLM frequent flyer number"), not what it is.
    words = [w for w in name.split() if not (w[:1].isupper() or any(c.isdigit() for c in w))]
    name = _EN_ATTR_DROP.sub(" ", " ".join(words))
    return re.sub(r"\s+", " ", name).strip().casefold()


def new_value(old: Attribute, new: Attribute) -> bool:
    """Whether `new` gives the same attribute another value than `old`: the values they carry
    (numbers, identifiers, names) differ and are of a kind in common (a date for a date: "on Monday"
    and "at 9am" say two things of one flight), or, without any, the words of the value do."""
    if old.name != new.name:
        return False
    old_values, new_values = updates.values(old.value, sentence=False), updates.values(new.value, sentence=False)
    if old_values or new_values:
        return bool(new_values) and not new_values <= old_values and bool(_kinds(old.value) & _kinds(new.value))
    old_terms, new_terms = updates.key_terms(old.value), updates.key_terms(new.value)
    return bool(new_terms) and not new_terms & old_terms


_TIME = re.compile(
    r"\d{1,2}(?::\d{2})?\s*(?:am|pm|a\.m\.|p\.m\.)|\b\d{1,2}:\d{2}\b|\d+点|[一二三四五六七八九十]+点", re.I
)
_DATE = re.compile(
    r"\b\d{4}-\d{2}-\d{2}\b|\b\d{1,2}(?:st|nd|rd|th)\b|\b(?:jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)[a-z]*\b"
    r"|\b(?:mon|tues|wednes|thurs|fri|satur|sun)day\b|\d+\s*[号日]|\d+月|周[一二三四五六日天]|星期[一二三四五六日天]",
    re.I,
)


def _kinds(value: str) -> set[str]:
    """What sorts of value a text carries: times, dates, other numbers, names."""
    kinds = set()
    if _TIME.search(value):
        kinds.add("time")
    if _DATE.search(value):
        kinds.add("date")
    rest = _DATE.sub(" ", _TIME.sub(" ", value))
    if re.search(r"\d", rest):
        kinds.add("number")
    if re.search(r"(?<![\w'])[A-Z]", rest) or re.search(r"[\u4e00-\u9fff]", rest):
        kinds.add("name")
    return kinds or {"words"}
