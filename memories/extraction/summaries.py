"""Extractive summaries: the most informative sentences, in their original order, within a budget.

Informative means covering the words the text keeps coming back to (a centroid score, normalised
by length so long sentences do not win by size), with a bonus for numbers and names and a penalty
for questions and small talk. Nothing is paraphrased, so nothing is invented.
"""

import math
import re
from collections import Counter

from django.conf import settings

from memories.extraction import lexicon
from memories.extraction.phrasing import cjk_count, split_sentences
from memories.providers.llm import EpisodeSummary, TurnView
from memories.text import cjk_ngrams, estimate_tokens, normalize

_WORD = re.compile(r"[a-z0-9][a-z0-9'+#.-]*[a-z0-9+#]|[a-z0-9]", re.I)
_STOP = {
    "the",
    "a",
    "an",
    "and",
    "or",
    "but",
    "to",
    "of",
    "in",
    "on",
    "at",
    "for",
    "with",
    "is",
    "are",
    "was",
    "were",
    "be",
    "been",
    "it",
    "this",
    "that",
    "i",
    "you",
    "we",
    "they",
    "he",
    "she",
    "my",
    "your",
    "our",
    "their",
    "me",
    "us",
    "them",
    "do",
    "does",
    "did",
    "so",
    "if",
    "as",
    "by",
    "from",
    "not",
    "no",
    "yes",
    "can",
    "will",
    "would",
    "could",
    "should",
    "have",
    "has",
    "had",
    "just",
    "also",
    "there",
    "here",
    "what",
    "which",
    "who",
    "how",
    "when",
    "then",
    "than",
    "about",
    "into",
    "up",
    "out",
    "all",
    "some",
    "any",
    "very",
    "really",
    "ok",
    "okay",
    "user",
    "assistant",
    "let",
    "let's",
    "i'm",
    "it's",
    "i'll",
    "sure",
    "thanks",
    "please",
}
_SMALL_TALK = re.compile(
    r"^(?:hi|hello|hey|thanks|thank you|ok|okay|sure|great|cool|got it|you're welcome|no problem|bye|"
    r"你好|您好|谢谢|好的|嗯|再见|不客气|没问题)\b",
    re.I,
)
_SPEAKER = re.compile(r"^(?P<speaker>[\w .-]{1,30})[:：]\s*")
_CONCLUSION = re.compile(
    r"\b(?:done|fixed|works|worked|working now|deployed|completed|resolved|solved|finished|success(?:ful(?:ly)?)?|"
    r"merged|shipped|passed|that did it|all set|in the end|finally|decided|will use|going with)\b|"
    r"完成|解决|成功|搞定|好了|可以了|决定|最终|最后",
    re.I,
)


def _terms(sentence: str) -> list[str]:
    lowered = sentence.casefold()
    words = [w for w in _WORD.findall(lowered) if w not in _STOP and len(w) > 1]
    return words + cjk_ngrams(lowered, for_query=True).split()


def _join(sentences: list[str]) -> str:
    out = ""
    for sentence in sentences:
        if out and not re.search(r"[。！？；]$", out):
            out += " "
        out += sentence
    return out


def _truncate(text: str, max_tokens: int) -> str:
    """Cut `text` at a word (or character, for CJK) boundary so that it fits in `max_tokens`."""
    if estimate_tokens(text) <= max_tokens:
        return text
    low, high = 0, len(text)
    while low < high:
        mid = (low + high + 1) // 2
        if estimate_tokens(text[:mid] + "…") <= max_tokens:
            low = mid
        else:
            high = mid - 1
    cut = text[:low]
    if not cjk_count(cut[-2:]) and " " in cut:
        cut = cut[: cut.rfind(" ")]
    return (cut.rstrip(" ,;:，；") + "…") if cut else ""


def _jaccard(a: set[str], b: set[str]) -> float:
    return len(a & b) / len(a | b) if a and b else 0.0


def _scores(sentences: list[str]) -> list[float]:
    terms = [set(_terms(s)) for s in sentences]
    frequency = Counter(t for ts in terms for t in ts)
    scores = []
    for index, (sentence, ts) in enumerate(zip(sentences, terms)):
        if not ts:
            scores.append(0.0)
            continue
        score = sum(frequency[t] for t in ts) / math.sqrt(len(ts)) + 0.3 * len(ts) ** 0.5
        if re.search(r"\d", sentence):
            score += 0.5
        if re.search(r"(?<![.!?]\s)(?<!^)\b[A-Z][a-z]+", sentence):
            score += 0.3
        if sentence.rstrip().endswith(("?", "？")):
            score *= 0.5
        if _SMALL_TALK.match(_SPEAKER.sub("", sentence)) and len(ts) <= 3:
            score *= 0.1
        if index == 0:
            score *= 1.1
        scores.append(score)
    return scores


def select_sentences(sentences: list[str], max_tokens: int, *, must: tuple[int, ...] = ()) -> list[int]:
    """Indexes of the sentences to keep, in original order: `must` first, then by score."""
    scores = _scores(sentences)
    terms = [set(_terms(s)) for s in sentences]
    order = list(dict.fromkeys([*must, *sorted(range(len(sentences)), key=lambda i: (-scores[i], i))]))
    # Filler that happens to fit the leftover budget is not worth its tokens.
    floor = 0.25 * max(scores, default=0.0)
    chosen: list[int] = []
    used = 0
    for index in order:
        if index not in must and (scores[index] <= 0 or scores[index] < floor):
            continue
        if any(_jaccard(terms[index], terms[c]) >= 0.7 for c in chosen):
            continue
        cost = estimate_tokens(sentences[index])
        if used + cost > max_tokens:
            continue
        chosen.append(index)
        used += cost
    return sorted(chosen)


def summarize_text(text: str, max_tokens: int) -> str:
    text = (text or "").strip()
    if max_tokens <= 0 or not text:
        return ""
    if estimate_tokens(normalize(text)) <= max_tokens:
        return normalize(text)
    # Repetition would otherwise dominate the word frequencies the scores come from.
    sentences = list(dict.fromkeys(split_sentences(text)))
    chosen = select_sentences(sentences, max_tokens)
    if not chosen:
        best = max(range(len(sentences)), key=lambda i: (_scores(sentences)[i], -i))
        return _truncate(sentences[best], max_tokens)
    return _join([sentences[i] for i in chosen])


def compress_memories(memories: list[str], *, max_summaries: int = 3, max_tokens: int | None = None) -> list[str]:
    """1–3 summaries of a group of memories: similar ones share a summary, near-duplicates collapse."""
    budget = max_tokens or int(getattr(settings, "LLM_COMPRESS_MAX_TOKENS", 200))
    items: list[str] = []
    item_terms: list[set[str]] = []
    for memory in memories:
        text = normalize(memory or "").rstrip(" .。;；")
        if not text:
            continue
        terms = set(_terms(text))
        duplicate = next((i for i, t in enumerate(item_terms) if _jaccard(t, terms) >= 0.8), None)
        if duplicate is not None:
            if len(text) > len(items[duplicate]):
                items[duplicate], item_terms[duplicate] = text, terms
            continue
        items.append(text)
        item_terms.append(terms)
    if not items:
        return []
    groups: list[list[int]] = []
    for index, terms in enumerate(item_terms):
        best, best_score = None, 0.15
        for g, group in enumerate(groups):
            score = _jaccard(terms, set().union(*(item_terms[i] for i in group)))
            if score >= best_score:
                best, best_score = g, score
        if best is None:
            groups.append([index])
        else:
            groups[best].append(index)
    while len(groups) > max_summaries:
        smallest = min(range(len(groups)), key=lambda g: (len(groups[g]), -g))
        merged = groups.pop(smallest)
        union = set().union(*(item_terms[i] for i in merged))
        target = max(
            range(len(groups)),
            key=lambda g: (_jaccard(union, set().union(*(item_terms[i] for i in groups[g]))), -g),
        )
        groups[target] = sorted(groups[target] + merged)
    return [_group_summary([items[i] for i in group], budget) for group in groups]


def _group_summary(items: list[str], max_tokens: int) -> str:
    chinese = sum(cjk_count(i) for i in items) > sum(len(i) for i in items) / 4
    separator, end = ("；", "。") if chinese else ("; ", ".")
    keep = select_sentences(items, max_tokens) or [0]
    text = separator.join(items[i] for i in keep) + end
    return _truncate(text, max_tokens)


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
_ZH_ORG = re.compile(r"(?P<name>[\u4e00-\u9fff]{2,4}(?:" + "|".join(lexicon.ZH_ORG_SUFFIXES) + r"))")
_ZH_LEADING = re.compile(r"^(?:我在|我们在|在|去|到|是|的|和|跟|给|从|于|我|我们)+")


def _substantive(sentence: str) -> bool:
    body = _SPEAKER.sub("", sentence)
    return not _SMALL_TALK.match(body) or len(_terms(body)) > 3


def episode_entities(turns: list[TurnView], limit: int = 15) -> list[str]:
    from memories.extraction.heuristic import extract_candidates

    found: list[str] = []
    for candidate in extract_candidates(turns, []):
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
        found += [place for place in lexicon.ZH_PLACES if place in sentence]
    seen: set[str] = set()
    out = []
    for name in found:
        key = name.casefold()
        if len(name) < 2 or key in seen or key in {"user", "用户"}:
            continue
        seen.add(key)
        out.append(name)
    return out[:limit]


def episode_summary(turns: list[TurnView], max_tokens: int | None = None) -> EpisodeSummary:
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
    tools_line = f"Tools used: {', '.join(tools)}." if tools else ""
    # A few tokens stay free for the "User:" / "Assistant:" labels.
    room = max(1, budget - estimate_tokens(tools_line) - 8)
    keep = select_sentences([s for _, s in lines], room, must=tuple(dict.fromkeys([goal_index, outcome_index])))
    if goal_index not in keep:
        # Even a goal longer than the whole budget is the one thing an episode must say.
        keep = sorted({goal_index, *keep})
    parts: list[str] = []
    previous = ""
    for index in keep:
        who, sentence = lines[index]
        parts.append(f"{who}: {sentence}" if who != previous else sentence)
        previous = who
    summary = _truncate(_join(parts) + (" " + tools_line if tools_line else ""), budget)
    return EpisodeSummary(
        summary=summary,
        goal=_truncate(goal, 80),
        outcome=_truncate(outcome, 80),
        entities=episode_entities(ordered),
        tools_used=tools,
    )
