"""Sentences, clauses, first person → "User …" / "用户…", and the slot keys (subject / predicate).

Slot keys are what the consolidation engine compares to detect that a new memory replaces an old
one, so every producer (heuristic and LLM) runs its subject and predicate through `slot_key`.
"""

import re

from memory_project.text import normalize

_CJK = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]")
_CJK_PUNCT = "。！？；，、：「」『』（）《》“”‘’…"

# Sentence ends: western punctuation followed by space, CJK punctuation anywhere, line breaks.
# Not after a title or a common abbreviation: "St. Mary's Hospital" is one name, "Dr. Lee" one person.
_SENTENCE_END = re.compile(
    r"(?<!\bSt\.)(?<!\bDr\.)(?<!\bMr\.)(?<!\bMs\.)(?<!\bMrs\.)(?<!\bJr\.)(?<!\bSr\.)(?<!\bProf\.)(?<!\bvs\.)"
    r"(?<!\be\.g\.)(?<!\bi\.e\.)(?<=[.!?])\s+|(?<=[。！？；!?;])|\n+"
)
_BULLET = re.compile(r"^\s*(?:[-*•>]+|\d+[.)])\s+")


def cjk_count(text: str) -> int:
    return len(_CJK.findall(text))


def is_chinese(text: str) -> bool:
    """Chinese rules apply when the text has at least two CJK characters and starts with one or
    with a short Latin run ("Vim 是我最喜欢的编辑器")."""
    return cjk_count(text) >= 2 and cjk_count(text) * 3 >= len(re.findall(r"[A-Za-z]+", text))


_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")


def clean(text: str) -> str:
    text = _CONTROL.sub(" ", text).replace("’", "'").replace("‘", "'").replace("`", "")
    text = _BULLET.sub("", text)
    return normalize(text).strip(" \"'“”「」")


def split_sentences(text: str) -> list[str]:
    return [s for s in (clean(p) for p in _SENTENCE_END.split(text or "")) if s]


_EN_CLAUSE = re.compile(
    r"\s*[,;]?\s+(?:and|but|so|also|plus|though|although|because|while)\s+"
    r"(?=(?:(?:these days|nowadays|now|lately),?\s+)?(?:i|i'm|i've|i'll|i'd|my|we|we're)\b)"
    r"|\s*[,;]\s+(?=(?:i|i'm|i've|i'll|i'd|my)\s)"
    # "Groceries got so expensive — my budget is $150 now": a dash before a statement of the user's own.
    r"|\s+[—–-]{1,2}\s+(?=(?:i|i'm|i've|my|we|we're|our)\s)",
    re.I,
)
_ZH_CLAUSE = re.compile(
    r"[，,；;]\s*(?:而且|但是|但|不过|另外|还有|并且|同时|所以|然后|而)?\s*(?=我)"
    r"|[，,；;]\s*(?=(?:请|记得|别忘了|不要忘了|千万别忘了|麻烦)(?:你)?(?:提醒|帮|记))"
    r"|[，,；;]\s*(?=[^，,。]{1,8}的时候(?:请|别|不要|要|必须|一定|都))"
    r"|[，,；;]\s*(?:而且|并且|同时)?\s*(?=(?:平时|通常|一般|每天|也|还|最近|现在|如今|一直)(?:很|都|也|还|比较|更|只)?"
    r"(?:喜欢|爱|讨厌|不喜欢|用|在|住|是|会|要|习惯|改|换))"
    # "我改喝豆浆了，不喝牛奶了": a habit given up is a statement of its own, with the same subject.
    r"|[，,；;]\s*(?=(?:不再|再也不|已经不|不(?:喝|吃|抽|用|玩|看|听|穿|开))[^，,。；;]*了)"
)


_ZH_REQUEST_LEAD = re.compile(
    r"^(?:请|记得|别忘了|不要忘了|千万别忘了|麻烦)|^[^，,。]{1,8}的时候(?:请|别|不要|要|必须|一定|都)"
)


def split_clauses(sentence: str) -> list[str]:
    chinese = is_chinese(sentence)
    pieces = [c.strip(" ,;，；") for c in (_ZH_CLAUSE if chinese else _EN_CLAUSE).split(sentence)]
    out: list[str] = []
    pending = ""
    for piece in filter(None, pieces):
        if chinese and not piece.startswith("我") and len(piece) <= 8 and piece is not pieces[-1]:
            # A short lead-in with no subject ("比起茶，我更喜欢咖啡", "明天，我要…") belongs to the next clause.
            pending += piece + "，"
            continue
        if chinese and (out or pending) and not piece.startswith("我") and not _ZH_REQUEST_LEAD.match(piece):
            # "我住在杭州，平时喜欢喝绿茶": the second clause shares the first one's subject.
            piece = "我" + piece
        out.append(pending + piece)
        pending = ""
    if pending:
        out.append(pending.rstrip("，"))
    return out


_CONTRACTIONS = [
    (re.compile(r"\b([Ii])\s*'m\b"), r"\1 am"),
    (re.compile(r"^im\s", re.I), "I am "),
    (re.compile(r"\b([Ii])\s*'ve\b"), r"\1 have"),
    (re.compile(r"\b([Ii])\s*'ll\b"), r"\1 will"),
    (re.compile(r"\b([Ii])\s*'d\b"), r"\1 would"),
    (re.compile(r"\b([Ww]e)\s*'re\b"), r"\1 are"),
    (re.compile(r"\b([Ww]e)\s*'ve\b"), r"\1 have"),
    (re.compile(r"\b([Ww]e)\s*'ll\b"), r"\1 will"),
]


def expand_contractions(text: str) -> str:
    """ "I'm" → "I am" (and the like) so that patterns need only one spelling."""
    for pattern, repl in _CONTRACTIONS:
        text = pattern.sub(repl, text)
    return text


def strip_end(text: str) -> str:
    return text.strip().rstrip(".!。！~～ ").strip()


# ---------------------------------------------------------------------------------------------
# English: first person → third person
# ---------------------------------------------------------------------------------------------

_MODALS = {"can", "could", "will", "would", "shall", "should", "may", "might", "must", "ought", "used"}
_IRREGULAR = {"have": "has", "be": "is", "do": "does", "go": "goes", "am": "is", "are": "is"}
_PAST = {
    "went",
    "got",
    "made",
    "took",
    "had",
    "was",
    "were",
    "did",
    "said",
    "came",
    "saw",
    "bought",
    "began",
    "left",
    "found",
    "thought",
    "knew",
    "ran",
    "wrote",
    "spent",
    "lost",
    "won",
    "met",
    "felt",
    "sold",
    "sent",
    "built",
    "kept",
    "told",
    "became",
    "gave",
    "chose",
    "broke",
    "drove",
    "flew",
    "forgot",
    "grew",
    "heard",
    "held",
    "led",
    "paid",
    "put",
    "set",
    "sat",
    "slept",
    "spoke",
    "stood",
    "taught",
    "understood",
    "wore",
    "quit",
}
# Adverbs that may sit between "I" and the verb ("I really like"); the filler ones are dropped.
FILLER_ADVERBS = {
    "really",
    "actually",
    "just",
    "now",
    "still",
    "honestly",
    "personally",
    "definitely",
    "totally",
    "absolutely",
    "truly",
    "genuinely",
    "much",
    "kinda",
    "also",
    "certainly",
    "seriously",
}
KEPT_ADVERBS = {
    "finally",
    "recently",
    "officially",
    "successfully",
    "eventually",
    "usually",
    "always",
    "normally",
    "typically",
    "often",
    "sometimes",
    "generally",
    "mostly",
    "mainly",
    "rarely",
    "never",
    "currently",
    "already",
    "even",
    "only",
    "strongly",
    "especially",
    "occasionally",
    "frequently",
    "regularly",
    "constantly",
    "primarily",
}
ADVERBS = FILLER_ADVERBS | KEPT_ADVERBS
ADVERB_RUN = (
    r"(?:(?:" + "|".join(sorted(ADVERBS | {"kind of", "sort of", "very much"}, key=len, reverse=True)) + r")\s+)*"
)


def conjugate(verb: str) -> str:
    """Third person singular of a present-tense verb; modals and past forms stay as they are."""
    lower = verb.lower()
    past = lower.endswith("ed") and not lower.endswith("eed")
    if lower in _MODALS or lower in _PAST or past or not lower.isalpha():
        return verb
    if lower in _IRREGULAR:
        return _IRREGULAR[lower]
    if re.search(r"(?:s|x|z|ch|sh|o)$", lower):
        return verb + "es"
    if re.search(r"[^aeiou]y$", lower):
        return verb[:-1] + "ies"
    return verb + "s"


_LEADS: list[tuple[re.Pattern, str]] = [
    (re.compile(r"^i\s*'m\s+not\b|^i am not\b|^im not\b", re.I), "User is not"),
    (re.compile(r"^i\s*'m\b|^i am\b|^im\b", re.I), "User is"),
    (re.compile(r"^i was\b", re.I), "User was"),
    (re.compile(r"^i\s*'ve\b|^i have\b", re.I), "User has"),
    (re.compile(r"^i had\b", re.I), "User had"),
    (re.compile(r"^i\s*'d\b", re.I), "User would"),
    (re.compile(r"^i\s*'ll\b", re.I), "User will"),
    (re.compile(r"^i (?:don't|dont)\b", re.I), "User doesn't"),
    (re.compile(r"^i do not\b", re.I), "User does not"),
    (re.compile(r"^we\s*'re\b|^we are\b", re.I), "User's team is"),
    (re.compile(r"^we\s*'ve\b|^we have\b", re.I), "User's team has"),
    (re.compile(r"^we\s*'ll\b", re.I), "User's team will"),
    (re.compile(r"^we (?:don't|dont)\b", re.I), "User's team doesn't"),
    (re.compile(r"^my\b", re.I), "User's"),
]
_LEAD_VERB = re.compile(r"^(?P<who>i|we)\s+(?P<advs>" + ADVERB_RUN + r")(?P<verb>[a-z]+)\b", re.I)

_REST = [
    (re.compile(r"\bI\s*'m\b|\bI am\b"), "they are"),
    (re.compile(r"\bI was\b"), "they were"),
    (re.compile(r"\bI\s*'ve\b"), "they have"),
    (re.compile(r"\bI\s*'ll\b"), "they will"),
    (re.compile(r"\bI\s*'d\b"), "they would"),
    (re.compile(r"\bI\b"), "they"),
    (re.compile(r"\bi\b(?!\.)"), "they"),
    (re.compile(r"\b[Mm]yself\b"), "themselves"),
    (re.compile(r"\b[Mm]ine\b"), "theirs"),
    (re.compile(r"\b[Mm]y\b"), "their"),
    (re.compile(r"\b[Mm]e\b"), "them"),
    (re.compile(r"\b[Oo]urselves\b"), "themselves"),
    (re.compile(r"\b[Oo]ur\b"), "their"),
    (re.compile(r"\bus\b"), "them"),
    (re.compile(r"\bwe\b"), "they"),
]


def third_person_rest(text: str) -> str:
    """Pronouns after the subject: "my laptop" → "their laptop", "I work" → "they work"."""
    for pattern, repl in _REST:
        text = pattern.sub(repl, text)
    return text


def drop_fillers(advs: str) -> str:
    kept = [w for w in advs.split() if w.lower() not in FILLER_ADVERBS and w.lower() not in {"kind", "sort", "of"}]
    return " ".join(kept)


# What a couple or a household has together: "our anniversary", "our kids", "our flat" are the
# user's own, where "our sprint" or "our API" are their team's.
_HOUSEHOLD_THINGS = re.compile(
    r"^(?:(?:new|old|little|first|second|oldest|youngest|eldest|older|younger|two|three|four|lovely|current|family|"
    r"wedding|tenth|\d+\w*) )*(?:wedding|anniversary|marriage|honeymoon|engagement|kids?|children|child|sons?|"
    r"daughters?|baby|babies|twins|toddler|dogs?|cats?|puppy|kitten|pets?|house|home|apartment|flat|rent|mortgage|"
    r"landlord|garden|yard|car|family|parents|neighbou?rs?|neighbou?rhood|holiday|vacation|trip|flight|bedroom|"
    r"kitchen|fridge|wifi|wi-fi|router|street|town|village|nanny|babysitter|pediatrician|vet|lease|couch|sofa|"
    r"relationship|date night|nursery|school run|daycare)\b",
    re.I,
)


def our_owner(rest: str) -> str:
    """Whose thing "our …" names, given the words after "our": the user's for what a household
    has together (anniversary, kids, flat), else the user's team's."""
    return "User's" if _HOUSEHOLD_THINGS.match(rest.strip()) else "User's team's"


def third_person(clause: str) -> str:
    """Rewrite a first-person clause as a statement about the user ("I really like tea" → "User likes
    tea"). Clauses that do not start in the first person get their pronouns rewritten only."""
    clause = strip_end(clause)
    our = re.match(r"our\b", clause, re.I)
    if our:
        return our_owner(clause[our.end() :]) + third_person_rest(clause[our.end() :])
    for pattern, lead in _LEADS:
        m = pattern.match(clause)
        if m:
            return lead + third_person_rest(clause[m.end() :])
    m = _LEAD_VERB.match(clause)
    if m:
        advs = drop_fillers(m["advs"])
        verb = conjugate(m["verb"]) if m["who"].lower() == "i" else m["verb"]
        who = "User" if m["who"].lower() == "i" else "User's team"
        if m["who"].lower() == "we":
            verb = conjugate(m["verb"])
        head = " ".join(p for p in (who, advs, verb) if p)
        return head + third_person_rest(clause[m.end() :])
    return capitalize(third_person_rest(clause))


def capitalize(text: str) -> str:
    return text[:1].upper() + text[1:] if text else text


# ---------------------------------------------------------------------------------------------
# Chinese: 我 → 用户
# ---------------------------------------------------------------------------------------------

_ZH_FILLERS = re.compile(r"^(?:其实|说实话|老实说|那个|嗯|哦|啊|对了|顺便说一下|顺便说|顺便|另外|还有|然后)[，,]?\s*")


def zh_third_person(clause: str) -> str:
    clause = _ZH_FILLERS.sub("", strip_zh_end(clause))
    clause = clause.replace("我们", "用户").replace("我", "用户")
    return clause


def strip_zh_end(text: str) -> str:
    text = strip_end(text).rstrip("。！～~")
    return re.sub(r"(?<=[\u4e00-\u9fff])(?:了吧|吧|哦|啊|呀|啦|喔|哈)$", "", text)


# ---------------------------------------------------------------------------------------------
# Slot keys
# ---------------------------------------------------------------------------------------------

_ARTICLES = re.compile(r"^(?:the|a|an|my|our|their|your|user's|some|this|that)\s+", re.I)
_ZH_MEASURE = re.compile(r"^(?:一个|一只|一条|一位|一名|一台|一辆|一家|一种|这个|那个|个|只|条|位|名)")


def slot_key(text: str) -> str:
    """Canonical subject / predicate: lower case, single spaces, no leading article or possessive,
    no surrounding punctuation. Equal keys mean the same slot."""
    text = normalize(text).casefold().replace("’", "'")
    text = text.strip(" .,;:!?\"'()[]{}" + _CJK_PUNCT)
    previous = None
    while previous != text:
        previous = text
        text = _ARTICLES.sub("", text)
        text = _ZH_MEASURE.sub("", text)
    return text.strip()


def value_text(text: str) -> str:
    return strip_end(normalize(text)).strip(" \"'“”「」" + "，。")
