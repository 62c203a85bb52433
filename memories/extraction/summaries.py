"""Extractive summaries: the most informative sentences, in their original order, within a budget.

Informative means covering the words the text keeps coming back to (a centroid score, normalised
by length so long sentences do not win by size), with a bonus for numbers and names and a penalty
for questions and small talk. Nothing is paraphrased, so nothing is invented.
"""

import math
import re
from collections import Counter

from django.conf import settings

from memories.extraction.phrasing import cjk_count, split_sentences
from memory_project.text import cjk_ngrams, estimate_tokens, normalize

_WORD = re.compile(r"[a-z0-9][a-z0-9'+#.-]*[a-z0-9+#]|[a-z0-9]", re.I)


_STOP = set(
    """
    the a an and or but to of in on at for with is are was were be been it this that i you we they he
    she my your our their me us them do does did so if as by from not no yes can will would could should
    have has had just also there here what which who how when then than about into up out all some any
    very really ok okay user assistant let let's i'm it's i'll sure thanks please
    """.split()
)


SMALL_TALK = re.compile(
    r"^(?:hi|hello|hey|thanks|thank you|ok|okay|sure|great|cool|got it|you're welcome|no problem|bye|"
    r"你好|您好|谢谢|好的|嗯|再见|不客气|没问题)\b",
    re.I,
)


SPEAKER = re.compile(r"^(?P<speaker>[\w .-]{1,30})[:：]\s*")


def sentence_terms(sentence: str) -> list[str]:
    lowered = sentence.casefold()
    words = [w for w in _WORD.findall(lowered) if w not in _STOP and len(w) > 1]
    return words + cjk_ngrams(lowered, for_query=True).split()


def sentences_join(sentences: list[str]) -> str:
    out = ""
    for sentence in sentences:
        if out and not re.search(r"[。！？；]$", out):
            out += " "
        out += sentence
    return out


def text_truncate(text: str, max_tokens: int) -> str:
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
    terms = [set(sentence_terms(s)) for s in sentences]
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
        if SMALL_TALK.match(SPEAKER.sub("", sentence)) and len(ts) <= 3:
            score *= 0.1
        if index == 0:
            score *= 1.1
        scores.append(score)
    return scores


def select_sentences(sentences: list[str], max_tokens: int, *, must: tuple[int, ...] = ()) -> list[int]:
    """Indexes of the sentences to keep, in original order: `must` first, then by score."""
    scores = _scores(sentences)
    terms = [set(sentence_terms(s)) for s in sentences]
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
        return text_truncate(sentences[best], max_tokens)
    return sentences_join([sentences[i] for i in chosen])


def compress_memories(memories: list[str], *, max_summaries: int = 3, max_tokens: int | None = None) -> list[str]:
    """1–3 summaries of a group of memories: similar ones share a summary, near-duplicates collapse."""
    budget = max_tokens or int(getattr(settings, "LLM_COMPRESS_MAX_TOKENS", 200))
    items: list[str] = []
    item_terms: list[set[str]] = []
    for memory in memories:
        text = normalize(memory or "").rstrip(" .。;；")
        if not text:
            continue
        terms = set(sentence_terms(text))
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
    return text_truncate(text, max_tokens)
