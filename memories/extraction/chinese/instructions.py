"""Chinese rules for standing instructions to the assistant ("以后回答都用中文", "写代码不要用 tab")."""

import re

from memories.extraction import candidates
from memories.extraction.candidates import Ctx
from memories.extraction.phrasing import strip_zh_end, zh_third_person
from memories.providers.llm_types import CandidateMemory

# Rules -----------------------------------------------------------------------------------------

# The lead-ins that make an instruction hold from now on; "请" and "你" only address the assistant.
_FUTURE = re.compile(r"以后|今后|下次|从现在开始|从现在起|从今以后|从今天起|往后")


_RULE_PREFIX = re.compile(r"^(?:(?:请|" + _FUTURE.pattern + r"|你)[，,：:]?\s*)+")


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


def _after_prefix(text: str, ctx: Ctx) -> tuple[str, bool, bool]:
    """The clause without its lead-in ("请", "以后"), whether it holds from now on, and whether there
    was a lead-in."""
    prefix = _RULE_PREFIX.match(text)
    future = ctx.future or bool(prefix and _FUTURE.search(prefix.group(0)))
    return (text[prefix.end() :] if prefix else text), future, prefix is not None


def _first_person(body: str) -> bool:
    return body.startswith("我") and not re.match(r"^我(?:要求|希望|需要|想让)你", body)


def future_statement(text: str, ctx: Ctx) -> str:
    """ "以后我每天跑步": the statement after the lead-in, to be read as one that holds from now on
    ("" when the clause is not one)."""
    body, future, prefixed = _after_prefix(text, ctx)
    return body if future and prefixed and _first_person(body) else ""


def rule(text: str, ctx: Ctx) -> CandidateMemory | None:
    body, future, _ = _after_prefix(text, ctx)
    if _first_person(body):
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
        return rule_candidate(ctx, mod, m["act"], ("以后" if future else "") + task + mod_text)
    if future and len(body) >= 3 and not _NOT_AN_ACTION.match(body):
        return rule_candidate(ctx, "must", body, "以后")
    return None


def rule_candidate(ctx: Ctx, mod: str, act: str, lead: str) -> CandidateMemory | None:
    act = strip_zh_end(act).strip("，, ")
    if len(act) < 2:
        return None
    act = zh_third_person(act)
    subject = re.sub(r"^(?:再|都|也|还)", "", re.sub(r"了$", "", act))
    return candidates.rule(ctx, f"用户要求{lead}{act}", subject=subject, mode=mod, act=act)
