"""Chinese rules for facts about the user: name, age, work, home, origin, occupation, where things are, health."""

import re

from memories.extraction import vocabulary
from memories.extraction.candidates import (
    HIGH,
    MEDIUM,
    Ctx,
    employer,
    make,
    named_fact,
)
from memories.extraction.phrasing import zh_third_person
from memories.extraction.rules import Builder, FirstMatch
from memories.providers.llm_types import CandidateMemory

# Facts about the user, in this order: the first pattern that matches decides, even when its rule then
# keeps nothing ---------------------------------------------------------------------------------------

identity = FirstMatch()


_NAME = re.compile(r"^我(?:的名字)?(?:叫|是叫)(?P<name>[\u4e00-\u9fffA-Za-z·]{1,12})$|^我的名字是(?P<name2>.{1,20})$")


_EMPLOYER = re.compile(
    r"^我(?:现在|目前|一直|还)?在(?P<org>.+?)(?:工作|上班|任职|实习|打工)$|^我(?:现在|目前)?(?:就职于|任职于|供职于)(?P<org2>.+)$"
)


_ROLE_AT = re.compile(r"^我(?:现在|目前|一直|还)?在(?P<org>.+?)(?:当|做|担任|任)(?P<role>[^，,]{2,10})$")


_LIVE = re.compile(
    r"^我(?:现在|目前|一直|还)?(?:住在|生活在|定居在|定居于|住)(?P<place>.+)$|^我(?:刚|最近|已经|刚刚)?(?:搬到|搬去|搬家到)了?(?P<place2>.+)$"
)


_ORIGIN = re.compile(
    r"^我(?:来自|老家在|老家是|出生在|出生于)(?P<place>.+)$|^我是(?P<place2>[\u4e00-\u9fff]{2,6})人$|"
    r"^我(?:是)?(?:从小)?在(?P<place3>[\u4e00-\u9fff]{2,8}?)(?:长大|出生)的?(?P<rest>.*)$"
)


_AGE = re.compile(r"^我(?:今年)?(?P<age>\d{1,3})岁(?:了)?$")


_ALLERGY = re.compile(r"^我对(?P<what>.+?)过敏$")


_ROLE = re.compile(r"^我(?:现在|目前)?(?:是|是一名|是一个|是个|是一位|做)(?P<role>.+)$")


_ROLE_DO = re.compile(r"^我(?:现在|目前)?是做(?P<role>.+)的$")


_MEASURE = re.compile(r"^(?:一名|一个|一位|个|名|位)")


_NOT_A_ROLE = re.compile(
    r"[的了吗吧呢啊呀么着过很太真挺说想要会能在是有]|^(?:这|那|你|他|她|它|谁|什么|怎么|不|没|故意|开玩笑|认真)"
)


PLACE_END = re.compile(r"(?:了|的|附近|那边|这边|这里|那里)$")


def is_place(text: str) -> bool:
    return (
        text in vocabulary.ZH_PLACES
        or text.endswith(vocabulary.ZH_PLACE_SUFFIXES)
        or text.startswith(vocabulary.ZH_PLACES)
    )


def _name_match(text: str) -> re.Match | None:
    m = _NAME.match(text)
    # "我叫了外卖" is not a name.
    return m if m and not (m["name"] or m["name2"]).startswith(("了", "过", "着")) else None


@identity.rule(_name_match)
def _name(m: re.Match, text: str, ctx: Ctx) -> CandidateMemory:
    name = (m["name"] or m["name2"]).strip()
    return named_fact(ctx, f"用户的名字是{name}", HIGH, subject="name", predicate="is", value=name, kind="person")


@identity.rule(_AGE.match)
def _age(m: re.Match, text: str, ctx: Ctx) -> CandidateMemory:
    return make(ctx, f"用户{m['age']}岁", "fact", MEDIUM, subject="age", predicate="is", value=m["age"])


@identity.rule(_ALLERGY.match)
def _allergy(m: re.Match, text: str, ctx: Ctx) -> CandidateMemory:
    return make(
        ctx, zh_third_person(text), "fact", HIGH, subject=f"{m['what']} allergy", predicate="is", value="allergic"
    )


def _role_at_match(text: str) -> re.Match | None:
    m = _ROLE_AT.match(text)
    return m if m and m["role"].endswith(vocabulary.ZH_OCCUPATION_SUFFIXES) else None


@identity.rule(_role_at_match)
def _role_at(m: re.Match, text: str, ctx: Ctx) -> CandidateMemory:
    """ "我在一家医院当护士": the occupation, and where."""
    org = re.sub(r"^(?:一家|一个|家)", "", m["org"].strip())
    return make(
        ctx,
        zh_third_person(text),
        "fact",
        HIGH,
        subject="occupation",
        predicate="is",
        value=m["role"],
        entities=[(org, "organization")] if not org.startswith(("做", "搞")) and len(org) <= 10 else [],
    )


@identity.rule(_EMPLOYER.match)
def _employer(m: re.Match, text: str, ctx: Ctx) -> CandidateMemory:
    """ "我在腾讯工作" names the employer; "我在深圳上班" names where the user works."""
    org = (m["org"] or m["org2"]).strip()
    if is_place(org):
        return named_fact(
            ctx, zh_third_person(text), MEDIUM, subject="work location", predicate="is", value=org, kind="place"
        )
    return employer(ctx, zh_third_person(text), org)


def _place_fact(subject: str, predicate: str, *, min_length: int = 0) -> Builder:
    """Where the user lives or is from: the place is whichever alternative of the pattern matched."""

    def build(m: re.Match, text: str, ctx: Ctx) -> CandidateMemory | None:
        place = next(v for k, v in m.groupdict().items() if k.startswith("place") and v)
        place = PLACE_END.sub("", place.strip())
        if len(place) < min_length:
            return None
        return named_fact(
            ctx, zh_third_person(text), HIGH, subject=subject, predicate=predicate, value=place, kind="place"
        )

    return build


identity.add(_LIVE.match, _place_fact("residence", "lives in", min_length=2))

# "我在杭州", "人在深圳": a city said with nothing after it is where the user is based (what they do
# there, "在杭州出差", "在深圳上班", is read by the rules for it).
_BASED_IN = re.compile(r"^我(?:现在|目前|一直|人)?在(?P<place>[\u4e00-\u9fff]{2,8}?)(?:这边|那边|这儿|这里)?$")


def _based_in(text: str) -> re.Match | None:
    m = _BASED_IN.match(text)
    place = m["place"] if m else ""
    # The place itself, not a place and what is done there ("杭州出差").
    return m if place in vocabulary.ZH_PLACES or place.endswith(vocabulary.ZH_PLACE_SUFFIXES) else None


identity.add(_based_in, _place_fact("residence", "lives in", min_length=2))
identity.add(_ORIGIN.match, _place_fact("origin", "is from"))


def _role_match(text: str) -> re.Match | None:
    return _ROLE_DO.match(text) or _ROLE.match(text)


@identity.rule(_role_match)
def _role(m: re.Match, text: str, ctx: Ctx) -> CandidateMemory | None:
    """ "我是一名护士", "我是做设计的": an occupation; "我是伴娘": a short noun that says what the user is."""
    role = _MEASURE.sub("", m["role"].strip())
    if role.startswith(("说", "不是", "在", "从", "来", "用", "因为", "想", "觉得", "问")):
        return None
    occupation = role.endswith(vocabulary.ZH_OCCUPATION_SUFFIXES) or m.re is _ROLE_DO
    if not occupation:
        if m.re is _ROLE and re.fullmatch(r"[\u4e00-\u9fff]{2,4}", role) and not _NOT_A_ROLE.search(role):
            return make(ctx, zh_third_person(text), "fact", MEDIUM, subject=role, predicate="is", value="yes")
        return None
    org = re.match(r"^(?P<org>.+?)(?:的)", role)
    entities = [(org["org"], "organization")] if org and len(org["org"]) >= 2 else []
    return make(
        ctx, zh_third_person(text), "fact", HIGH, subject="occupation", predicate="is", value=role, entities=entities
    )


# "新家在南山区": where the user's home, company or school is, often said without 我的.
_ZH_WHERE = re.compile(
    r"^(?:我的?)?(?P<what>新家|家|老家|公司|学校|单位|办公室)(?:在|位于)(?P<place>[^，,]{2,12})(?P<rest>.*)$"
)


def where(text: str, ctx: Ctx) -> CandidateMemory | None:
    m = _ZH_WHERE.match(text)
    if not m:
        return None
    place = PLACE_END.sub("", m["place"].strip())
    return named_fact(
        ctx,
        f"用户的{m['what']}在{m['place'].strip()}",
        MEDIUM,
        subject=f"{m['what']} location",
        predicate="is",
        value=place,
        kind="place",
    )


# Health: "医生说我有轻度高血压", "我有哮喘" ------------------------------------------------------

_ZH_HEALTH = re.compile(
    r"^(?:医生说|检查发现|体检发现|体检查出|查出来)?我(?:有|得了|患了|患有|确诊了?|被诊断出?(?:有|患有|为)?)"
    r"(?P<what>[^，,]{0,8}?(?:病|症|炎|癌|高血压|低血压|糖尿病|哮喘|贫血|失眠|抑郁|焦虑|过敏|痛风|结石|骨折|近视|胃溃疡))"
)


_ZH_INTOLERANT = re.compile(r"^我(?:也|还)?(?:是|有)?(?P<what>[\u4e00-\u9fff]{1,6}不耐受)")


def health(text: str, ctx: Ctx) -> CandidateMemory | None:
    m = _ZH_HEALTH.match(text) or _ZH_INTOLERANT.match(text)
    if not m:
        return None
    return make(
        ctx, zh_third_person(text), "fact", HIGH, subject=f"{m['what']} condition", predicate="has", value=m["what"]
    )
