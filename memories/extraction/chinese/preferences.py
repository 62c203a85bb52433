"""Chinese rules for preferences ("我最喜欢的颜色是蓝色", "比起茶我更喜欢咖啡") and habits ("周末我一般会去爬山")."""

import re
from collections.abc import Callable

from memories.extraction import lexicon
from memories.extraction.candidates import MEDIUM, Ctx, make, name_kind, tool_entities
from memories.extraction.phrasing import slot_key, strip_zh_end, zh_third_person
from memories.providers.llm_types import CandidateMemory

# Preferences ---------------------------------------------------------------------------------------

_FAVORITE = re.compile(r"^我(?:们)?最?喜欢的(?P<attr>[^，,。是]{1,10})是(?P<val>.+)$")


_FAVORITE_REVERSED = re.compile(r"^(?P<val>[^，,。]{1,20}?)是我最喜欢的(?P<attr>.{1,10})$")


_ADV = r"(?:现在|其实|还是|也|一直|平时|真的|非常|很|特别|超级|挺|都|比较|最近)*"


_PREFER = re.compile(
    r"^我" + _ADV + r"(?:更喜欢|更爱|比较喜欢|偏好|偏爱|更偏爱|更倾向于|倾向于|宁愿|宁可|更习惯|更想)"
    r"(?P<val>.+?)(?:[，,]?(?:而不是|而非|胜过|多过|多于|不喜欢|不要)(?P<alt>.+))?$"
)


_PREFER_THAN = re.compile(
    r"^(?:比起|相比)(?P<alt>.+?)[，,]?\s*我" + _ADV + r"(?:更喜欢|更爱|更倾向于|更偏爱|更想)(?P<val>.+)$"
)


_VERB_PREFIX = re.compile(r"^(?P<verb>喝|吃|用|听|看|玩|去)")


def _object(text: str) -> tuple[str, str]:
    """(value without a leading verb, the domain that verb implies)."""
    text = re.sub(r"了$", "", text.strip())
    m = _VERB_PREFIX.match(text)
    if m and len(text) > 1:
        return text[1:].strip(), lexicon.ZH_VERB_DOMAINS.get(m["verb"], "")
    return text, ""


def favorite(text: str, ctx: Ctx) -> CandidateMemory | None:
    m = _FAVORITE.match(text) or _FAVORITE_REVERSED.match(text)
    if not m or m["val"].startswith(("我", "你", "这", "那")):
        return None
    attr, val = m["attr"].strip(), strip_zh_end(m["val"]).strip()
    english = lexicon.ZH_ATTRIBUTES.get(attr, "")
    kind = "tool" if lexicon.domain_of(val) in lexicon.TOOL_DOMAINS else name_kind(english) if english else "other"
    return make(
        ctx,
        zh_third_person(text),
        "preference",
        MEDIUM,
        subject=f"favorite {english}" if english else f"最喜欢的{attr}",
        predicate="is",
        value=val,
        entities=[(val, kind)] if kind != "other" else [],
    )


def prefer(text: str, ctx: Ctx) -> CandidateMemory | None:
    m = _PREFER_THAN.match(text) or _PREFER.match(text)
    if not m:
        return None
    value, verb_domain = _object(m["val"])
    alt = _object(m["alt"])[0] if m["alt"] else ""
    if len(value) < 1 or value.startswith(("你", "这", "那", "它")):
        return None
    domain = lexicon.domain_of(value) or (lexicon.domain_of(alt) if alt else "") or verb_domain
    if domain:
        subject = f"{domain} preference"
    elif alt:
        subject = " or ".join(sorted([slot_key(value), slot_key(alt)]))
    else:
        subject = f"{value} preference"
    return make(
        ctx,
        zh_third_person(text),
        "preference",
        MEDIUM,
        subject=subject,
        predicate="prefers",
        value=value,
        entities=tool_entities(value),
    )


_SENTIMENT = re.compile(
    r"^我(?P<adv>(?:现在|其实|真的|非常|很|特别|超级|超|好|挺|也|一直|都|最|有点|还是|比较|不太|不怎么|一点都|一点也|从小就|向来|平时|"
    r"通常|一般)*)"
    r"(?P<verb>不喜欢|不爱|讨厌|受不了|反感|厌恶|不感冒|不吃|不喝|吃不了|喝不了|喜欢|爱|热爱|喜爱|迷上了|迷上|爱上了|爱上)(?P<obj>.+)$"
)


_DISLIKE = ("不", "讨厌", "受不了", "反感", "厌恶", "吃不了", "喝不了")


def sentiment(text: str, ctx: Ctx) -> CandidateMemory | None:
    m = _SENTIMENT.match(text)
    if not m or m["obj"].startswith(("的", "你", "这", "那", "它", "上")):
        return None
    obj, _ = _object(re.split(r"[，,；;]", m["obj"])[0])
    if not obj:
        return None
    negative = m["verb"].startswith(_DISLIKE) or any(n in m["adv"] for n in ("不太", "不怎么", "一点都", "一点也"))
    return make(
        ctx,
        zh_third_person(text),
        "preference",
        MEDIUM,
        subject=obj,
        predicate="opinion",
        value="dislikes" if negative else "likes",
        entities=tool_entities(obj),
    )


# Habits ------------------------------------------------------------------------------------------------

_WHEN = (
    r"每天早上|每天晚上|每天中午|每天下午|每天|每晚|每早|每周[一二三四五六日天]?|每个月|每月|每年|平时|通常|一般|经常|总是|常常|"
    r"习惯|向来|从来不|从不|很少"
)


_HABIT = re.compile(r"^我(?P<when>" + _WHEN + r")(?P<act>.{2,})$")


_HABIT_LEAD = re.compile(r"^(?P<when>" + _WHEN + r")[，,]?\s*我(?P<act>.{2,})$")


# "周末我一般会去爬山": a time of the week or day, then the habit.
_HABIT_MID = re.compile(
    r"^(?P<pre>周末|每个周末|工作日|平日|早上|晚上|中午|下班后|睡前)[，,]?\s*我(?P<when>" + _WHEN + r")(?P<act>.{2,})$"
)


# Each way of saying a habit, with how the memory says it: the user's own sentence when 我 leads it.
_HABIT_FORMS: list[tuple[re.Pattern, Callable[[re.Match, str], str]]] = [
    (_HABIT, lambda m, text: zh_third_person(text)),
    (_HABIT_LEAD, lambda m, text: f"用户{m['when']}{zh_third_person(m['act'])}"),
    (_HABIT_MID, lambda m, text: f"用户{m['pre']}{m['when']}{zh_third_person(m['act'])}"),
]


def habit(text: str, ctx: Ctx) -> CandidateMemory | None:
    lead = re.match(r"^[^，,我]{1,8}[，,]\s*(?=我)", text)
    if lead and not _HABIT.match(text):
        # "从春天开始，我每周二晚上去学陶艺": the habit after its lead-in, which stays in the memory.
        found = habit(text[lead.end() :], ctx)
        if found is not None:
            found.content = zh_third_person(text)
        return found
    for pattern, said in _HABIT_FORMS:
        m = pattern.match(text)
        if m and not _NO_OBJECT.match(m["act"]):
            return _habit(m, said(m, text), ctx)
    return None


# "每周三都打": a verb whose object was said before ("羽毛球"), so the habit names nothing.
_NO_OBJECT = re.compile(r"^(?:都|会|都会|要|都要|也|还)?[打玩去弄搞做练看](?:[\s，,。]|$)")


def _habit(m: re.Match, content: str, ctx: Ctx) -> CandidateMemory:
    act = re.sub(r"^(?:都|会|都会|要|都要|用)", "", m["act"])
    return make(
        ctx,
        content,
        "workflow",
        MEDIUM,
        subject=zh_third_person(act),
        predicate="habit",
        value=m["when"],
        entities=tool_entities(act),
    )
