"""Tasks the user says they finished ("I finished the report", "done with the taxes", "报告写完了").

The scratchpad's recent completions (seed 001: archived tasks) go into every system prompt, so they
take only what the user reports as done, in their own words without the filler: never a request,
a plan, or what the assistant did. A relative date ("yesterday") becomes the completion's day.
"""

import re
from dataclasses import dataclass
from datetime import datetime, time

from memories.extraction.past_dates import find_past_date
from memories.extraction.phrasing import (
    expand_contractions,
    is_chinese,
    split_clauses,
    split_sentences,
    strip_end,
    strip_zh_end,
)
from memories.providers.llm_types import TurnView

MAX_TASK_CHARS = 120

_EN_DONE_VERBS = (
    r"finished|completed|submitted|filed|sent off|sent|wrapped up|handed in|turned in|paid|booked|fixed|shipped|"
    r"deployed|published|renewed|cleaned|cleared|sorted out|sorted|signed|returned|mailed|posted|uploaded|"
    r"delivered|passed|closed|merged|released|did|cancelled|canceled|scheduled|picked up|dropped off|got"
)
# Not a task: a pronoun, the conversation itself, or an object of "got" that is a thing received.
_NOT_A_TASK = re.compile(
    r"^(?:it|that|this|them|those|these|everything|something|nothing|all|up|out|reading|talking|the call|"
    r"your (?:message|answer|reply)|the (?:answer|message|article|link))\b",
    re.I,
)
_GOT_TASKS = re.compile(
    r"^(?:my|the|our)\s+\w+(?:\s+\w+)?\s+(?:done|sorted|fixed|approved|signed|renewed|paid)\b", re.I
)


@dataclass(frozen=True)
class _TaskRule:
    """A way of saying a task is done, and how the task reads: `{what}` is the task tidied, any other
    group lower-cased."""

    pattern: re.Pattern[str]
    template: str
    any_object: bool = False  # "my <x> is done" names the task itself, so the pronoun check is skipped


def _rule(pattern: str, template: str, *, any_object: bool = False) -> _TaskRule:
    return _TaskRule(re.compile(pattern, re.I), template, any_object)


# Tried in order; the first that matches decides, even when what it matched is not a task.
_EN_RULES = (
    _rule(
        r"^(?:i(?: am|'m)\s+|we(?: are|'re)\s+)?(?:(?:finally|all|just|now|officially)\s+)*(?:done|finished|through)"
        r"\s+with\s+(?P<what>.+)$",
        "done with {what}",
    ),
    _rule(r"^(?:i|we)\s+(?:finally\s+)?got\s+(?P<what>.+?)\s+done$", "got {what} done"),
    _rule(
        r"^(?P<what>(?:my|the|our)\s+.+?)\s+(?:is|are)\s+(?:(?:finally|all|now|already)\s+)*"
        r"(?P<state>done|finished|submitted|sorted|sent|booked|paid|fixed|complete|completed)$",
        "{what} {state}",
        any_object=True,
    ),
    _rule(
        r"^(?:(?:i|we)\s+(?:(?:just|finally|already|also|actually|successfully|officially|now)\s+)*"
        r"|(?:(?:just|finally|also)\s+)*)"
        r"(?P<verb>" + _EN_DONE_VERBS + r")\s+(?P<what>.+)$",
        "{verb} {what}",
    ),
)

_ZH_DONE_VERBS = (
    r"写完|做完|改完|弄完|搞定|办好|办完|交完|提交|交了|考完|完成|处理完|整理完|报完|弄好|修好|装好|签完|签好|发完|订好|"
    r"买好|付完|交上"
)
_ZH_DONE = re.compile(
    r"^(?:我们|我)?(?:把|的)?(?P<what>[\u4e00-\u9fffA-Za-z0-9《》“”\" ]{1,16}?)(?:终于|总算|已经|也|都|刚刚|刚)*"
    r"(?P<verb>" + _ZH_DONE_VERBS + r")了"
)
_ZH_DONE_FRONT = re.compile(
    r"^(?:我们|我)?(?:终于|总算|已经|刚刚|刚)*(?P<verb>搞定了|完成了|做完了|写完了|交了)(?P<what>.+)$"
)
_ZH_NOT_A_TASK = re.compile(r"^(?:你|这|那|它|都|也|事情|东西|一切|所有)")


@dataclass(frozen=True)
class Completion:
    task: str
    completed_at: datetime
    sequence: int


def _english(clause: str) -> str:
    clause = expand_contractions(
        strip_end(re.sub(r"^(?:phew|yay|woohoo|ok(?:ay)?|so|and|also|well)[,!.]*\s+", "", clause, flags=re.I))
    )
    for rule in _EN_RULES:
        m = rule.pattern.match(clause)
        if not m:
            continue
        if not rule.any_object and _NOT_A_TASK.match(m["what"]):
            return ""
        said = {name: value.lower() for name, value in m.groupdict().items()}
        if said.get("verb") in {"got", "did"} and not _GOT_TASKS.match(m["what"]):
            return ""  # "got" and "did" take anything: only a task with its state counts
        return rule.template.format_map(said | {"what": _tidy(m["what"])})
    return ""


def _tidy(what: str) -> str:
    """The task without the user's possessives, the date (kept apart) or a trailing aside."""
    what = re.sub(
        r",.*$|\s+(?:yesterday|today|this (?:morning|afternoon|evening)|last \w+|earlier(?: today)?|"
        r"\w+ (?:days?|weeks?) ago|at last|finally)\b.*$",
        "",
        what,
        flags=re.I,
    )
    what = re.sub(r"\b(?:my|our)\b", "the", what, flags=re.I)
    return strip_end(what).strip()


def _chinese(clause: str) -> str:
    text = strip_zh_end(clause)
    m = _ZH_DONE_FRONT.match(text)
    if m and not _ZH_NOT_A_TASK.match(m["what"]):
        return m["verb"] + re.split(r"[，,]", m["what"])[0]
    m = _ZH_DONE.match(text)
    if not m or _ZH_NOT_A_TASK.match(m["what"]):
        return ""
    what = re.sub(r"昨天|今天|前天|刚才|上个?(?:周|星期|礼拜)[一二三四五六日天]?|上个?月", "", m["what"]).strip()
    return f"{what}{m['verb']}了" if what else ""


def completed_tasks(turns: list[TurnView]) -> list[Completion]:
    """What the user reports as finished, in the order said, each once."""
    out: dict[str, Completion] = {}
    for turn in sorted(turns, key=lambda t: t.sequence):
        if turn.role != "user" or not (turn.content or "").strip():
            continue
        for sentence in split_sentences(turn.content):
            if sentence.rstrip().endswith(("?", "？")):
                continue
            for clause in split_clauses(sentence.rstrip("。！!～~ ")):
                task = _chinese(clause) if is_chinese(clause) else _english(clause)
                if not task or len(task) > MAX_TASK_CHARS:
                    continue
                when = turn.created_at
                past = find_past_date(clause, turn.created_at)
                if past is not None and past.precision == "day" and past.due != turn.created_at.date():
                    when = datetime.combine(past.due, time(12, 0), tzinfo=turn.created_at.tzinfo)
                out.setdefault(task.casefold(), Completion(task, when, turn.sequence))
    return list(out.values())
