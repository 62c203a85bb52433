"""Procedural memory from tool failures (seed 004 §4.5).

A failed tool call followed by what fixed it becomes a lesson: "When fetch_url fails with "empty
content", use the browser tool instead". The fix is the first sentence after the failure, from the
assistant or the user, that says what to do differently; a later successful call of another tool
stands in for it when nobody said anything. The same failure twice with no fix is recorded as a
known failure so the agent stops repeating it.
"""

import re

from memories.extraction.candidates import HIGH, MEDIUM, tool_entities
from memories.extraction.phrasing import cjk_count, slot_key, split_sentences, strip_end, strip_zh_end
from memories.providers.llm_types import CandidateMemory, TurnView

_LOOKAHEAD_TURNS = 8
_ERROR_TEXT = re.compile(
    r"^\s*(?:error|exception|traceback|fatal|failed|failure|e:|err:)\b|"
    r"\b(?:error|exception|traceback|failed|not found|permission denied|timed out|timeout|refused|"
    r"no such file|command not found|syntax error|invalid|unauthorized|forbidden|status (?:4|5)\d\d)\b|"
    r"错误|失败|异常|超时|报错|拒绝访问|找不到",
    re.I,
)
_FIX = re.compile(
    r"\b(?:instead|switch(?:ing|ed)? to|use|using|retry|retrying|re-run|rerun|add|adding|set|setting|install|"
    r"installing|pass|passing|run|running|need(?:s|ed)? to|should|fix(?:ed)?|the fix|works? (?:if|when|after|with)|"
    r"worked|solved|resolved|try|trying|upgrade|downgrade|escape|quote|wrap)\b|改用|换成|改成|应该|需要|加上|设置|安装|"
    r"重试|解决|用.+代替|换用|改为|要先|得先|先(?:运行|执行|跑|用)|运行|执行",
    re.I,
)
_LEAD = re.compile(
    r"^(?:(?:ok(?:ay)?|so|sorry|alright|got it|i see|ah|oh|hmm|right|no|actually|then)[,!.]*\s+|"
    r"(?:好的?|嗯|哦|那就|那|所以)[，,。!！]*\s*)*"
    r"(?:i(?:'ll| will)|let me|let's|we should|we need to|i should|i need to|i'm going to|i am going to|we'll|"
    r"you should|you need to|please|just|我来|我会|我们|我先|我)?\s*",
    re.I,
)
_SUCCESS = re.compile(
    r"\b(?:worked|works now|success|succeeded|fixed|done|that did it)\b|成功|好了|可以了|解决了", re.I
)


def _error_of(turn: TurnView) -> str:
    if turn.tool_error.strip():
        return turn.tool_error
    if turn.role == "tool" and _ERROR_TEXT.search(turn.content[:300]):
        return turn.content
    return ""


def _short_error(text: str, limit: int = 80) -> str:
    line = next((ln.strip() for ln in text.strip().splitlines() if ln.strip()), "")
    line = re.sub(r"\s+", " ", line).strip(" .。")
    return line if len(line) <= limit else line[: limit - 1].rstrip() + "…"


_STRONG_FIX = re.compile(
    r"\b(?:instead|switch(?:ing|ed)? to|the fix|rather than)\b|改用|换成|换用|改为|改成|代替", re.I
)


def _fix_sentence(turn: TurnView) -> str:
    """The clause of `turn` that says what to do differently, as an instruction ("use X instead").
    Clauses that clearly name a replacement ("instead", "改用") win over ones that merely mention
    an action."""
    clauses = []
    for sentence in split_sentences(turn.content):
        if sentence.endswith(("?", "？")):
            continue
        clauses += [c.strip() for c in re.split(r"[,;，；]", sentence) if len(c.strip()) >= 4]
    ranked = [c for c in clauses if _STRONG_FIX.search(c)] + [c for c in clauses if _FIX.search(c)]
    for clause in ranked:
        fix = _LEAD.sub("", clause, count=1).strip()
        fix = strip_zh_end(fix) if cjk_count(fix) else strip_end(fix)
        if len(fix) >= 4:
            return fix[:1].lower() + fix[1:] if fix[:1].isupper() and not fix[1:2].isupper() else fix
    return ""


def _is_tool_turn(turn: TurnView) -> bool:
    return turn.role == "tool" or bool(turn.tool_name)


def lessons(turns: list[TurnView]) -> list[CandidateMemory]:
    ordered = sorted(turns, key=lambda t: t.sequence)
    out: list[CandidateMemory] = []
    handled: set[int] = set()
    for i, turn in enumerate(ordered):
        error = _error_of(turn)
        if not error or not _is_tool_turn(turn) or turn.sequence in handled:
            continue
        tool = turn.tool_name or "a tool"
        fix, fix_turn, success_turn, repeats = "", None, None, [turn]
        for later in ordered[i + 1 : i + 1 + _LOOKAHEAD_TURNS]:
            if _is_tool_turn(later):
                if _error_of(later):
                    if (later.tool_name or "a tool") == tool:
                        repeats.append(later)
                    continue
                success_turn = later
                if fix:
                    break
                continue
            if later.role in ("assistant", "user") and not fix:
                fix = _fix_sentence(later)
                fix_turn = later if fix else None
                if fix and success_turn is not None:
                    break
            elif later.role in ("assistant", "user") and _SUCCESS.search(later.content):
                success_turn = success_turn or later
                break
        handled.update(t.sequence for t in repeats)
        if not fix and success_turn is not None and success_turn.tool_name and success_turn.tool_name != tool:
            fix = f"use {success_turn.tool_name} instead"
            fix_turn = success_turn
        short = _short_error(error)
        if fix:
            chinese = cjk_count(fix) >= 2
            content = f"当 {tool} 报错「{short}」时，{fix}" if chinese else f'When {tool} fails with "{short}", {fix}'
            sequences = [turn.sequence] + [t.sequence for t in (fix_turn, success_turn) if t is not None]
            out.append(
                CandidateMemory(
                    content=content,
                    category="error",
                    importance=HIGH,
                    retention="long",
                    subject=_subject(tool, short),
                    predicate="workaround",
                    value=fix,
                    source_sequences=list(dict.fromkeys(sequences)),
                    confidence=0.8 if success_turn is not None else 0.6,
                    entities=_entities(tool, fix, success_turn),
                )
            )
        elif len(repeats) >= 2:
            out.append(
                CandidateMemory(
                    content=f'{tool} failed {len(repeats)} times with "{short}"',
                    category="error",
                    importance=MEDIUM,
                    retention="long",
                    subject=_subject(tool, short),
                    predicate="workaround",
                    value="",
                    source_sequences=[t.sequence for t in repeats],
                    confidence=0.7,
                    entities=_entities(tool, "", None),
                )
            )
    return out


def _subject(tool: str, error: str) -> str:
    return slot_key(" ".join([tool, *error.split()[:6]]))


def _entities(tool: str, fix: str, success: TurnView | None) -> list[tuple[str, str]]:
    names = [(tool, "tool")] if tool != "a tool" else []
    if success is not None and success.tool_name and success.tool_name != tool:
        names.append((success.tool_name, "tool"))
    names += tool_entities(fix)
    seen: set[str] = set()
    return [(n, k) for n, k in names if not (n.casefold() in seen or seen.add(n.casefold()))]
