"""Chinese rules for todos and plans with dates ("下周三之前要交报告") and decisions ("我们决定用 Postgres")."""

import re

from memories.extraction import candidates, lexicon
from memories.extraction.candidates import HIGH, MEDIUM, Ctx
from memories.extraction.dates import DateMatch, find_date
from memories.extraction.phrasing import slot_key, strip_zh_end, zh_third_person
from memories.providers.llm_types import CandidateMemory

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
    return candidates.todo(ctx, content, importance, subject=re.sub(r"^[，,\s]*用户", "", task), task=task, due=due)


def remind(text: str, ctx: Ctx) -> CandidateMemory | None:
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
    return candidates.apply_context(candidate, ctx.but(explicit=True))


def todo(text: str, ctx: Ctx) -> CandidateMemory | None:
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


def zh_value(what: str) -> str:
    value = _ZH_VALUE_END.sub("", what.strip()).strip()
    return value or what.strip()


def _decision_candidate(ctx: Ctx, verb: str, what: str, importance: float) -> CandidateMemory:
    what = strip_zh_end(what).strip()
    value = zh_value(what)
    verb = {"用": "使用", "选": "选用", "上": "使用"}.get(verb, verb)
    subject = lexicon.domain_of(value) or slot_key(value)
    entities = candidates.tool_entities(value) or [(name, "tool") for name, _ in candidates.named_entities(value)]
    joiner = " " if what[:1].isascii() and verb else ""
    return candidates.decided(
        ctx,
        f"用户决定{verb}{joiner}{zh_third_person(what)}",
        importance,
        subject=subject,
        value=value,
        entities=entities,
    )


def decision(raw: str, ctx: Ctx) -> CandidateMemory | None:
    m = _LETS.match(raw.strip())
    if m:
        return _decision_candidate(ctx, m["verb"], m["what"], 0.7)
    text = strip_zh_end(raw)
    m = _DECIDED.match(text) or _WE_USE.match(text)
    if not m or len(m["what"].strip()) < 2 or m["what"].startswith(("了", "过", "完", "着")):
        return None
    return _decision_candidate(ctx, m["verb"] or "", m["what"], 0.7)


def weak_decision(text: str, ctx: Ctx) -> CandidateMemory | None:
    m = _WILL_USE.match(text)
    return _decision_candidate(ctx, m["verb"], m["what"], MEDIUM) if m else None
