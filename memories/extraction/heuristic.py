"""Offline extraction: candidate memories from a conversation's turns, by deterministic patterns.

Only user turns are read for statements (an assistant saying "I prefer…" is not the user); tool
turns and the replies around them feed the tool-failure lessons. Within one call, a later statement
replaces an earlier one in the same exclusive slot ("I prefer tea. … Actually I now prefer coffee"
yields only the coffee preference), and anything equal to an `existing` memory is left out.
"""

import re
from dataclasses import replace

from memories.attributes import attribute_of
from memories.contradiction import MULTI_VALUED_PREDICATES
from memories.extraction import tool_lessons
from memories.extraction.attribute_updates import attribute_update, known_attributes
from memories.extraction.candidates import CORRECTION_CONFIDENCE, Ctx, introduced_names
from memories.extraction.chinese import sentences as chinese
from memories.extraction.english import sentences as english
from memories.extraction.phrasing import is_chinese, split_sentences
from memories.extraction.sentence_reader import read_sentence
from memories.providers.llm_types import CandidateMemory, TurnView

MAX_CANDIDATES = 50
# Longer "sentences" are pasted logs, code or documents, not statements about the user.
MAX_SENTENCE_CHARS = 600


def content_key(text: str) -> str:
    """What two memory texts must share to count as the same memory verbatim."""
    text = re.sub(r"^\s*(?:[-*•]\s+|\[[^\]]{1,40}\]\s*)", "", text or "")
    return re.sub(r"[\W_]+", "", text.casefold())


def extract_candidates(
    turns: list[TurnView], existing: list[str] | tuple[str, ...] = (), *, known: list[str] | tuple[str, ...] = ()
) -> list[CandidateMemory]:
    """Candidates from the user turns; those equal to one of `existing` are left out. `known` are
    memory texts the owner already has, read for the attributes they give values to: a sentence
    naming one of them with another value is its new value (attribute_updates)."""
    found: list[CandidateMemory] = []
    attributes = known_attributes(known)
    for turn in sorted(turns, key=lambda t: t.sequence):
        if turn.role != "user" or not (turn.content or "").strip():
            continue
        for sentence in split_sentences(turn.content):
            if len(sentence) > MAX_SENTENCE_CHARS:
                continue
            swapped = _value_swaps(sentence, found, turn.sequence)
            if swapped:
                found.extend(swapped)
                continue
            ctx = Ctx(turn=turn, names=tuple(introduced_names(found)[-5:]))
            language = chinese if is_chinese(sentence) else english
            read = read_sentence(sentence, ctx, language=language)
            found.extend(read)
            update = attribute_update(sentence, ctx, attributes) if attributes else None
            if update is not None and not any(_same_attribute(c, update) for c in read):
                found.append(update)
    found.extend(tool_lessons.lessons(turns))
    return _finalize(found, existing)


# "Sorry, correction: it's the Chicago office, not Boston" / "更正一下，是深圳办公室，不是广州": the new
# value replaces the old one in what was said before.
_EN_SWAP = re.compile(
    r"^(?:(?:sorry|oops|no|nope|wait|actually|correction|to correct myself|my bad|my mistake)[,:.!;]*\s+)+"
    r"(?:(?:it's|it is|that's|that is|it was|i meant|i mean)\s+)?(?:the\s+)?(?P<new>[^,;]+?),?\s+not\s+(?:the\s+)?"
    r"(?P<old>[^,;.!]+?)[.!]*$",
    re.I,
)
_ZH_SWAP = re.compile(
    r"^(?:(?:不对|更正一下|纠正一下|我说错了|说错了|搞错了|其实|抱歉)[，,。：:！!\s]*)+"
    r"(?:(?:是|应该是)(?P<new>[^，,]+?)[，,]\s*(?:而)?不是(?P<old>[^，,。！!]+)|"
    r"不是(?P<old2>[^，,]+?)[，,]\s*(?:而)?是(?P<new2>[^，,。！!]+))[。！!]*$"
)


def _value_swaps(sentence: str, found: list[CandidateMemory], sequence: int) -> list[CandidateMemory]:
    m = _ZH_SWAP.match(sentence.strip()) if is_chinese(sentence) else _EN_SWAP.match(sentence.strip())
    if not m:
        return []
    old = (m.groupdict().get("old") or m.groupdict().get("old2") or "").strip()
    new = (m.groupdict().get("new") or m.groupdict().get("new2") or "").strip()
    if not old or not new or old.casefold() == new.casefold():
        return []
    for candidate in reversed(found):
        if candidate.action != "remember":
            continue
        content = _swap(candidate.content, old, new)
        if content is None:
            continue
        value = _swap(candidate.value, old, new) or candidate.value
        corrected = replace(
            candidate,
            content=content,
            value=value,
            source_sequences=[sequence],
            confidence=max(candidate.confidence, CORRECTION_CONFIDENCE),
            importance=round(min(1.0, candidate.importance + 0.1), 2),
            entities=[(_swap(name, old, new) or name, kind) for name, kind in candidate.entities],
        )
        return [corrected]
    return []


def _swap(text: str, old: str, new: str) -> str | None:
    """`text` with `old` replaced by `new`, without doubling what follows ("Boston office" → "Chicago
    office", not "Chicago office office"); None when `old` is not in it."""
    at = text.casefold().find(old.casefold())
    if at < 0:
        return None
    end = at + len(old)
    after = text[end:]
    core = new
    if is_chinese(new):
        for k in range(len(new) - 1, 0, -1):
            if after.startswith(new[k:]):
                core = new[:k]
                break
    else:
        words = new.split()
        for k in range(len(words) - 1, 0, -1):
            if after.lstrip().casefold().startswith(" ".join(words[k:]).casefold()):
                core = " ".join(words[:k])
                break
    return text[:at] + core + after


def _same_attribute(a: CandidateMemory, b: CandidateMemory) -> bool:
    first, second = attribute_of(a.content), attribute_of(b.content)
    return bool(first and second and first.name == second.name)


def _finalize(found: list[CandidateMemory], existing) -> list[CandidateMemory]:
    known = {content_key(e) for e in existing or ()}
    by_content: dict[str, CandidateMemory] = {}
    for candidate in found:
        key = (candidate.action, content_key(candidate.content))
        if not key[1]:
            continue
        same = by_content.get(key)
        if same is not None:
            # Said twice: one memory, both turns as provenance, the stronger reading.
            same.source_sequences = list(dict.fromkeys(same.source_sequences + candidate.source_sequences))
            same.importance = max(same.importance, candidate.importance)
            same.confidence = max(same.confidence, candidate.confidence)
            same.explicit = same.explicit or candidate.explicit
            continue
        by_content[key] = candidate
    kept = list(by_content.values())
    # A later statement in the same slot wins, and a later "forget" cancels what it names.
    result: list[CandidateMemory] = []
    for index, candidate in enumerate(kept):
        later = kept[index + 1 :]
        if any(_replaces(newer, candidate) for newer in later):
            continue
        if candidate.action == "remember" and content_key(candidate.content) in known:
            continue
        result.append(candidate)
    return result[:MAX_CANDIDATES]


def _replaces(newer: CandidateMemory, older: CandidateMemory) -> bool:
    if newer.action == "forget" and older.action == "remember":
        if content_key(newer.content) == content_key(older.content):
            return True
    if (
        newer.subject
        and newer.subject == older.subject
        and newer.confidence >= CORRECTION_CONFIDENCE > older.confidence
        and newer.action == older.action == "remember"
    ):
        # "No, my son is in fourth grade": a correction replaces what was said about the same subject.
        return True
    # A multi-valued predicate ("has a dog", "has a cat"): two candidates in one conversation both stand.
    if not (newer.subject and newer.predicate) or newer.predicate in MULTI_VALUED_PREDICATES:
        return False
    if (newer.subject, newer.predicate) != (older.subject, older.predicate):
        return False
    return newer.action == "forget" or newer.value != older.value or newer.content != older.content
