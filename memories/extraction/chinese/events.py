"""Chinese rules for what happened in the user's life ("我上个月搬到了深圳", "报告终于写完了"), the
people and pets in it, what the user is learning, birthdays."""

import re

from memories.extraction.candidates import HIGH, MEDIUM, Ctx, make, named_entities
from memories.extraction.chinese.identity import PLACE_END, is_place
from memories.extraction.date_notes import annotate_dates
from memories.extraction.past_dates import find_past_date
from memories.extraction.phrasing import strip_zh_end, zh_third_person
from memories.providers.llm_types import CandidateMemory

# Life events ------------------------------------------------------------------------------------

# Time words that may sit between 我 and the verb ("我上个月从北京搬到了深圳") or lead the clause
# ("上周日我跑完了…").
_ZH_TIME = (
    r"(?:(?:上个?月|上(?:个)?(?:周|星期|礼拜)[一二三四五六日天]?|上周末|昨天|昨晚|前天|今天|今早|去年|前年|刚刚|刚|最近|已经|终于|"
    r"总算|也|都|正式|\d{4}年(?:\d{1,2}月)?(?:\d{1,2}[日号])?|\d{1,2}月(?:\d{1,2}[日号])?|"
    r"[\d一两二三四五六七八九十半]+(?:天|周|个星期|个月|年)(?:前|之前|以前))[，,]?\s*)*"
)


_ZH_EVENT_VERBS = (
    r"领养了?|收养了?|捡了|养了|买了|卖了|结婚了?|离婚了?|订婚了?|辞职了?|离职了?|入职了?|跳槽了?|升职了?|毕业了?|退休了?|"
    r"生了|有了宝宝|怀孕了?|被诊断出?|确诊了?|查出了?|得了|做了[^，,]{0,6}?手术|住院了?|出院了?|骨折了?|跑完了?|完成了|报名了?|参加了|"
    r"考上了?|考过了?|通过了|拿到了?|获得了|换了|开始(?=[\u4e00-\u9fff])|走了|去世了?|学会了|搬(?:家)?到了?|搬去了?|搬回了?|搬家了|去了|回了|戒了|加入了"
)


_ZH_EVENT = re.compile(
    r"^(?:"
    + _ZH_TIME
    # The subject is often left out after a time word: "昨天从救助站领养了一只橘猫".
    + r")(?:(?P<who>我们|我|咱们)|(?=[上昨前去刚今\d一两二三四五六七八九十半]))"
    + _ZH_TIME
    + r"(?:从(?P<origin>[^，,]{1,10}?))?(?P<verb>"
    + _ZH_EVENT_VERBS
    + r")(?P<rest>.*)$"
)


_ZH_NOT_EVENT = re.compile(r"^(?:你|这个|那个|它|吗|呢|什么|一下|$)")


_ZH_DONE_VERBS = ("完成", "跑完", "拿到", "考过", "通过")


def event(text: str, ctx: Ctx) -> CandidateMemory | None:
    m = _ZH_EVENT.match(text)
    if not m or _ZH_NOT_EVENT.match(m["rest"]) and not m["verb"].endswith("了"):
        return None
    if not m["who"]:
        if not find_past_date(text, ctx.now):
            return None  # without 我, only a dated report ("昨天领养了…") is clearly the user's own news
        text = "我" + text
    verb = m["verb"]
    if verb.startswith("搬") or verb == "去了" and is_place(strip_zh_end(m["rest"]).strip("了 ")):
        place = PLACE_END.sub("", strip_zh_end(m["rest"]).strip(" 了"))
        if verb.startswith("搬") and place:
            return make(
                ctx,
                zh_third_person(text),
                "fact",
                HIGH,
                subject="residence",
                predicate="lives in",
                value=place,
                entities=[(place, "place")] + ([(m["origin"], "place")] if m["origin"] else []),
            )
    if verb == "去了" or verb == "回了":
        return None  # "我昨天去了超市": an errand, not a life event
    value = re.split(r"[，,；;]", strip_zh_end(m["rest"]).strip("，, "))[0] or verb
    return make(
        ctx,
        annotate_dates(zh_third_person(text), ctx.now, bare_weekdays=False),
        "fact",
        MEDIUM if verb.startswith(_ZH_DONE_VERBS) else HIGH,
        subject=re.sub(r"了$", "", verb) + value[:12],
        predicate="event",
        value=value,
        entities=named_entities(value),
    )


def _user_fact(ctx: Ctx, text: str, subject_left_out: str, **slot: str) -> CandidateMemory:
    """A fact in the user's words, with the subject put back where it was left out ("报告写完了" → 用户的报告…)."""
    body = text if text.startswith("我") else subject_left_out + text
    return make(ctx, zh_third_person(body), "fact", MEDIUM, **slot)


# "报告终于写完了", "护照也办好了", "我把税报完了": tasks brought to an end (the subject is often left out).
_ZH_DONE = re.compile(
    r"^(?:我(?:的)?|我把)?(?P<what>[\u4e00-\u9fffA-Za-z0-9 ]{1,12}?)(?:终于|总算|已经|也|都|刚刚|刚)*"
    r"(?P<verb>写完|做完|改完|弄完|搞定|办好|办完|交完|交上去|交上|递交|提交|交了|考完|拿到|完成|处理完|整理完|报完|弄好|修好|"
    r"装好|签完|签好)了"
    r"(?P<rest>.*)$"
)


_ZH_NOT_TASK = re.compile(r"^(?:你|这|那|它|都|也|我|事情|东西|作业吗)")


def done(text: str, ctx: Ctx) -> CandidateMemory | None:
    m = _ZH_DONE.match(text)
    if not m or _ZH_NOT_TASK.match(m["what"]) or len(m["what"].strip()) < 2:
        return None
    return _user_fact(ctx, text, "我的", retention="long", subject=m["what"].strip(), predicate="done", value=m["verb"])


# Family and pets: "我姐姐下个月在成都结婚", "我老婆叫王芳，是一名护士" ---------------------------------

_ZH_RELATIVES = (
    r"老婆|老公|妻子|丈夫|太太|媳妇|爱人|对象|男朋友|女朋友|未婚夫|未婚妻|儿子|女儿|孩子|宝宝|大儿子|小儿子|大女儿|小女儿|"
    r"妈妈|爸爸|母亲|父亲|老妈|老爸|爸|妈|父母|爸妈|哥哥|姐姐|弟弟|妹妹|爷爷|奶奶|外公|外婆|姥姥|姥爷|叔叔|阿姨|舅舅|"
    r"姑姑|表哥|表姐|表弟|表妹|堂哥|堂姐|公公|婆婆|岳父|岳母|闺蜜|好朋友|朋友|室友|老板|领导|同事|狗狗|狗|猫咪|猫|小狗|小猫"
)


_ZH_RELATIVE = re.compile(
    r"^我(?:们)?(?:家的|家|的)?(?:老|小|大|亲)?(?P<rel>" + _ZH_RELATIVES + r")(?P<rest>[^吗呢？?]{2,})$"
)


_ZH_RELATIVE_NOT = re.compile(r"^(?:说|问|觉得|让我|叫我|想让|要我|不让|刚才|也觉得|认为|建议)")


def relative(text: str, ctx: Ctx) -> CandidateMemory | None:
    m = _ZH_RELATIVE.match(text)
    if not m or _ZH_RELATIVE_NOT.match(m["rest"]):
        return None
    rel, rest = m["rel"], m["rest"]
    name = re.match(r"^(?:叫|名字叫|名叫)(?P<name>[\u4e00-\u9fffA-Za-z]{1,6}?)(?:[，,]|$)", rest)
    content = "用户的" + zh_third_person(text[text.index(rel) :])
    return make(
        ctx,
        annotate_dates(content, ctx.now),
        "fact",
        MEDIUM,
        subject=rel + (name["name"] if name else ""),
        predicate="",
        value=strip_zh_end(rest),
        entities=[(name["name"], "person" if rel not in ("狗狗", "狗", "猫咪", "猫", "小狗", "小猫") else "other")]
        if name
        else [],
    )


# "最近在学吉他": what the user is learning or training for, often without 我.
_ZH_LEARNING = re.compile(
    r"^(?:我)?(?:最近|现在|目前|一直|正在|这段时间|今年)*(?:在)?(?P<verb>学|练|自学|备考|准备考)(?P<what>[^，,了]{2,12})(?P<rest>.*)$"
)


def learning(text: str, ctx: Ctx) -> CandidateMemory | None:
    m = _ZH_LEARNING.match(text)
    if not m or not (text.startswith("我") or re.match(r"^(?:最近|现在|目前|一直|正在|这段时间|今年)", text)):
        return None
    return _user_fact(ctx, text, "我", subject=f"{m['verb']}{m['what']}", predicate="learning", value=m["what"])


# "6月18号是我爸的生日", "我女儿的生日是3月2日" --------------------------------------------------------

_ZH_BIRTHDAY = re.compile(
    r"^(?P<date>\d{1,2}月\d{1,2}[日号]|[\d一二三四五六七八九十]+月[\d一二三四五六七八九十]+[日号])是我(?:的)?"
    r"(?P<who>[\u4e00-\u9fff]{0,4}?)的?(?P<what>生日|结婚纪念日|纪念日)$"
)


def birthday(text: str, ctx: Ctx) -> CandidateMemory | None:
    m = _ZH_BIRTHDAY.match(text)
    if not m:
        return None
    who = m["who"]
    english = {"": "birthday"}.get(who, f"{who} {m['what']}")
    return make(
        ctx,
        zh_third_person(text),
        "fact",
        HIGH,
        subject=english if who == "" and m["what"] == "生日" else f"{who}的{m['what']}",
        predicate="is",
        value=m["date"],
    )


# "豆豆今年两岁": a statement about someone the user named earlier in the conversation.
_ZH_NAMED_PREDICATE = re.compile(
    r"^(?:今年|现在|已经|特别|很|最|也|还|是|在|住|会|喜欢|爱|有|叫|刚|\d+岁|[一两二三四五六七八九十]+岁)"
)


def named(text: str, ctx: Ctx) -> CandidateMemory | None:
    name = next((n for n in sorted(ctx.names, key=len, reverse=True) if text.startswith(n)), "")
    rest = text[len(name) :]
    if not name or len(rest) < 2 or not _ZH_NAMED_PREDICATE.match(rest):
        return None
    return make(
        ctx,
        annotate_dates(strip_zh_end(text), ctx.now, bare_weekdays=False),
        "fact",
        MEDIUM,
        subject=name,
        predicate="",
        value=strip_zh_end(rest),
        entities=[(name, "other")],
    )
