"""Chinese patterns: one user sentence in, zero or more candidate memories out.

Contents keep the user's own wording with 我 → 用户 ("我每天早上查看股票行情" → "用户每天早上查看股票行情").
Subjects of the common slots (name, occupation, employer, residence, favourites, domains) are the
same English keys the English rules produce, so a Chinese statement can supersede an English one.
"""

import re
from collections.abc import Callable

from memories.extraction import lexicon
from memories.extraction.candidates import (
    HIGH,
    MEDIUM,
    Ctx,
    apply_context,
    make,
    name_kind,
    named_entities,
    tool_entities,
)
from memories.extraction.changes import chinese_change
from memories.extraction.dates import DateMatch, annotate_dates, end_of_day, find_date, find_past_date
from memories.extraction.phrasing import cjk_count, slot_key, split_clauses, strip_zh_end, zh_third_person
from memories.providers.llm_types import CandidateMemory

Rule = Callable[[str, Ctx], CandidateMemory | None]

_FILLER = re.compile(
    r"^(?:(?:嗯+|哦+|啊+|呃+|对了|那个|另外|还有|然后|顺便说一下|顺便说|顺便)[，,。！!\s]*|(?:好的?|对|是的|嗨|你好|您好)[，,。！!\s]+|"
    r"(?:跟你说|告诉你|说个|有个|好消息|坏消息|大新闻|还不错|挺好的|不错|提醒一下|顺便提一下|说一下)[^，,。！!]{0,5}[，,。！!：:]\s*)+"
)
_QUESTION_END = re.compile(r"(?:吗|呢|么|嘛)[？?。！!]*$|[？?]$")
_FORGET = re.compile(
    r"^(?:请|帮我|麻烦你?|你)?(?:把)?(?:忘掉|忘记|忘了|删掉|删除|去掉|清除|别再记着|不要再记着)(?:关于)?"
    r"(?P<what>.+?)(?:的?(?:这条|那条)?(?:记忆|这件事|那件事))?(?:吧|好吗|可以吗)?$"
)
_NOT_REMEMBER = re.compile(r"^(?:请|你)?(?:别|不要)(?:再)?记(?:住|着)?(?P<what>.{2,})$")
_PRONOUN_ONLY = re.compile(r"^(?:它|这个|那个|这些|那些|这件事|那件事|刚才的|刚才说的|吧|掉|一切|所有)$")
_REMEMBER = re.compile(
    r"^(?:请|帮我|麻烦你?|你)?(?:要)?(?:记住|记一下|记下来|记下|记好|帮我记|牢记|记录一下|记录下来)[：:，,\s]*(?P<body>.+)$"
)
_CORRECTION = re.compile(
    r"^(?:(?:不对|错了|搞错了|你错了|你说错了|更正一下|纠正一下|我是说|其实)[，,。！!：:\s]*|不是[，,。！!：:]\s*|不，\s*)"
    r"(?:我(?:刚才|之前|前面)?(?:说错了|搞错了|记错了|打错了|写错了|弄错了)[，,。！!：:\s]*)?(?P<rest>.+)$"
)


def extract_sentence(sentence: str, ctx: Ctx) -> list[CandidateMemory]:
    body = _FILLER.sub("", sentence.strip())
    question = bool(_QUESTION_END.search(body))
    # Only punctuation goes here: the clause rules still need a final 吧 ("我们用 X 吧" is a decision).
    body = body.rstrip("？?。！!～~ ").strip()
    if len(strip_zh_end(body)) < 3:
        return []
    correction = _CORRECTION.match(body)
    request = correction["rest"] if correction else body  # "其实，忘掉…"
    m = _NOT_REMEMBER.match(request) or _FORGET.match(request)
    if m:
        return _forget(m["what"], ctx)
    m = _REMEMBER.match(request)
    if m:
        return _remember(m["body"], ctx)
    if question:
        return []
    m = _CORRECTION.match(body)
    if m and len(m["rest"]) >= 3:
        return _correction(m["rest"], ctx.but(correction=True))
    return _clauses(body, ctx)


def _clauses(text: str, ctx: Ctx) -> list[CandidateMemory]:
    out = []
    for clause in split_clauses(text):
        candidate = extract_clause(clause, ctx)
        if candidate is not None:
            out.append(apply_context(candidate, ctx))
    return out


def _forget(what: str, ctx: Ctx) -> list[CandidateMemory]:
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


def _remember(body: str, ctx: Ctx) -> list[CandidateMemory]:
    body = strip_zh_end(body)
    ctx = ctx.but(explicit=True)
    found = _clauses(body, ctx)
    if found:
        return found
    if len(body) < 3:
        return []
    return [apply_context(_generic(body, ctx), ctx)]


def _correction(rest: str, ctx: Ctx) -> list[CandidateMemory]:
    found = _clauses(rest, ctx)
    if found:
        return found
    rest = strip_zh_end(rest)
    if rest.startswith(("是", "不是", "应该是")):
        return []  # "是深圳，不是广州" with nothing said before to correct: no statement of its own
    m = re.match(r"^(?:应该|要|得)(?P<act>.+)$|^(?P<act2>(?:用|改用|换成|改成).+)$", rest)
    if m:
        candidate = _rule_candidate(ctx, "must", m["act"] or m["act2"], "")
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
    return make(
        ctx,
        content,
        "fact",
        MEDIUM,
        retention="permanent" if ctx.explicit else "long",
        subject=subject,
        predicate="is" if subject else "",
        value=value,
        entities=named_entities(text),
    )


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


def extract_clause(clause: str, ctx: Ctx) -> CandidateMemory | None:
    raw = _FILLER.sub("", clause.strip())
    lead = _LEAD_IN.match(raw)
    if lead and find_date(lead["lead"], ctx.now) is None and find_past_date(lead["lead"], ctx.now) is None:
        raw = raw[lead.end() :]  # "挺忙的，我们的App…": a remark before the statement, not part of it
    text = strip_zh_end(raw)
    if len(text) < 4 or _GREETING.match(text):
        return None
    rule = _rule(text, ctx)
    if rule is not None:
        return rule
    remind = _remind(text, ctx)
    if remind is not None:
        return remind
    if _HEDGE.match(text) or _QUESTION_WORDS.search(text.replace("不怎么", "")):
        return None
    for extract in _CLAUSE_RULES:
        candidate = extract(text, ctx) if extract is not _decision else _decision(raw, ctx)
        if candidate is not None:
            return candidate
    if (ctx.explicit or ctx.correction) and text.startswith("我"):
        return _generic(text, ctx)
    return None


# Rules -----------------------------------------------------------------------------------------

_RULE_PREFIX = re.compile(r"^(?:(?:请|以后|今后|下次|从现在开始|从现在起|从今以后|从今天起|往后|你)[，,：:]?\s*)+")
_FUTURE = re.compile(r"以后|今后|下次|从现在|从今|往后")
_RULE = re.compile(
    r"^(?:要|得|应该)?(?P<mod>永远不要|千万不要|绝对不要|绝不要|再也不要|一定不要|不要再|别再|永远别|千万别|绝对不能|绝不能|"
    r"不能|不准|不许|禁止|不要|别|必须|一定要|务必|总是要|总是|始终|每次都要|每次都|永远都要|永远要|都要)(?P<act>.+)$"
)
# "写代码不要用 tab", "回复的时候别太长": a standing instruction about one kind of task.
_RULE_IN = re.compile(
    r"^(?P<task>(?:写|回答|回复|提交|部署|发|命名|翻译|解释|总结|生成|输出|推荐|建议|改|做)"
    r"[\u4e00-\u9fffA-Za-z ]{0,6}?"
    r"|[\u4e00-\u9fffA-Za-z ]{2,8}的(?:查询|代码|文档|回复|回答|提交|邮件|接口|数据库|脚本))"
    r"(?:的时候|时)?[，,]?(?P<mod>永远不要|千万不要|绝对不要|不要|别|不能|必须|一定要|务必|都要|统一)(?P<act>.+)$"
)
_NEVER = ("不", "别", "禁止")
_ALWAYS = ("总是", "始终", "每次", "永远要", "永远都要", "都要")
_NOT_AN_ACTION = re.compile(r"^(?:人|的|处|墅|紧|客气|担心|着急|管|介意|急|怕|在意|这样|那样|这么做|那么做|这么干|了)")


def _rule(text: str, ctx: Ctx) -> CandidateMemory | None:
    prefix = _RULE_PREFIX.match(text)
    future = ctx.future or bool(prefix and _FUTURE.search(prefix.group(0)))
    body = text[prefix.end() :] if prefix else text
    if body.startswith("我") and not re.match(r"^我(?:要求|希望|需要|想让)你", body):
        if future and prefix:
            return extract_clause(body, ctx.but(future=True))
        return None
    body = re.sub(r"^我(?:要求|希望|需要|想让)你", "", body)
    m = _RULE.match(body) or _RULE_IN.match(body)
    if m:
        mod_text = m["mod"]
        if mod_text in ("别", "不要") and m["act"].startswith(("忘", "记得")):
            return None
        if _NOT_AN_ACTION.match(m["act"]):
            return None
        if mod_text.startswith(_ALWAYS):
            mod = "always"
        elif any(n in mod_text for n in _NEVER):
            mod = "never"
        else:
            mod = "must"
        task = m["task"] if "task" in m.re.groupindex else ""
        return _rule_candidate(ctx, mod, m["act"], ("以后" if future else "") + task + mod_text)
    if future and len(body) >= 3 and not _NOT_AN_ACTION.match(body):
        return _rule_candidate(ctx, "must", body, "以后")
    return None


def _rule_candidate(ctx: Ctx, mod: str, act: str, lead: str) -> CandidateMemory | None:
    act = strip_zh_end(act).strip("，, ")
    if len(act) < 2:
        return None
    act = zh_third_person(act)
    subject = re.sub(r"^(?:再|都|也|还)", "", re.sub(r"了$", "", act))
    return make(
        ctx,
        f"用户要求{lead}{act}",
        "rule",
        HIGH,
        retention="permanent",
        subject=subject,
        predicate="rule",
        value=mod,
        entities=tool_entities(act),
        confidence=0.9,
    )


# Todos -------------------------------------------------------------------------------------------

_REMIND = re.compile(
    r"^(?:请|麻烦你?)?(?:记得|别忘了|不要忘了|别忘记|不要忘记|千万别忘了)?(?:提醒我|提醒一下我)(?P<what>.+)$"
    r"|^(?:请|你)?(?:记得|别忘了|不要忘了|别忘记|不要忘记|千万别忘了)(?P<what2>.+)$"
)
_TODO_TRIGGER = re.compile(
    r"要|需要|(?<![觉记懂值显获取难晓])得(?![到很多好])|必须|打算|准备|计划|会|有(?![点些])|去|安排|约了|开会|交|截止|到期|"
    r"之前|以前|出发|回来|见面|面试|考试|提交|完成|参加|上线|发布|交付|举行|举办|开学|入职|报到"
)


def _annotate(text: str, due: DateMatch | None) -> str:
    if due is None or due.is_absolute:
        return text
    return f"{text[: due.end]}（{due.iso}）{text[due.end :]}"


def _without_date(text: str, due: DateMatch | None) -> str:
    if due is None:
        return text
    before = re.sub(r"在$", "", text[: due.start])
    after = re.sub(r"^(?:之前|以前|前|之内|内)", "", text[due.end :])
    return before + after


def _todo_candidate(ctx: Ctx, content: str, task: str, due: DateMatch | None, importance: float) -> CandidateMemory:
    retention = "short" if due is not None and (due.due - ctx.now.date()).days <= 3 else "long"
    return make(
        ctx,
        content,
        "todo",
        importance,
        retention=retention,
        expires_at=end_of_day(due.due, ctx.now) if due else None,
        subject=re.sub(r"^[，,\s]*用户", "", task),
        predicate="due",
        value=due.due.isoformat() if due else "",
        entities=named_entities(task),
    )


def _remind(text: str, ctx: Ctx) -> CandidateMemory | None:
    m = _REMIND.match(text)
    if not m:
        return None
    what = (m["what"] or m["what2"]).strip("，, ")
    if len(what) < 2:
        return None
    due = find_date(what, ctx.now)
    candidate = _todo_candidate(
        ctx,
        f"用户希望被提醒：{zh_third_person(_annotate(what, due))}",
        zh_third_person(_without_date(what, due)),
        due,
        HIGH,
    )
    return apply_context(candidate, ctx.but(explicit=True))


def _todo(text: str, ctx: Ctx) -> CandidateMemory | None:
    due = find_date(text, ctx.now)
    if due is None or due.due < ctx.now.date():
        return None
    personal = text.startswith("我") or due.start == 0 or re.search(r"截止|到期", text)
    if re.search(r"一般|通常|平时|经常|常常|总是|每", text):
        return None  # "周末我一般会去爬山": a habit, not a dated plan
    # "我的答辩在7月20号": an appointment ("是" would make a birthday a todo).
    scheduled = re.search(r"(?:在|定在|安排在|于)$", text[: due.start])
    if not personal or not (scheduled or _TODO_TRIGGER.search(text[due.end :] + text[: due.start])):
        return None
    annotated = _annotate(text, due)
    if due.start == 0:
        # "明天我要交报告" → "用户明天（…）要交报告": the user goes first, the date stays.
        cut = len(annotated) - len(text) + due.end
        tail = re.sub(r"^(之前|以前|之内|前|内)?[，,\s]*(?:我们|我)", r"\1", annotated[cut:])
        content = "用户" + zh_third_person(annotated[:cut] + tail)
    else:
        content = zh_third_person(annotated)
    return _todo_candidate(ctx, content, zh_third_person(_without_date(text, due)), due, MEDIUM)


# Decisions -----------------------------------------------------------------------------------------

_DECIDED = re.compile(
    r"^(?:我们|我|大家|咱们)?(?:最后|最终|已经|还是|刚刚)?(?:决定|定了|选定|商量好)(?:了)?[，,]?(?:要|先|就)?"
    r"(?P<verb>使用|用|采用|选用|选|改用|换成|换用|上)?(?P<what>.+)$"
)
_LETS = re.compile(
    r"^(?:那|那么|好|好的|行)?[，,]?\s*(?:我们|咱们)?(?:就|还是|先|统一)?(?P<verb>用|使用|采用|选)(?P<what>.+?)吧[。！!]*$"
)
_WE_USE = re.compile(r"^(?:我们|咱们)(?:就|还是|先|统一|都)?(?P<verb>用|使用|采用)(?P<what>.+)$")
_WILL_USE = re.compile(r"^我(?:们)?(?:会|打算|准备|计划|要)(?P<verb>用|使用|采用|改用|换成)(?P<what>.+)$")
_ZH_VALUE_END = re.compile(r"(?:来|做|作为|写|开发|实现|处理|部署|吧|了|的|替代|代替|而不是|，|,|。).*$")


def _zh_value(what: str) -> str:
    value = _ZH_VALUE_END.sub("", what.strip()).strip()
    return value or what.strip()


def _decision_candidate(ctx: Ctx, verb: str, what: str, importance: float) -> CandidateMemory:
    what = strip_zh_end(what).strip()
    value = _zh_value(what)
    verb = {"用": "使用", "选": "选用", "上": "使用"}.get(verb, verb)
    subject = lexicon.domain_of(value) or slot_key(value)
    entities = tool_entities(value) or [(name, "tool") for name, _ in named_entities(value)]
    joiner = " " if what[:1].isascii() and verb else ""
    return make(
        ctx,
        f"用户决定{verb}{joiner}{zh_third_person(what)}",
        "decision",
        importance,
        subject=subject,
        predicate="decided",
        value=value,
        entities=entities,
    )


def _decision(raw: str, ctx: Ctx) -> CandidateMemory | None:
    m = _LETS.match(raw.strip())
    if m:
        return _decision_candidate(ctx, m["verb"], m["what"], 0.7)
    text = strip_zh_end(raw)
    m = _DECIDED.match(text) or _WE_USE.match(text)
    if not m or len(m["what"].strip()) < 2 or m["what"].startswith(("了", "过", "完", "着")):
        return None
    return _decision_candidate(ctx, m["verb"] or "", m["what"], 0.7)


def _weak_decision(text: str, ctx: Ctx) -> CandidateMemory | None:
    m = _WILL_USE.match(text)
    return _decision_candidate(ctx, m["verb"], m["what"], MEDIUM) if m else None


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


def _favorite(text: str, ctx: Ctx) -> CandidateMemory | None:
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


def _prefer(text: str, ctx: Ctx) -> CandidateMemory | None:
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


def _sentiment(text: str, ctx: Ctx) -> CandidateMemory | None:
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


def _habit(text: str, ctx: Ctx) -> CandidateMemory | None:
    lead = re.match(r"^[^，,我]{1,8}[，,]\s*(?=我)", text)
    if lead and not _HABIT.match(text):
        # "从春天开始，我每周二晚上去学陶艺": the habit after its lead-in, which stays in the memory.
        found = _habit(text[lead.end() :], ctx)
        if found is not None:
            found.content = zh_third_person(text)
        return found
    m = _HABIT.match(text)
    if m:
        content = zh_third_person(text)
    else:
        m = _HABIT_LEAD.match(text)
        if m:
            content = f"用户{m['when']}{zh_third_person(m['act'])}"
        else:
            m = _HABIT_MID.match(text)
            if not m:
                return None
            content = f"用户{m['pre']}{m['when']}{zh_third_person(m['act'])}"
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


# Facts about the user ---------------------------------------------------------------------------------

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
_PLACE_END = re.compile(r"(?:了|的|附近|那边|这边|这里|那里)$")


def _is_place(text: str) -> bool:
    return text in lexicon.ZH_PLACES or text.endswith(lexicon.ZH_PLACE_SUFFIXES) or text.startswith(lexicon.ZH_PLACES)


def _identity(text: str, ctx: Ctx) -> CandidateMemory | None:
    m = _NAME.match(text)
    if m and not (m["name"] or m["name2"]).startswith(("了", "过", "着")):
        name = (m["name"] or m["name2"]).strip()
        return make(
            ctx,
            f"用户的名字是{name}",
            "fact",
            HIGH,
            subject="name",
            predicate="is",
            value=name,
            entities=[(name, "person")],
        )
    m = _AGE.match(text)
    if m:
        return make(ctx, f"用户{m['age']}岁", "fact", MEDIUM, subject="age", predicate="is", value=m["age"])
    m = _ALLERGY.match(text)
    if m:
        return make(
            ctx, zh_third_person(text), "fact", HIGH, subject=f"{m['what']} allergy", predicate="is", value="allergic"
        )
    m = _ROLE_AT.match(text)
    if m and m["role"].endswith(lexicon.ZH_OCCUPATION_SUFFIXES):
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
    m = _EMPLOYER.match(text)
    if m:
        org = (m["org"] or m["org2"]).strip()
        if _is_place(org):
            return make(
                ctx,
                zh_third_person(text),
                "fact",
                MEDIUM,
                subject="work location",
                predicate="is",
                value=org,
                entities=[(org, "place")],
            )
        return make(
            ctx,
            zh_third_person(text),
            "fact",
            HIGH,
            subject="employer",
            predicate="works at",
            value=org,
            entities=[(org, "organization")],
        )
    m = _LIVE.match(text)
    if m:
        place = _PLACE_END.sub("", (m["place"] or m["place2"]).strip())
        if len(place) < 2:
            return None
        return make(
            ctx,
            zh_third_person(text),
            "fact",
            HIGH,
            subject="residence",
            predicate="lives in",
            value=place,
            entities=[(place, "place")],
        )
    m = _ORIGIN.match(text)
    if m:
        place = _PLACE_END.sub("", (m["place"] or m["place2"] or m["place3"]).strip())
        return make(
            ctx,
            zh_third_person(text),
            "fact",
            HIGH,
            subject="origin",
            predicate="is from",
            value=place,
            entities=[(place, "place")],
        )
    m = _ROLE_DO.match(text) or _ROLE.match(text)
    if m:
        role = _MEASURE.sub("", m["role"].strip())
        if role.startswith(("说", "不是", "在", "从", "来", "用", "因为", "想", "觉得", "问")):
            return None
        occupation = role.endswith(lexicon.ZH_OCCUPATION_SUFFIXES) or m.re is _ROLE_DO
        if not occupation:
            if m.re is _ROLE and re.fullmatch(r"[\u4e00-\u9fff]{2,4}", role) and not _NOT_A_ROLE.search(role):
                # "我是伴娘", "我是素食者": a short noun says what the user is.
                return make(ctx, zh_third_person(text), "fact", MEDIUM, subject=role, predicate="is", value="yes")
            return None
        org = re.match(r"^(?P<org>.+?)(?:的)", role)
        entities = [(org["org"], "organization")] if org and len(org["org"]) >= 2 else []
        return make(
            ctx,
            zh_third_person(text),
            "fact",
            HIGH,
            subject="occupation",
            predicate="is",
            value=role,
            entities=entities,
        )
    return None


_MY = re.compile(r"^我(?:们)?的(?P<attr>[^，,。是叫为]{1,12}?)(?:是|叫|为)(?P<val>.+)$")
_NOT_ATTRIBUTES = ("问题", "意思", "想法", "看法", "建议", "错", "理解", "回答", "需求")
_PROJECT_WORDS = (
    "项目",
    "接口",
    "仓库",
    "数据库",
    "服务器",
    "分支",
    "域名",
    "端口",
    "前缀",
    "截止",
    "团队",
    "技术栈",
    "后端",
    "前端",
)


def _my_attribute(text: str, ctx: Ctx) -> CandidateMemory | None:
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
    category = "project" if any(w in attr for w in _PROJECT_WORDS) else "fact"
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
_NOT_POSSESSIONS = (
    "问题",
    "疑问",
    "想法",
    "建议",
    "事",
    "会",
    "点",
    "时间",
    "空",
    "小问题",
    "请求",
    "需求",
    "bug",
    "错误",
)


def _uses(text: str, ctx: Ctx) -> CandidateMemory | None:
    m = _USES.match(text)
    if not m or m["what"].startswith(("了", "过", "完", "不", "着", "来", "于")):
        return None
    value = _zh_value(m["what"])
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


def _project(text: str, ctx: Ctx) -> CandidateMemory | None:
    m = _PROJECT.match(text)
    if not m:
        return None
    what = m["what"].strip()
    named = _QUOTED.search(what) or _CALLED.search(what)
    name = named["name"] if named else ""
    entities = [(name, "project")] if name else named_entities(what, "project")
    return make(
        ctx,
        zh_third_person(text),
        "project",
        MEDIUM,
        subject=name or what,
        predicate="works on",
        value=what,
        entities=entities + tool_entities(what),
    )


def _have(text: str, ctx: Ctx) -> CandidateMemory | None:
    m = _HAVE.match(text)
    if not m or m["thing"].startswith(_NOT_POSSESSIONS):
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


def _event(text: str, ctx: Ctx) -> CandidateMemory | None:
    m = _ZH_EVENT.match(text)
    if not m or _ZH_NOT_EVENT.match(m["rest"]) and not m["verb"].endswith("了"):
        return None
    if not m["who"]:
        if not find_past_date(text, ctx.now):
            return None  # without 我, only a dated report ("昨天领养了…") is clearly the user's own news
        text = "我" + text
    verb = m["verb"]
    if verb.startswith("搬") or verb == "去了" and _is_place(strip_zh_end(m["rest"]).strip("了 ")):
        place = _PLACE_END.sub("", strip_zh_end(m["rest"]).strip(" 了"))
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


# "报告终于写完了", "护照也办好了", "我把税报完了": tasks brought to an end (the subject is often left out).
_ZH_DONE = re.compile(
    r"^(?:我(?:的)?|我把)?(?P<what>[\u4e00-\u9fffA-Za-z0-9 ]{1,12}?)(?:终于|总算|已经|也|都|刚刚|刚)*"
    r"(?P<verb>写完|做完|改完|弄完|搞定|办好|办完|交完|交上去|交上|递交|提交|交了|考完|拿到|完成|处理完|整理完|报完|弄好|修好|"
    r"装好|签完|签好)了"
    r"(?P<rest>.*)$"
)
_ZH_NOT_TASK = re.compile(r"^(?:你|这|那|它|都|也|我|事情|东西|作业吗)")


def _done(text: str, ctx: Ctx) -> CandidateMemory | None:
    m = _ZH_DONE.match(text)
    if not m or _ZH_NOT_TASK.match(m["what"]) or len(m["what"].strip()) < 2:
        return None
    what = m["what"].strip()
    body = text if text.startswith("我") else "我的" + text
    return make(
        ctx,
        zh_third_person(body),
        "fact",
        MEDIUM,
        retention="long",
        subject=what,
        predicate="done",
        value=m["verb"],
    )


# Family and pets: "我姐姐下个月在成都结婚", "我老婆叫王芳，是一名护士" ---------------------------------

_ZH_RELATIVES = (
    r"老婆|老公|妻子|丈夫|爱人|对象|男朋友|女朋友|未婚夫|未婚妻|儿子|女儿|孩子|宝宝|大儿子|小儿子|大女儿|小女儿|"
    r"妈妈|爸爸|母亲|父亲|老妈|老爸|爸|妈|父母|爸妈|哥哥|姐姐|弟弟|妹妹|爷爷|奶奶|外公|外婆|姥姥|姥爷|叔叔|阿姨|舅舅|"
    r"姑姑|表哥|表姐|表弟|表妹|堂哥|堂姐|公公|婆婆|岳父|岳母|闺蜜|好朋友|朋友|室友|老板|领导|同事|狗狗|狗|猫咪|猫|小狗|小猫"
)
_ZH_RELATIVE = re.compile(
    r"^我(?:们)?(?:家的|家|的)?(?:老|小|大|亲)?(?P<rel>" + _ZH_RELATIVES + r")(?P<rest>[^吗呢？?]{2,})$"
)
_ZH_RELATIVE_NOT = re.compile(r"^(?:说|问|觉得|让我|叫我|想让|要我|不让|刚才|也觉得|认为|建议)")


def _relative(text: str, ctx: Ctx) -> CandidateMemory | None:
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


# "新家在南山区": where the user's home, company or school is, often said without 我的.
_ZH_WHERE = re.compile(
    r"^(?:我的?)?(?P<what>新家|家|老家|公司|学校|单位|办公室)(?:在|位于)(?P<place>[^，,]{2,12})(?P<rest>.*)$"
)


def _where(text: str, ctx: Ctx) -> CandidateMemory | None:
    m = _ZH_WHERE.match(text)
    if not m:
        return None
    place = _PLACE_END.sub("", m["place"].strip())
    return make(
        ctx,
        f"用户的{m['what']}在{m['place'].strip()}",
        "fact",
        MEDIUM,
        subject=f"{m['what']} location",
        predicate="is",
        value=place,
        entities=[(place, "place")],
    )


# Health: "医生说我有轻度高血压", "我有哮喘" ------------------------------------------------------

_ZH_HEALTH = re.compile(
    r"^(?:医生说|检查发现|体检发现|体检查出|查出来)?我(?:有|得了|患了|患有|确诊了?|被诊断出?(?:有|患有|为)?)"
    r"(?P<what>[^，,]{0,8}?(?:病|症|炎|癌|高血压|低血压|糖尿病|哮喘|贫血|失眠|抑郁|焦虑|过敏|痛风|结石|骨折|近视|胃溃疡))"
)


_ZH_INTOLERANT = re.compile(r"^我(?:也|还)?(?:是|有)?(?P<what>[\u4e00-\u9fff]{1,6}不耐受)")


def _health(text: str, ctx: Ctx) -> CandidateMemory | None:
    m = _ZH_HEALTH.match(text) or _ZH_INTOLERANT.match(text)
    if not m:
        return None
    return make(
        ctx, zh_third_person(text), "fact", HIGH, subject=f"{m['what']} condition", predicate="has", value=m["what"]
    )


# "最近在学吉他": what the user is learning or training for, often without 我.
_ZH_LEARNING = re.compile(
    r"^(?:我)?(?:最近|现在|目前|一直|正在|这段时间|今年)*(?:在)?(?P<verb>学|练|自学|备考|准备考)(?P<what>[^，,了]{2,12})(?P<rest>.*)$"
)


def _learning(text: str, ctx: Ctx) -> CandidateMemory | None:
    m = _ZH_LEARNING.match(text)
    if not m or not (text.startswith("我") or re.match(r"^(?:最近|现在|目前|一直|正在|这段时间|今年)", text)):
        return None
    body = text if text.startswith("我") else "我" + text
    return make(
        ctx,
        zh_third_person(body),
        "fact",
        MEDIUM,
        subject=f"{m['verb']}{m['what']}",
        predicate="learning",
        value=m["what"],
    )


# "6月18号是我爸的生日", "我女儿的生日是3月2日" --------------------------------------------------------

_ZH_BIRTHDAY = re.compile(
    r"^(?P<date>\d{1,2}月\d{1,2}[日号]|[\d一二三四五六七八九十]+月[\d一二三四五六七八九十]+[日号])是我(?:的)?"
    r"(?P<who>[\u4e00-\u9fff]{0,4}?)的?(?P<what>生日|结婚纪念日|纪念日)$"
)


def _birthday(text: str, ctx: Ctx) -> CandidateMemory | None:
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


def _named(text: str, ctx: Ctx) -> CandidateMemory | None:
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


_CLAUSE_RULES: list[Rule] = [
    chinese_change,  # knowledge updates first: 不再…, 戒了…, 换成…, 现在只…
    _decision,
    _birthday,
    _health,
    _event,
    _todo,
    _favorite,
    _prefer,
    _sentiment,
    _habit,
    _identity,
    _my_attribute,
    _weak_decision,
    _uses,
    _project,
    _have,
    _relative,
    _where,
    _done,
    _learning,
    _named,
]
