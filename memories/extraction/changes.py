"""Statements that something changed: "I quit coffee", "I switched from vim to VS Code", "I moved to
Lisbon", "these days I only drink green tea", "我不再喝咖啡了", "我把编辑器换成了VS Code".

They are knowledge updates: the candidate keeps the change's own words (the merge decision reads the
cue in them and supersedes what stated the old state), and a move or a new job also fills the
residence or employer slot so it replaces the old value there however it was worded.
"""

import re

from memories.extraction import lexicon
from memories.extraction.candidates import HIGH, MEDIUM, Ctx, employer, make, named_entities, residence
from memories.extraction.phrasing import ADVERB_RUN, capitalize, third_person, zh_third_person
from memories.providers.llm_types import CandidateMemory

_ADV = ADVERB_RUN


def _said_done(verbs: str, rest: str, *, who: str = "i") -> re.Pattern:
    """ "I (have) (just) <verb> <rest>": the speaker's own change, in the past or the present perfect."""
    return re.compile(rf"^{who}\s+(?:have\s+|'ve\s+)?" + _ADV + rf"(?:{verbs})\s+{rest}$", re.I)


_STOP = _said_done(r"quit|stopped|gave up|given up|had to give up|dropped|ditched|cut out|cancell?ed", r"(?P<what>.+)")
_NO_LONGER = re.compile(r"^i\s+" + _ADV + r"no longer\s+(?P<rest>.+)$", re.I)
_NOT_ANYMORE = re.compile(
    r"^i\s+(?:do not|don't|am not|'m not|can not|cannot|can't)\s+(?P<what>.+?)\s+(?:anymore|any more|any longer)$",
    re.I,
)
_SWITCH_FROM = _said_done(
    r"switched|changed|migrated|converted|went|moved",
    r"(?:over\s+|back\s+)?from\s+(?P<old>.+?)\s+(?:to|for)\s+(?P<new>.+)",
    who=r"(?:i|we)",
)
# "We've swapped city life for a cottage outside York", "I traded my car for a bike".
_SWAP = _said_done(r"swapped|traded|exchanged", r"(?P<old>.+?)\s+for\s+(?P<new>.+)", who=r"(?:i|we)")
_SWITCH_TO = _said_done(
    r"switched|changed|migrated|moved over",
    r"to\s+(?P<new>.+?)(?:\s+(?:instead of|rather than|from)\s+(?P<old>.+))?",
)
_MOVE = _said_done(r"moved|relocated", r"(?:back\s+)?to\s+(?P<new>.+)", who=r"(?:we|i)")
_JOB = _said_done(
    r"joined|started (?:a new job |working )?at|started working (?:at|for)|got a (?:new )?job at|"
    r"took a (?:new )?job at|was hired by|started as (?:an? )?[\w -]+? at",
    r"(?P<new>.+)",
)
_SENTIMENT = re.compile(r"^(?:really\s+)?(?:like|love|enjoy|hate|dislike|care for|mind)\b", re.I)
_PLACE_END = re.compile(
    r"\s+(?:last|this|a|two|three|few|in|on|since|with|because|after|for)\b.*$|\s+(?:ago|recently)$", re.I
)
_ORG_END = re.compile(r"\s+(?:as|in|last|this|a|on|since|because|after|two|three|few)\b.*$", re.I)


def _category(text: str) -> str:
    return "preference" if lexicon.domain_of(text) in ("drink", "food") else "fact"


# A habit said to hold now is a change of habit: (pattern, what the memory adds to the habit, its
# category when not read from the habit's domain). The statement is the "rest" group, else the clause.
_HABITS_NOW: list[tuple[re.Pattern, str, str]] = [
    (
        re.compile(r"^(?:these days|nowadays|now|lately)[,]?\s+(?P<rest>i\s+" + _ADV + r"only\s+.+)$", re.I),
        " these days",
        "",
    ),
    (re.compile(r"^(?P<rest>i\s+(?:now|nowadays)\s+only\s+.+)$", re.I), " these days", ""),
    (re.compile(r"^(?P<rest>i\s+only\s+.+?)\s+(?:these days|nowadays|now)$", re.I), " these days", ""),
    # "(These days) I only drink green tea in the morning": the lead time may be stripped before the rules.
    (
        re.compile(
            r"^(?P<rest>i\s+(?:now\s+)?only\s+(?:drink|eat|use|wear|read|listen to|watch|play|take|buy|cook)\s+.+)$",
            re.I,
        ),
        "",
        "",
    ),
    # "I cycle every evening now"
    (
        re.compile(
            r"^i\s+(?!am\b|was\b|need|want|have\b|must\b|will\b|would\b|can\b|could\b|should\b|feel\b|think\b)"
            r"[a-z]+\s+.*\b(?:every|each|daily|weekly|on weekends|in the mornings?|in the evenings?|at night)\b.*?"
            r"\s+(?:now|these days|nowadays)$",
            re.I,
        ),
        "",
        "workflow",
    ),
]


# A move or a new job also fills the residence or employer slot, with what the statement names.
_SLOT_CHANGES = ((_MOVE, _PLACE_END, residence), (_JOB, _ORG_END, employer))


def english_change(clause: str, ctx: Ctx) -> CandidateMemory | None:
    # "We moved …" said by the user is the user's move too.
    clause = re.sub(r"^we\b", "I", clause, flags=re.I)
    for pattern, value_end, slot in _SLOT_CHANGES:
        m = pattern.match(clause)
        if m:
            value = value_end.sub("", m["new"]).strip()
            return slot(ctx, capitalize(third_person(clause)), value) if value else None
    m = _SWITCH_FROM.match(clause) or _SWAP.match(clause) or _SWITCH_TO.match(clause)
    if m:
        content = capitalize(third_person(clause))
        if re.match(r"^i\s+(?:have\s+)?" + _ADV + r"moved\b", clause, re.I):
            place = _PLACE_END.sub("", m["new"]).strip()
            return residence(ctx, content, place)
        return make(ctx, content, _category(clause), HIGH, entities=named_entities(clause[1:]))
    m = _STOP.match(clause) or _NOT_ANYMORE.match(clause)
    if m and _SENTIMENT.match(m["what"]):
        return None  # "I don't like jazz anymore": the sentiment rule fills the opinion slot
    if m:
        return make(ctx, capitalize(third_person(clause)), _category(clause), HIGH, entities=named_entities(clause[1:]))
    m = _NO_LONGER.match(clause)
    if m and not _SENTIMENT.match(m["rest"]):
        rest = third_person("I " + m["rest"])
        content = "User no longer " + rest.split(" ", 1)[1] if " " in rest else ""
        return make(ctx, content, _category(clause), HIGH) if content else None
    for pattern, added, category in _HABITS_NOW:
        m = pattern.match(clause)
        if m:
            habit = m["rest"] if "rest" in pattern.groupindex else clause
            return make(ctx, capitalize(third_person(habit)) + added, category or _category(clause), MEDIUM)
    return None


_ZH_STOP = re.compile(r"^我(?:已经|现在|早就)?(?:不再|再也不|戒了|戒掉了?|已经戒了)(?P<what>.+)$")
_ZH_NOT_ANYMORE = re.compile(r"^我(?:已经|现在)?不(?P<verb>喝|吃|抽|用|玩|看|去|做)(?P<what>.+?)了$")
_ZH_SWITCH = re.compile(
    r"^我(?:已经|最近|现在|如今)?(?:早上|早餐|午餐|晚餐|晚上|平时|周末)?(?:从(?P<from>.+?)|把(?P<old>.+?))?"
    r"(?:换成|改成|改用|换用|换到|转到|改(?:喝|吃|抽|穿|玩|听|看|开|去))了?(?P<new>.+)$"
)
_ZH_JOB = re.compile(r"^我(?:已经|最近)?(?:跳槽到|入职|加入)了?(?P<new>.+?)(?:工作|上班)?$")
_ZH_WHEN = r"(?:已经|刚|刚刚|最近|上个月|上周|去年|今年|年初|前不久|前几天)?"
# The user's household is the user too ("我们全家搬到昆明了"), and a time may come before it ("年初我们…").
_ZH_LEAD = r"^(?:[^我，,]{1,6}?)?"
_ZH_WE = r"我(?:们(?:全家|一家)?|和[^，,]{1,6}?)?"
_ZH_MOVE = re.compile(
    _ZH_LEAD
    + _ZH_WE
    + _ZH_WHEN
    + r"(?:从(?P<old>.+?))?(?:搬到|搬去|搬回|搬家到|移居到?)了?(?P<new>[^，,]+?)(?:住|居住|生活|定居)?了?(?:[，,].*)?$"
)
# "已经在合肥安顿下来了": settled somewhere is living there, said with or without a subject.
_ZH_SETTLED = re.compile(
    _ZH_LEAD
    + f"(?:{_ZH_WE})?"
    + r"(?:已经|刚|终于)?在(?P<new>[^，,。]{2,8}?)(?:安顿下来|定居|落户|安家)了?(?:[，,].*)?$"
)
_ZH_ONLY = re.compile(r"^我(?:现在|如今|最近|这些天)(?:每天|一般|都)?只(?P<rest>.+)$")


def chinese_change(text: str, ctx: Ctx) -> CandidateMemory | None:
    for pattern, slot in ((_ZH_MOVE, residence), (_ZH_SETTLED, residence), (_ZH_JOB, employer)):
        m = pattern.match(text)
        if m and m["new"]:
            # Said without a subject ("已经在合肥安顿下来了"), it is the user's own news.
            said = text if "我" in text else "我" + text
            return slot(ctx, zh_third_person(said), m["new"])
    if _ZH_STOP.match(text) or _ZH_NOT_ANYMORE.match(text) or _ZH_SWITCH.match(text) or _ZH_ONLY.match(text):
        return make(ctx, zh_third_person(text), _category(text), HIGH)
    return None
