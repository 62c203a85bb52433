"""Chinese patterns: one user sentence in, zero or more candidate memories out.

Contents keep the user's own wording with 我 → 用户 ("我每天早上查看股票行情" → "用户每天早上查看股票行情").
Subjects of the common slots (name, occupation, employer, residence, favourites, domains) are the
same English keys the English rules produce, so a Chinese statement can supersede an English one.
A sentence is first read as a whole ("记住…", "忘掉…", a correction), then clause by clause through
`_CLAUSE_RULES`; the rules live in this package's modules, one per kind of statement.
`sentence_reader.read_sentence` runs this module's readings in the order both languages share.
"""

import re

from memories.extraction.candidates import (
    MEDIUM,
    ClauseRule,
    Ctx,
    apply_context,
    clause_candidates,
    named_entities,
    plain_statement,
)
from memories.extraction.changes import chinese_change
from memories.extraction.chinese import belongings, events, identity, instructions, plans, preferences
from memories.extraction.dates import find_date
from memories.extraction.past_dates import find_past_date
from memories.extraction.phrasing import cjk_count, strip_zh_end, zh_third_person
from memories.extraction.statement_rules import everyday_rules, instruction
from memories.providers.llm_types import CandidateMemory

_FILLER = re.compile(
    r"^(?:(?:嗯+|哦+|啊+|呃+|对了|那个|另外|还有|然后|顺便说一下|顺便说|顺便)[，,。！!\s]*|(?:好的?|对|是的|嗨|你好|您好)[，,。！!\s]+|"
    r"(?:跟你说|告诉你|说个|有个|好消息|坏消息|大新闻|还不错|挺好的|不错|提醒一下|顺便提一下|说一下)[^，,。！!]{0,5}[，,。！!：:]\s*)+"
)


_QUESTION_END = re.compile(r"(?:吗|呢|么|嘛)[？?。！!]*$|[？?]$")


# "请…", "帮我…", "麻烦你…": what opens a request to the assistant to remember or forget.
_ASK = r"^(?:请|帮我|麻烦你?|你)?"


_FORGET = re.compile(
    _ASK + r"(?:把)?(?:忘掉|忘记|忘了|删掉|删除|去掉|清除|别再记着|不要再记着)(?:关于)?"
    r"(?P<what>.+?)(?:的?(?:这条|那条)?(?:记忆|这件事|那件事))?(?:吧|好吗|可以吗)?$"
)


_NOT_REMEMBER = re.compile(r"^(?:请|你)?(?:别|不要)(?:再)?记(?:住|着)?(?P<what>.{2,})$")


_PRONOUN_ONLY = re.compile(r"^(?:它|这个|那个|这些|那些|这件事|那件事|刚才的|刚才说的|吧|掉|一切|所有)$")


REMEMBER = re.compile(
    _ASK + r"(?:要)?(?:记住|记一下|记下来|记下|记好|帮我记|牢记|记录一下|记录下来)[：:，,\s]*(?P<body>.+)$"
)


CORRECTION = re.compile(
    r"^(?:(?:不对|错了|搞错了|你错了|你说错了|更正一下|纠正一下|我是说|其实)[，,。！!：:\s]*|不是[，,。！!：:]\s*|不，\s*)"
    r"(?:我(?:刚才|之前|前面)?(?:说错了|搞错了|记错了|打错了|写错了|弄错了)[，,。！!：:\s]*)?(?P<rest>.+)$"
)


SHORTEST_CORRECTION = 3


def sentence_body(sentence: str) -> tuple[str, bool] | None:
    body = _FILLER.sub("", sentence.strip())
    question = bool(_QUESTION_END.search(body))
    # Only punctuation goes here: the clause rules still need a final 吧 ("我们用 X 吧" is a decision).
    body = body.rstrip("？?。！!～~ ").strip()
    return (body, question) if len(strip_zh_end(body)) >= 3 else None


def forget_request(request: str) -> str | None:
    m = _NOT_REMEMBER.match(request) or _FORGET.match(request)
    return m["what"] if m else None


def _clauses(text: str, ctx: Ctx) -> list[CandidateMemory]:
    return clause_candidates(text, ctx, extract_clause)


def forget(what: str, ctx: Ctx) -> list[CandidateMemory]:
    what = strip_zh_end(what).strip("，,：: ")
    what = re.sub(r"^(?:关于|说)", "", what)
    if _PRONOUN_ONLY.match(what) or len(what) < 2:
        return []
    found = _clauses(what, ctx.but(explicit=True))
    if not found:
        found = [apply_context(_generic(what, ctx), ctx.but(explicit=True))]
    for candidate in found:
        candidate.action = "forget"
    return found


def remember(request: re.Match[str], ctx: Ctx) -> list[CandidateMemory]:
    body = strip_zh_end(request["body"])
    ctx = ctx.but(explicit=True)
    found = _clauses(body, ctx)
    if found:
        return found
    if len(body) < 3:
        return []
    return [apply_context(_generic(body, ctx), ctx)]


def correct(rest: str, ctx: Ctx) -> list[CandidateMemory]:
    found = _clauses(rest, ctx)
    if found:
        return found
    rest = strip_zh_end(rest)
    if rest.startswith(("是", "不是", "应该是")):
        return []  # "是深圳，不是广州" with nothing said before to correct: no statement of its own
    m = re.match(r"^(?:应该|要|得)(?P<act>.+)$|^(?P<act2>(?:用|改用|换成|改成).+)$", rest)
    if m:
        candidate = instructions.rule_candidate(ctx, "must", m["act"] or m["act2"], "")
        return [apply_context(candidate, ctx)] if candidate else []
    if rest.startswith(("这", "那", "它")) or cjk_count(rest) < 4:
        return []
    return [apply_context(_generic(rest, ctx), ctx)]


def _generic(text: str, ctx: Ctx) -> CandidateMemory:
    content = zh_third_person(text)
    m = re.match(r"^(?P<subj>[^，,。是]{2,20}?)(?:是|为|在)(?P<val>.+)$", text)
    subject = value = ""
    if m and not m["subj"].startswith("我"):
        subject, value = m["subj"], m["val"]
    return plain_statement(ctx, content, "fact", MEDIUM, subject=subject, value=value, entities=named_entities(text))


# ---------------------------------------------------------------------------------------------
# Clause level
# ---------------------------------------------------------------------------------------------

_GREETING = re.compile(
    r"^(?:你好|您好|嗨|哈喽|谢谢你?|多谢|感谢|好的|好吧|行吧?|可以|没问题|嗯+|哦+|哈+|再见|拜拜|早上好|晚上好|晚安|早安|"
    r"收到|明白了?|知道了|懂了|OK|ok|不客气|没事|辛苦了?|太好了|好极了|厉害)[！!。~～啦了呀哈]*$"
)


_QUESTION_WORDS = re.compile(r"什么|怎么|为什么|为啥|哪|谁|几点|多少|是否|能不能|可不可以|是不是|有没有|要不要|如何")


_HEDGE = re.compile(
    r"^(?:我觉得|我认为|我猜|我想知道|我不知道|我不确定|我在想|也许|可能|如果|要是|假如|帮我|请帮我|请你|你能|你可以|"
    r"能不能|可以帮|麻烦你|给我|告诉我|我想问|问一下|我有个问题|我有一个问题|我的意思是|我明白|我懂|我知道)"
)


# A remark before the statement ("挺忙的，"), not a phrase it depends on ("比起茶，", "明天，").
_LEAD_IN = re.compile(
    r"^(?!比起|相比|除了|因为|虽然|如果|要是|关于|对于|在|从|跟|和|对)(?P<lead>[^，,我]{1,6})[，,]\s*(?=我)"
)


# Chat leaves the subject out ("住海淀，五道口附近", "每天开车上班", "在一家外企做会计"): a user's
# clause that opens with how often, since when or where they are, or with a verb of living, working,
# keeping or using, is about the user. Requests ("帮我…", "给我…") and remarks open otherwise.
_DROPPED_SUBJECT = re.compile(
    r"^(?:每天|每周|每个月|每月|每年|平时|平常|一直|一般|通常|最近|目前|现在|天天|经常|从小|今年|去年|人在|住在?|"
    r"在(?!吗|不在|哪|这|那)|养了|开了|做了|当了|干了|学了|用了|换了|搬到|搬去|刚搬|刚换|刚开始)"
)


def extract_clause(clause: str, ctx: Ctx) -> CandidateMemory | None:
    """A clause's candidate; failing that, the clause read with the 我 chat left out, or its first
    part alone: what follows a statement is often a remark on it ("我是初中语文老师，今年带初三，压力山大",
    "我手机号是138…，快递填这个就行")."""
    found = _read_clause(clause, ctx)
    text = strip_zh_end(_FILLER.sub("", clause.strip()))
    if found is None and _DROPPED_SUBJECT.match(text):
        found = _read_clause("我" + text, ctx)
    head = re.split(r"[，,；;]", text, maxsplit=1)[0]
    if found is None and head != text and cjk_count(head) >= 4:
        found = extract_clause(head, ctx)
    return found


def _read_clause(clause: str, ctx: Ctx) -> CandidateMemory | None:
    raw = _FILLER.sub("", clause.strip())
    lead = _LEAD_IN.match(raw)
    if lead and find_date(lead["lead"], ctx.now) is None and find_past_date(lead["lead"], ctx.now) is None:
        raw = raw[lead.end() :]  # "挺忙的，我们的App…": a remark before the statement, not part of it
    text = strip_zh_end(raw)
    if len(text) < 4 or _GREETING.match(text):
        return None
    rule = instruction(text, ctx, instructions=instructions, extract_clause=extract_clause)
    if rule is not None:
        return rule
    remind = plans.remind(text, ctx)
    if remind is not None:
        return remind
    if _HEDGE.match(text) or _QUESTION_WORDS.search(text.replace("不怎么", "")):
        return None
    for extract in _CLAUSE_RULES:
        candidate = extract(text, ctx) if extract is not plans.decision else plans.decision(raw, ctx)
        if candidate is not None:
            return candidate
    changed = _CHANGED.search(text) and cjk_count(text) >= 5 and not _MOMENT.search(text)
    if text.startswith("我") and (ctx.explicit or ctx.correction or changed):
        return _generic(text, ctx)
    # "从上个月开始我改坐地铁了", "上周刚搬完家，我现在住在青岛了": a time or a remark before the change.
    m = _LEAD_THEN_I.match(text)
    if m and changed and cjk_count(m["rest"]) >= 5 and not _QUESTION_WORDS.search(m["lead"]):
        return _generic(text, ctx)
    return None


# What says that something about the user changed, whatever the verb (see english.sentences._CHANGED).
_CHANGED = re.compile(r"现在|如今|已经|不再|早就不|改成|改为|改[坐用喝吃去做]|换成|换到|开始|以后就|从此|再也不")
_LEAD_THEN_I = re.compile(r"^(?P<lead>[^我]{2,12}?)[，,]?\s*(?P<rest>我.+)$")
# How one is right now ("我现在好累", "我现在在机场"): a moment, not a change.
_MOMENT = re.compile(r"今天|今晚|刚才|马上|正在|累|饿|困|忙|无聊|生病|在路上|开会|堵车|在机场|在车上|排队")


_CLAUSE_RULES: list[ClauseRule] = [
    chinese_change,  # knowledge updates first: 不再…, 戒了…, 换成…, 现在只…
    plans.decision,
    events.birthday,
    identity.health,
    events.event,
    *everyday_rules(plans=plans, preferences=preferences, identity=identity, belongings=belongings),
    events.relative,
    identity.where,
    events.done,
    events.learning,
    events.named,
]
