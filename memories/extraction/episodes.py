"""Episode summaries of a finished conversation: what the user asked for, what they told (the
memories extracted from it), how it ended (tasks the user finished, the assistant's conclusion), and
the names and tools in it; the extractive summary of its sentences when no narrative can be made.
"""

import re

from django.conf import settings

from memories.extraction import lexicon, vocabulary
from memories.extraction.completions import completed_tasks
from memories.extraction.heuristic import extract_candidates
from memories.extraction.phrasing import cjk_count, split_sentences, third_person_rest
from memories.extraction.summaries import (
    SMALL_TALK,
    SPEAKER,
    select_sentences,
    sentence_terms,
    sentences_join,
    text_truncate,
)
from memories.providers.llm_types import EpisodeSummary, TurnView
from memory_project.text import estimate_tokens

# ---------------------------------------------------------------------------------------------
# Episodes
# ---------------------------------------------------------------------------------------------

_REQUEST = re.compile(
    r"\?|？|\b(?:can you|could you|would you|please|help|i need|i want|i'd like|how do|how can|let's|show me|"
    r"write|fix|create|build|make|find|explain)\b|帮我|请|能不能|可以|怎么|如何|我想|我要|需要",
    re.I,
)


_CAPITALISED = re.compile(r"\b[A-Z][\w.+#-]*[\w+#](?:\s+[A-Z][\w.+#-]*[\w+#])*")


_COMMON_CAPITALISED = {
    "I",
    "I'm",
    "I've",
    "I'll",
    "I'd",
    "The",
    "A",
    "An",
    "This",
    "That",
    "It",
    "We",
    "You",
    "He",
    "She",
    "They",
    "Yes",
    "No",
    "Ok",
    "OK",
    "Okay",
    "Hi",
    "Hello",
    "Hey",
    "Thanks",
    "Please",
    "Sure",
    "Let",
    "Let's",
    "What",
    "How",
    "Why",
    "When",
    "Where",
    "Who",
    "Can",
    "Could",
    "Would",
    "Should",
    "Do",
    "Does",
    "Did",
    "Is",
    "Are",
    "Also",
    "And",
    "But",
    "So",
    "Then",
    "Now",
    "Here",
    "There",
    "My",
    "Your",
    "Our",
    "Great",
    "Good",
    "Sorry",
    "Actually",
    "Maybe",
    "Just",
    "If",
    "For",
    "In",
    "On",
    "At",
    "To",
    "From",
    "With",
    "Today",
    "Tomorrow",
    "Note",
    "Remember",
    "Done",
    "First",
    "Next",
    "Finally",
    "User",
    "Assistant",
    "Got",
    "Perfect",
    "Nice",
    "Cool",
    "Well",
    "Oh",
    "Sounds",
    "Thank",
    "Try",
    "Use",
    "Run",
    "Check",
    "Error",
    "Failed",
}


_ZH_NAMED = re.compile(r"[「『《“](?P<name>[^」』》”]{1,30})[」』》”]")


# At most four characters before the suffix: enough for most names, and it keeps a verb in front
# ("发给字节跳动公司") out of the name.
_ZH_ORG = re.compile(r"(?P<name>[\u4e00-\u9fff]{2,4}(?:" + "|".join(vocabulary.ZH_ORG_SUFFIXES) + r"))")


_ZH_LEADING = re.compile(r"^(?:我在|我们在|在|去|到|是|的|和|跟|给|从|于|我|我们)+")


def _substantive(sentence: str) -> bool:
    body = SPEAKER.sub("", sentence)
    return not SMALL_TALK.match(body) or len(sentence_terms(body)) > 3


def episode_entities(turns: list[TurnView], limit: int = 15, candidates: list | None = None) -> list[str]:
    found: list[str] = []
    for candidate in extract_candidates(turns, []) if candidates is None else candidates:
        found += [name for name, _ in candidate.entities]
    sentences = [s for t in turns if t.role != "tool" for s in split_sentences(t.content)]
    mid_sentence = {m.group(0) for s in sentences for m in _CAPITALISED.finditer(s) if m.start() > 0}
    mid_words = {w for name in mid_sentence for w in name.split()}
    for sentence in sentences:
        for m in _CAPITALISED.finditer(sentence):
            name = m.group(0)
            words = name.split()
            while words and words[0] in _COMMON_CAPITALISED:
                words.pop(0)
            if not words:
                continue
            name = " ".join(words)
            if m.start() == 0 and len(words) == 1 and not re.search(r"[A-Z].*[A-Z]|\d|\.", name):
                # A capitalised first word is usually just a sentence start; keep it only when
                # it shows up capitalised mid-sentence elsewhere.
                if name not in mid_words:
                    continue
            found.append(name)
        found += [surface for surface, domain in lexicon.known_terms(sentence) if domain in lexicon.TOOL_DOMAINS]
        found += [m["name"] for m in _ZH_NAMED.finditer(sentence)]
        found += [_ZH_LEADING.sub("", m["name"]) for m in _ZH_ORG.finditer(sentence)]
        found += [place for place in vocabulary.ZH_PLACES if place in sentence]
    seen: set[str] = set()
    out = []
    for name in found:
        key = name.casefold()
        if len(name) < 2 or key in seen or key in {"user", "用户"}:
            continue
        seen.add(key)
        out.append(name)
    return out[:limit]


# Words of an outcome reached ("deployed", "that did it", "搞定"): where the conversation concluded.
_CONCLUSION = re.compile(
    r"\b(?:done|fixed|works|worked|working now|deployed|completed|resolved|solved|finished|success(?:ful(?:ly)?)?|"
    r"merged|shipped|passed|that did it|all set|in the end|finally|decided|will use|going with)\b|"
    r"完成|解决|成功|搞定|好了|可以了|决定|最终|最后",
    re.I,
)


def episode_summary(turns: list[TurnView], max_tokens: int | None = None) -> EpisodeSummary:
    """What happened, in a sentence or three: what the user asked for, what they told (the memories
    extracted from it), and how it ended (tasks the user finished, or the assistant's conclusion)."""
    budget = max_tokens or int(getattr(settings, "EPISODE_SUMMARY_MAX_TOKENS", 200))
    ordered = sorted(turns, key=lambda t: t.sequence)
    tools = list(dict.fromkeys(t.tool_name for t in ordered if t.tool_name))
    lines: list[tuple[str, str]] = []
    for turn in ordered:
        if turn.role not in ("user", "assistant"):
            continue
        speaker = "User" if turn.role == "user" else "Assistant"
        lines += [(speaker, s) for s in split_sentences(turn.content) if _substantive(s)]
    if not lines:
        return EpisodeSummary(summary="", tools_used=tools)
    goal_index = next((i for i, (who, s) in enumerate(lines) if who == "User" and _REQUEST.search(s)), None)
    if goal_index is None:
        goal_index = next((i for i, (who, _) in enumerate(lines) if who == "User"), 0)
    tail = range(len(lines) - 1, max(goal_index, len(lines) - 8) - 1, -1)
    outcome_index = next((i for i in tail if _CONCLUSION.search(lines[i][1]) and not lines[i][1].endswith("?")), None)
    if outcome_index is None:
        outcome_index = next((i for i in reversed(range(len(lines))) if lines[i][0] == "Assistant"), len(lines) - 1)
    goal, outcome = lines[goal_index][1], lines[outcome_index][1] if outcome_index != goal_index else ""
    candidates = [c for c in extract_candidates(ordered, []) if c.action == "remember"]
    completions = completed_tasks(ordered)
    # The request the narrative reports: a standing instruction ("please never use emojis") is a rule
    # among the memories, not what the user came for.
    asked = next(
        (i for i, (who, s) in enumerate(lines) if who == "User" and _REQUEST.search(s) and not _RULE_LIKE.search(s)),
        None,
    )
    chinese = cjk_count(" ".join(s for who, s in lines if who == "User")) >= 4
    tools_line = (
        (f"使用的工具：{'、'.join(tools)}。" if chinese else f"Tools used: {', '.join(tools)}.") if tools else ""
    )
    concluded = outcome and lines[outcome_index][0] == "Assistant" and _CONCLUSION.search(outcome)
    done = {c.sequence for c in completions}
    sentences = _narrative(
        goal=lines[asked][1] if asked is not None else "",
        goal_first=asked is not None and (not candidates or asked <= _line_of(lines, ordered, candidates[0])),
        outcome=outcome if concluded and not outcome.rstrip().endswith(("?", "？")) else "",
        # What the user finished is said once, in the completions sentence.
        memories=[c.content for c in candidates if not (c.predicate == "done" and done & set(c.source_sequences))],
        completions=[c.task for c in completions],
        chinese=chinese,
    )
    if sentences:
        summary = text_truncate(sentences_join(sentences + ([tools_line] if tools_line else [])), budget)
    else:
        summary = _extractive_episode(lines, goal_index, outcome_index, budget, tools_line)
    return EpisodeSummary(
        summary=summary,
        goal=text_truncate(goal, 80),
        outcome=text_truncate(outcome, 80),
        entities=episode_entities(ordered, candidates=candidates),
        tools_used=tools,
        completed=[(c.task, c.completed_at) for c in completions],
    )


_RULE_LIKE = re.compile(
    r"^(?:(?:and|also|so)\s+)?(?:please\s+)?(?:always|never|don't|do not|from now on|going forward|remember)\b|"
    r"以后|今后|从现在|记住|不要|别再",
    re.I,
)


def _line_of(lines: list[tuple[str, str]], turns: list[TurnView], candidate) -> int:
    """Index in `lines` of the first sentence of the turn a candidate came from."""
    sequence = candidate.source_sequences[0] if candidate.source_sequences else 0
    index = 0
    for turn in turns:
        if turn.role not in ("user", "assistant"):
            continue
        count = len([s for s in split_sentences(turn.content) if _substantive(s)])
        if turn.sequence >= sequence:
            return index
        index += count
    return index


def _extractive_episode(lines, goal_index: int, outcome_index: int, budget: int, tools_line: str) -> str:
    """The substantive sentences themselves, for a conversation that asked for nothing and told nothing
    the extractor keeps."""
    # A few tokens stay free for the "User:" / "Assistant:" labels.
    room = max(1, budget - estimate_tokens(tools_line) - 8)
    keep = select_sentences([s for _, s in lines], room, must=tuple(dict.fromkeys([goal_index, outcome_index])))
    if goal_index not in keep:
        keep = sorted({goal_index, *keep})
    parts: list[str] = []
    previous = ""
    for index in keep:
        who, sentence = lines[index]
        parts.append(f"{who}: {sentence}" if who != previous else sentence)
        previous = who
    return text_truncate(sentences_join(parts) + (" " + tools_line if tools_line else ""), budget)


# Turning a request into a report of it: "Can you summarize X for me?" → "User asked the assistant to
# summarize X."; "帮我把报告翻译成英文" → "用户请助手帮忙把报告翻译成英文。"
_EN_ASKS = [
    (
        re.compile(
            r"^(?:(?:hi|hey|hello|ok(?:ay)?|so)[,!.]*\s+)*"
            r"(?:(?:can|could|would|will) you|i (?:want|need|would like|'d like) you to)"
            r"\s+(?:please\s+|kindly\s+)?(?:help me\s+(?:to\s+)?)?(?P<act>.+?)(?:,?\s+please)?(?:\s+for me)?[?.!]*$",
            re.I,
        ),
        "User asked the assistant to",
    ),
    (re.compile(r"^(?:please\s+)?help me\s+(?:to\s+|with\s+)?(?P<act>.+?)[?.!]*$", re.I), "User asked for help to"),
    (re.compile(r"^(?:(?:anyway|ok(?:ay)?|so|now)[,]?\s+)*let's\s+(?P<act>.+?)[.!]*$", re.I), "User suggested to"),
]


_ASK_IMPERATIVE = re.compile(r"^(?:please\s+)?(?P<act>(?P<verb>[a-z]+)\b.+?)(?:,?\s+please)?[.!]*$", re.I)


_ASK_VERBS = {
    "fetch", "find", "summarize", "summarise", "translate", "write", "draft", "fix", "create", "build", "make",
    "explain", "plan", "book", "set", "check", "compare", "review", "list", "show", "give", "send", "add",
    "update", "search", "look", "deploy", "run", "install", "help", "tell", "get", "prepare", "schedule",
    "recommend", "suggest", "convert", "calculate", "analyze", "analyse", "rewrite", "edit", "organize",
}  # fmt: skip


_ZH_ASK = re.compile(
    r"^(?:你好|您好|嗨)?[，,！!\s]*(?:请你?|麻烦你?|你能|你可以|能不能|可不可以|可以)?\s*(?P<help>帮我|帮忙|给我)"
    r"(?P<act>.+?)(?:吗|吧|好吗|可以吗|好不好)?[？?。！!]*$"
)


_OUTCOME_LEAD = re.compile(r"^(?:(?:all )?done|ok(?:ay)?|great|perfect|finished|alright)[:,.!]\s*", re.I)


_ASSISTANT_I = [
    (re.compile(r"^I(?:'ve| have)\b"), "The assistant has"),
    (re.compile(r"^I(?:'ll| will)\b"), "The assistant will"),
    (re.compile(r"^I(?:'m| am)\b"), "The assistant is"),
    (re.compile(r"^I\b"), "The assistant"),
]


def _request_sentence(goal: str, chinese: bool) -> str:
    goal = goal.strip()
    if chinese:
        m = _ZH_ASK.match(goal)
        if m:
            act = m["act"].replace("我们", "用户").replace("我", "用户")
            return f"用户请助手{'帮忙' if m['help'] != '给我' else '给用户'}{act.rstrip('，, ')}。"
        return f"用户问：{goal}"
    for pattern, lead in _EN_ASKS:
        m = pattern.match(goal)
        if m:
            return f"{lead} {third_person_rest(m['act'])}."
    m = _ASK_IMPERATIVE.match(goal)
    if m and m["verb"].lower() in _ASK_VERBS and not goal.endswith("?"):
        act = m["act"][:1].lower() + m["act"][1:]
        return f"User asked the assistant to {third_person_rest(act)}."
    return f'User asked: "{goal}"'


def _outcome_sentence(outcome: str, chinese: bool) -> str:
    if chinese:
        return f"结果：{outcome}"
    text = _OUTCOME_LEAD.sub("", outcome.strip())
    for pattern, lead in _ASSISTANT_I:
        if pattern.match(text):
            return pattern.sub(lead, text, count=1)
    return f"Outcome: {text}"


def _completion_clause(task: str) -> str:
    first = task.split()[0].lower() if task.split() else ""
    if task.lower().startswith("done with"):
        return f"is {task}"
    if first.endswith("ed") or first in {"got", "did", "paid", "sent", "filed", "sorted", "built", "made", "won"}:
        return task
    return f"finished: {task}"


def _narrative(
    *, goal: str, goal_first: bool, outcome: str, memories: list[str], completions: list[str], chinese: bool
) -> list[str]:
    end = "。" if chinese else "."
    request = _request_sentence(goal, chinese) if goal else ""
    told = [m.rstrip(" .。") for m in memories[: 2 if goal else 3]]
    sentences: list[str] = []
    if told:
        sentences.append(("；".join(told) if chinese else "; ".join(told)) + end)
    if request:
        sentences.insert(0 if goal_first else len(sentences), request)
    if completions:
        if chinese:
            sentences.append(f"用户完成了：{'、'.join(completions)}。")
        else:
            sentences.append("User " + " and ".join(_completion_clause(t) for t in completions) + ".")
    elif outcome and sentences:
        sentence = _outcome_sentence(outcome, chinese)
        sentences.append(sentence if sentence.endswith(("。", ".", "!", "！")) else sentence + end)
    return sentences
