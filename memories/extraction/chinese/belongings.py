"""Chinese rules for what the user has and uses: "我的X是Y", tools, projects, possessions."""

import re

from memories.extraction import lexicon
from memories.extraction.candidates import HIGH, MEDIUM, Ctx, make, name_kind, named_entities, tool_entities, works_on
from memories.extraction.chinese.plans import zh_value
from memories.extraction.phrasing import slot_key, zh_third_person
from memories.providers.llm_types import CandidateMemory

_MY = re.compile(r"^我(?:们)?的(?P<attr>[^，,。是叫为]{1,12}?)(?:是|叫|为)(?P<val>.+)$")


_NOT_ATTRIBUTES = ("问题", "意思", "想法", "看法", "建议", "错", "理解", "回答", "需求")


# An attribute naming one of these is about a project: "我们的后端是…", "项目截止日期是…".
_PROJECT_WORDS = re.compile(r"项目|接口|仓库|数据库|服务器|分支|域名|端口|前缀|截止|团队|技术栈|后端|前端")


# "我手机号是…", "我生日是…": chat leaves 的 out before the attributes everyone has one of.
_MY_WITHOUT_DE = re.compile(
    r"^我(?P<attr>"
    + "|".join(sorted((a for a in lexicon.ZH_ATTRIBUTES if len(a) >= 2), key=len, reverse=True))
    + r"|手机号码|手机|微信号?|车牌号?|血型|身份证号|工号|学号|地址|星座)(?:是|叫|为)(?P<val>.+)$"
)


def my_attribute(text: str, ctx: Ctx) -> CandidateMemory | None:
    m = _MY.match(text)
    if not m:
        bare = _MY_WITHOUT_DE.match(text)
        if bare:
            text = f"我的{bare['attr']}{text[len(bare['attr']) + 1 :]}"
            m = _MY.match(text)
    if not m or m["attr"].startswith(_NOT_ATTRIBUTES) or m["val"].startswith(("不", "有点", "很", "太")):
        return None
    attr, val = m["attr"].strip(), m["val"].strip()
    english = lexicon.ZH_ATTRIBUTES.get(attr, "")
    kind = name_kind(english or attr)
    if attr.endswith(
        ("妻子", "老婆", "丈夫", "老公", "儿子", "女儿", "妈妈", "爸爸", "母亲", "父亲", "朋友", "老板", "同事")
    ):
        kind = "person"
    category = "project" if _PROJECT_WORDS.search(attr) else "fact"
    importance = HIGH if english in {"name", "birthday", "email", "phone number", "occupation", "employer"} else MEDIUM
    entities = [(val, kind)] if kind != "other" else []
    return make(
        ctx,
        zh_third_person(text),
        category,
        importance,
        subject=english or attr,
        predicate="is",
        value=val,
        entities=entities + tool_entities(val),
    )


_USES = re.compile(r"^我(?:现在|平时|一直|主要|通常|都|也|目前)?(?:在用|用的是|使用|一直用|用)(?P<what>.+)$")


_PROJECT = re.compile(
    r"^我(?:们)?(?:现在|最近|目前)?(?:正在|在|最近在|目前在)(?:做|开发|写|搞|维护|构建)(?P<what>.{2,})$"
)


_QUOTED = re.compile(r"[「『《“\"](?P<name>[^」』》”\"]{1,30})[」』》”\"]")


_CALLED = re.compile(r"叫(?:做)?(?P<name>[\w\u4e00-\u9fff.-]{2,20})")


_HAVE = re.compile(
    r"^我(?:们)?有(?P<q>一个|一只|一条|一位|两个|两只|三个|个|只|条|位|辆|台|一辆|一台|一家)(?P<thing>.{1,30})$"
)


_NOT_POSSESSIONS = re.compile(r"^(?:问题|疑问|想法|建议|事|会|点|时间|空|小问题|请求|需求|bug|错误)")


def uses(text: str, ctx: Ctx) -> CandidateMemory | None:
    m = _USES.match(text)
    if not m or m["what"].startswith(("了", "过", "完", "不", "着", "来", "于")):
        return None
    value = zh_value(m["what"])
    if len(value) < 2:
        return None
    return make(
        ctx,
        zh_third_person(text),
        "preference",
        MEDIUM,
        subject=lexicon.domain_of(value) or slot_key(value),
        predicate="uses",
        value=value,
        entities=tool_entities(value) or [(name, "tool") for name, _ in named_entities(value)],
    )


def project(text: str, ctx: Ctx) -> CandidateMemory | None:
    m = _PROJECT.match(text)
    if not m:
        return None
    what = m["what"].strip()
    named = _QUOTED.search(what) or _CALLED.search(what)
    name = named["name"] if named else ""
    return works_on(ctx, zh_third_person(text), what, name=name, subject=name or what)


def have(text: str, ctx: Ctx) -> CandidateMemory | None:
    m = _HAVE.match(text)
    if not m or _NOT_POSSESSIONS.match(m["thing"]):
        return None
    thing = m["thing"].strip()
    named = _CALLED.search(thing)
    return make(
        ctx,
        zh_third_person(text),
        "fact",
        MEDIUM,
        subject=thing,
        predicate="has",
        value=f"{m['q']}{thing}",
        entities=[(named["name"], "other")] if named else [],
    )
