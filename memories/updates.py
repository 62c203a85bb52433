"""Knowledge updates: what a new statement says no longer holds, and which values it carries.

Two questions the merge decision asks of every incoming memory, in English and Chinese:
- does it announce a change ("quit coffee", "switched from vim to VS Code", "moved to Lisbon",
  "these days only drinks green tea", "不再喝咖啡", "搬到上海", "换成绿茶")? Then the memories stating
  the old state are superseded, however far their vectors are from the new sentence;
- which values does it carry (numbers, identifiers, dates, names)? Two sentences that differ only in
  a value are different facts ("db-01 … 10.0.0.11" / "db-02 … 10.0.0.12"), or the same fact with a
  new value ("my locker code is 9902" after "… is 4471"), never a duplicate to drop.
"""

import re
from collections.abc import Callable
from dataclasses import dataclass

from memories.contradiction import negated
from memories.extraction.lexicon import domain_of
from memories.extraction.vocabulary import OCCUPATIONS, ZH_OCCUPATION_SUFFIXES
from memory_project.text import cjk_ngrams

# Identifiers and numbers: anything with a digit ("db-01", "10.0.0.11", "9902", "2024-05-06", "3pm").
_NUMBERISH = re.compile(r"[A-Za-z0-9][\w.:/@+-]*\d[\w.:/@+-]*|\d+")
# Names: capitalised words after the first word ("Lisbon", "VS Code"); the subject words are not values.
_NAME = re.compile(r"(?<![\w'])[A-Z][\w'-]*")
_QUOTED = re.compile(r"[\"“«'‘]([^\"”»'’]{1,80})[\"”»'’]")
_CJK_DIGITS = re.compile(r"[0-9０-９]+")
_NOT_NAMES = {"i", "user", "user's", "the", "a", "an", "my", "he", "she", "they", "we", "it", "this", "that"}
_MONTHS = (
    "january february march april may june july august september october november december "
    "jan feb mar apr jun jul aug sep sept oct nov dec monday tuesday wednesday thursday friday saturday sunday"
).split()


def values(text: str, *, sentence: bool = True) -> frozenset[str]:
    """The values a sentence carries, case-folded: numbers and identifiers, quoted strings, names
    (after the first word, a sentence's subject; with sentence=False the text is a value itself,
    whose first word is a name too: "Chrome")."""
    found = {m.group(0).rstrip(".:").casefold() for m in _NUMBERISH.finditer(text)}
    found |= {m.group(1).strip().casefold() for m in _QUOTED.finditer(text)}
    words = text.split()
    for m in _NAME.finditer(" ".join(words[1:] if sentence else words)):
        word = re.sub(r"'s$", "", m.group(0).rstrip(".,;:!?")).casefold()
        if word not in _NOT_NAMES:
            found.add(word)
    found |= {d.casefold() for d in _CJK_DIGITS.findall(text)}
    return frozenset(v for v in found if v)


def same_facts(a: str, b: str) -> bool:
    """Could either text stand for the other? Only with the same values and the same polarity."""
    return values(a) == values(b) and negated(a) == negated(b)


# What says a value is the current one without changing which thing it is: "new home address".
_QUALIFIER = re.compile(r"\b(?:new|current|latest|updated|now|nowadays|currently)\b\s*", re.I)
# A clause of its own after the statement ("…, they just moved"): why, not what.
_AFTERTHOUGHT = re.compile(r"\s*[,;]\s+(?:they|we|he|she|i)\b.*$", re.I)


def frame(text: str) -> str:
    """The sentence with its values masked: "server <v> has ip address <v>"."""
    masked = _NUMBERISH.sub("<v>", _QUALIFIER.sub("", _AFTERTHOUGHT.sub("", text)))
    words = masked.split()
    if len(words) > 1:
        masked = words[0] + " " + _NAME.sub("<v>", " ".join(words[1:]))
    return re.sub(r"\s+", " ", masked).strip(" .!").casefold()


# Where the subject of a statement ends: values before it name *which* thing (db-01), values after
# it are *what* that thing is (10.0.0.11).
_EN_VERB = re.compile(
    r"\s(?:is|are|was|were|has|have|had|uses|use|lives|live|works|work|prefers|prefer|likes|like|loves|"
    r"love|owns|own|drives|drive|reads|read|runs|run|costs|cost|equals|means|weighs|measures|holds|"
    r"hosts|points to|opens|starts|ends|=)\s",
    re.I,
)
_ZH_VERB = re.compile(r"是|在|有|为|住|叫|用|喜欢|等于")
# Events accumulate ("visited Paris in 2019", "visited Rome in 2021"): a new one is another fact.
_EVENT_VERBS = (
    "visited went met saw bought attended ran ate took did got made read watched finished completed started won "
    "lost traveled travelled called wrote sent played joined celebrated hiked flew drove booked paid spent tried "
    "learned learnt built shipped released fixed deployed"
)
_EVENT_VERB = re.compile(r"\b(?:" + "|".join(_EVENT_VERBS.split()) + r")\b", re.I)


def _subject_values(text: str) -> frozenset[str]:
    """Values naming which thing a statement is about: those before its verb, or, when no verb is
    known, the first value ("Employee E0005 sits at desk 105": E0005)."""
    match = _EN_VERB.search(text) or _ZH_VERB.search(text)
    if match:
        return values(text[: match.start()])
    first = _NUMBERISH.search(text)
    return frozenset({first.group(0).rstrip(".:").casefold()}) if first else frozenset()


def value_change(old: str, new: str) -> bool | None:
    """Compare two sentences of the same frame. True: the same thing got a new value (a supersede);
    False: they are about different things (two memories); None: not the same frame, or no values."""
    old_values, new_values = values(old), values(new)
    if not (old_values or new_values) or old_values == new_values or frame(old) != frame(new):
        return None
    if _subject_values(old) != _subject_values(new):
        return False  # "db-01 has …" / "db-02 has …": two servers
    if _EVENT_VERB.search(new) and not re.search(r"\b(?:is|are|was|were)\b", new, re.I):
        return False  # another event, not a correction of the first
    return True


# --- update cues ------------------------------------------------------------------------------

_STOP_WORDS = {
    "i", "me", "my", "the", "a", "an", "to", "of", "for", "in", "on", "at", "and", "or", "is", "am", "are",
    "was", "be", "been", "user", "user's", "it", "do", "does", "did", "have", "has", "had", "any", "some",
    "completely", "entirely", "totally", "altogether", "fully", "now", "anymore", "more", "longer",
    "these", "days", "nowadays", "only", "just", "really", "actually", "instead", "since", "ago", "last",
    "this", "that", "year", "month", "week", "recently", "lately", "already", "every", "single", "all", "as",
    "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "few", "several",
    "not", "no", "never", "don't", "doesn't", "didn't", "quit", "stopped", "gave", "up", "switched",
    "moved", "changed", "from", "with", "into", "over", "so", "too", "also", "much", "big", "cup", "lot",
}  # fmt: skip
# Verbs carry the slot, not the value: "drinks green tea" and "drinks espresso" share "drink".
_WORD = re.compile(r"[a-z0-9][a-z0-9'+#.-]*")
# Kinds of a thing: quitting coffee quits the espresso too.
_KIND_OF = {
    "espresso": "coffee", "latte": "coffee", "cappuccino": "coffee", "americano": "coffee",
    "flat white": "coffee", "mocha": "coffee", "macchiato": "coffee", "拿铁": "咖啡", "美式": "咖啡",
    "浓缩咖啡": "咖啡", "cigarette": "smoke", "cigarettes": "smoke", "香烟": "烟",
    "beer": "alcohol", "wine": "alcohol", "whiskey": "alcohol", "啤酒": "酒", "红酒": "酒", "白酒": "酒",
    "steak": "meat", "beef": "meat", "pork": "meat", "chicken": "meat", "bacon": "meat",
    "牛肉": "肉", "猪肉": "肉", "鸡肉": "肉",
}  # fmt: skip


def stem(word: str) -> str:
    """A crude stem that maps the forms of one word together ("lives", "lived", "living" → "liv")."""
    if len(word) > 4 and word.endswith("ies"):
        word = word[:-3] + "y"
    elif len(word) > 4 and re.search(r"(?:s|x|z|ch|sh)es$", word):
        word = word[:-2]
    else:
        for suffix in ("ing", "ed", "s"):
            if len(word) > len(suffix) + 2 and word.endswith(suffix) and not word.endswith("ss"):
                word = word[: -len(suffix)]
                break
    if len(word) > 3 and word[-1] == word[-2] and word[-1] not in "aeiouls":
        word = word[:-1]  # "stopp(ed)", "runn(ing)"
    if len(word) > 2 and word.endswith("e") and not word.endswith("ee"):
        word = word[:-1]
    return word


_VERBS = (
    "drink eat use like love live work play go make take prefer enjoy want need get keep run drive own read "
    "watch listen wear study smoke do have"
)
_COMMON_VERBS = {stem(v) for v in _VERBS.split()} | set(_VERBS.split())


def terms(text: str) -> set[str]:
    """Content terms of a phrase: stemmed English words without fillers, CJK character bigrams, and
    the kind each term belongs to ("espresso" also counts as "coffee")."""
    lowered = text.casefold().replace("’", "'")
    found = {stem(w.strip(".'")) for w in _WORD.findall(lowered) if w.strip(".'") not in _STOP_WORDS}
    for kind, parent in _KIND_OF.items():
        if kind in lowered:
            found.add(stem(parent) if parent.isascii() else parent)
    cjk = "".join(ch if "\u4e00" <= ch <= "\u9fff" else " " for ch in _CJK_NOISE.sub(" ", lowered))
    found |= set(cjk_ngrams(cjk, for_query=True).split())
    for kind, parent in _KIND_OF.items():
        if not kind.isascii() and kind in text:
            found.add(parent)
    return {t for t in found if t and t not in _STOP_WORDS}


_CJK_NOISE = re.compile(
    r"用户|不再|已经|现在|只|了|戒掉|戒了|戒|搬到|搬去|换成|改成|改用|再也不|不|从|都|每天|早上|喜欢"
)


def key_terms(text: str) -> set[str]:
    """The terms that name the thing itself, verbs left out: "drink coffee" → {"coffee"}."""
    found = terms(text)
    nouns = {t for t in found if t not in _COMMON_VERBS}
    return nouns or found


_ZH_VERB_LEAD = re.compile(r"^(?:喝|吃|抽|用|玩|看|听|去|在|做|开)+")


def names(phrase: str, text: str) -> bool:
    """Does `text` name the thing `phrase` is about ("coffee" in "loves coffee", "烟" in "每天抽烟")?"""
    if key_terms(phrase) & terms(text):
        return True
    core = _ZH_VERB_LEAD.sub("", phrase.strip()).rstrip("了")
    return bool(core) and not core.isascii() and (core in text or _KIND_OF.get(core, "\0") in text)


# Verbs that relate a person to a thing otherwise than by taste or habit: quitting coffee does not end
# owning a coffee shop or working at a coffee roaster.
_OTHER_RELATIONS = {
    stem(v)
    for v in "own run work build sell visit open manage found write teach study research sponsor invest rent".split()
}


def other_relation(phrase: str, text: str) -> bool:
    """Is `text` about the thing `phrase` names through an unrelated verb ("owns a coffee shop")?"""
    verb = head_verb(text)
    return verb in _OTHER_RELATIONS and verb != head_verb(phrase)


def search_words(phrase: str) -> set[str]:
    """Words to look a retracted value up by, its kinds included ("coffee" → "espresso", "latte", …)."""
    words = key_terms(phrase)
    core = _ZH_VERB_LEAD.sub("", phrase.strip()).rstrip("了")
    if core and not core.isascii():
        words.add(core)
    return words | {kind for kind, parent in _KIND_OF.items() if parent in words or stem(parent) in words}


# The subject, and the 在 of 现在 ("now"), 正在, 实在: no verb.
_NOT_VERBS = re.compile(r"用户|现在|正在|实在|存在")


def head_verb(text: str) -> str:
    """The statement's main verb, stemmed, after its subject and adverbs ("User now only drinks …" → drink)."""
    words = [w for w in _WORD.findall(text.casefold()) if w not in _STOP_WORDS or w in ("has", "have", "is")]
    for word in words:
        if word in _NOT_NAMES or word in ("now", "only", "mostly", "usually", "always"):
            continue
        return stem(word)
    body = _NOT_VERBS.sub("", text)
    for zh in ("喝", "吃", "住", "用", "在", "玩", "听", "看", "开", "喜欢", "爱"):
        if zh in body:
            return zh
    return ""


@dataclass(frozen=True)
class Update:
    """A statement that something changed. `old` is what no longer holds ("" when unnamed), `new` what
    holds now ("" for a plain stop), `slot` what changed when the verb says it ("residence", "employer")."""

    kind: str  # stop | leave | switch | now
    old: str = ""
    new: str = ""
    slot: str = ""


def _en_switch_slot(said: str) -> str:
    return "residence" if re.search(r"\bmoved\b|\brelocated\b", said, re.I) else ""


def _zh_switch_slot(said: str) -> str:
    return "residence" if "搬" in said else ("employer" if "跳槽" in said else "")


@dataclass(frozen=True)
class _Cue:
    """A wording that announces a change: the kind of update, and the slot it changes (fixed, or read
    from the words matched). Its "old" and "new" groups are the values."""

    pattern: re.Pattern[str]
    kind: str
    slot: str | Callable[[str], str] = ""


def _cue(pattern: str, kind: str, slot: str | Callable[[str], str] = "", flags: int = re.I) -> _Cue:
    return _Cue(re.compile(pattern, flags), kind, slot)


# In the order they are tried: a switch names both values, a stop only the old one, a "now" neither.
_CUES = [
    _cue(
        r"\b(?:switched|switches|changed|changes|moved|moves|migrated|migrates|went|converted|upgraded|"
        r"transitioned|relocated)\s+(?:over\s+)?from\s+(?P<old>.+?)\s+(?:to|into|for)\s+(?P<new>.+)",
        "switch",
        _en_switch_slot,
    ),
    _cue(r"\breplaced\s+(?P<old>.+?)\s+with\s+(?P<new>.+)", "switch", _en_switch_slot),
    _cue(r"\b(?:swapped|traded|exchanged)\s+(?P<old>.+?)\s+for\s+(?P<new>.+)", "switch", _en_switch_slot),
    _cue(
        r"\b(?:switched|switches|changed|changes|migrated|migrates|moved over|converted)\s+to\s+(?P<new>.+?)"
        r"(?:\s+(?:instead of|rather than|in place of)\s+(?P<old>.+))?$",
        "switch",
        _en_switch_slot,
    ),
    _cue(
        r"\b(?:uses|use|drinks|drink|prefers|prefer|eats|eat)\s+(?P<new>.+?)\s+"
        r"(?:instead of|rather than)\s+(?P<old>.+)",
        "switch",
        _en_switch_slot,
    ),
    _cue(
        r"从(?P<old>.+?)(?:换成了?|换到了?|改成了?|改为|改用|搬到了?|搬去了?|转到了?|跳槽到了?)(?P<new>.+)",
        "switch",
        _zh_switch_slot,
        flags=0,
    ),
    _cue(
        r"\b(?:moved|moves|relocated|relocates|has moved|just moved)\s+(?:back\s+)?to\s+(?P<new>.+)",
        "switch",
        "residence",
    ),
    _cue(
        r"(?:搬到了?|搬去了?|搬家到了?|移居到?了?)(?P<new>[^，,]+?)(?:住|居住|生活|定居)?了?(?:[，,].*)?$",
        "switch",
        "residence",
        flags=0,
    ),
    _cue(r"在(?P<new>[^，,。]{2,8}?)(?:安顿下来|定居|落户|安家)", "switch", "residence", flags=0),
    _cue(
        r"\b(?:joined|joins|started (?:a new job |working )?at|now works (?:at|for)|started working for|"
        r"took an? [\w -]{0,30}?job (?:as [\w -]+? )?at|was hired by|got a job at|started as (?:an? )?[\w -]+? at|"
        r"accepted (?:an|a|the) (?:job )?offer from)\s+(?P<new>.+)",
        "switch",
        "employer",
    ),
    _cue(r"(?:跳槽到了?|入职了?|加入了?|去了)(?P<new>.+?)(?:工作|上班)?$", "switch", "employer", flags=0),
    # "下周一去腾讯报到": reporting for duty somewhere is starting there.
    # (Not someone the user takes along, "带儿子去学校报到", nor a school or a hospital.)
    _cue(
        r"^[^带陪送]*?(?:去|到|在)(?P<new>(?!学校|大学|学院|幼儿园|医院|派出所|社区)"
        r"[^，,。去到在]{2,12}?)(?:入职)?报到",
        "switch",
        "employer",
        flags=0,
    ),
    _cue(r"(?:换成了?|改成了?|改为|改用了?|换用了?|改(?:喝|吃|抽|穿|玩|听|看|开|去)了?)(?P<new>.+)", "switch", flags=0),
    # Leaving an employer or a place ends working or living there (and nothing else said of it).
    _cue(
        r"\b(?:left|leaves|quit)\s+(?:(?:my|his|her|their)\s+(?:job|position|role)\s+at\s+)?"
        r"(?P<old>[A-Z][\w&.'-]*(?:\s+[A-Z][\w&.'-]*)*)",
        "leave",
        flags=0,
    ),
    _cue(r"从(?P<old>[^，。,]+?)离职|离开了?(?P<old2>[^，。,了]+?)(?:公司)?(?=了?[，。,]|了?$)", "leave", flags=0),
    _cue(
        r"\b(?:has\s+|have\s+)?(?:quit|quits|stopped|stops|gave up|given up|gives up|give up|dropped|ditched|"
        r"cancell?ed)\s+(?P<old>.+)",
        "stop",
    ),
    _cue(r"\bno longer\s+(?P<old>.+)", "stop"),
    # "done with the Kindle", "off sushi now": what is said to be over.
    _cue(r"\b(?:is|am|are)\s+(?:so\s+|totally\s+|completely\s+)?(?:done with|through with|off)\s+(?P<old>.+)", "stop"),
    # "I changed my phone number, the new one is …", "我换了手机号": the old value of it no longer holds.
    _cue(
        r"\b(?:changed|changes|replaced)\s+(?:my|his|her|their)\s+(?!mind\b)(?P<old>[a-z][a-z -]{2,30}?)"
        r"(?=\s*[,.;]|\s+(?:and|because|last|this|in|on|after|to)\b|$)",
        "switch",
    ),
    _cue(r"换了(?!一)(?P<old>[^，。,了]{2,8}?)(?=[，。,]|$)", "switch", flags=0),
    _cue(
        r"\b(?:doesn't|does not|don't|do not|isn't|is not|aren't|are not|won't|can't|cannot)\s+(?P<old>.+?)\s+"
        r"(?:anymore|any more|any longer|these days|nowadays)\b",
        "stop",
    ),
    _cue(r"\bnot\s+(?P<old>.+?)\s+(?:anymore|any more|any longer)\b", "stop"),
    _cue(r"(?:不再|再也不|已经不|早就不|戒掉了?|戒了)(?P<old>.+)", "stop", flags=0),
    _cue(r"不(?P<old>[\u4e00-\u9fff].+?)了$", "stop", flags=0),
    _cue(
        r"\b(?:now|nowadays|these days|currently|from now on)\b|\bonly\s+\w+s?\b.*\b(?:now|these days|nowadays)\b",
        "now",
    ),
    _cue(r"现在(?:只|都|改|更喜欢|更爱|每天只|一般只|在|住)|如今|这些天只|最近只", "now", flags=0),
]


_TRAILER = re.compile(
    r"\s*(?:,|;|\.|!|\bnow\b|\bthese days\b|\bnowadays\b|\binstead\b|\banymore\b|\bcompletely\b|\blast\b.*"
    r"|\b(?:a|an|one|two|three|four|five|six|several|few|couple of)\s+(?:days?|weeks?|months?|years?)\b.*"
    r"|\b(?:in|on|this|since)\s+(?:january|february|march|april|may|june|july|august|september|october|"
    r"november|december|spring|summer|autumn|fall|winter)\b.*|\byesterday\b.*|\btoday\b.*|\brecently\b.*"
    r"|\bin \d{4}\b.*|\bsince\b.*|\bbecause\b.*|\bafter\b.*|\bas an?\b.*|了$|[。，；！,])[^。，；！,]*$",
    re.I,
)


def _clean(value: str) -> str:
    return _TRAILER.sub("", value.strip()).strip(" ,.;!。，")


_RESIDENCE = re.compile(r"\b(?:lives?|living|resides?|based|moved|relocated|home)\b|住|搬|(?<!老)家在", re.I)
_EMPLOYER = re.compile(
    r"\b(?:works?|working|employed) (?:at|for)\b|\b(?:job at|joined|hired by)\b|在.+(?:工作|上班)|入职|跳槽"
    # "在字节跳动做产品经理": a role somewhere (not cooking at home).
    r"|在(?!家)[^，。]{2,12}(?:当|任|做)(?!饭|菜|作业|运动|家务)",
    re.I,
)
# "is an auditor at Deloitte": a role at a named organisation.
_ROLE_AT = re.compile(
    r"\b(?:is|am|are)\s+(?:an?\s+)?(?!(?:an?|regular|customer|guest|member|patient|visitor)\b)[a-z][\w-]*"
    r"(?:\s+[a-z][\w-]*)?\s+(?:at|for)\s+[A-Z]"
)


def update_of(text: str) -> Update | None:
    """The change a statement announces, if it announces one."""
    lowered = text.replace("’", "'")
    for cue in _CUES:
        m = cue.pattern.search(lowered)
        if m:
            found = m.groupdict()
            slot = cue.slot(m.group(0)) if callable(cue.slot) else cue.slot
            return Update(
                cue.kind,
                old=_clean(found.get("old") or found.get("old2") or ""),
                new=_clean(found.get("new") or ""),
                slot=slot,
            )
    return Update("now") if exclusive(lowered) else None


# "these days only …": the new value is the only one.
_EN_NOW_ONLY = re.compile(
    r"\b(?:these days|nowadays|now)\b.*\bonly\b|\bonly\b.*\b(?:these days|nowadays|now)\b"
    # "only drinks green tea": a habit with one value excludes the others, whenever it was said.
    r"|\bonly (?:drinks?|eats?|uses?|wears?|reads?|listens? to|watches|plays?|takes?|buys?|cooks?)\b"
    # "now prefers …": a preference stated as the current one displaces the one it was compared with.
    r"|\b(?:now|these days|nowadays)\s+prefers?\b|\bprefers?\b.*\b(?:now|these days|nowadays)\b",
    re.I,
)


def exclusive(text: str) -> bool:
    """ "these days only …", "现在只…", "现在更喜欢…": the new value is the only one."""
    return bool(
        _EN_NOW_ONLY.search(text) or re.search(r"(?:现在|如今|最近)(?:每天|一般)?(?:只|更喜欢|更爱)|这些天只", text)
    )


# "User is a nurse", "用户是中学数学老师": what the user does for a living, said without where.
_EN_OCCUPATION = re.compile(
    r"^user (?:is|works as) (?:an? )?(?:[a-z-]+ ){0,3}(?:"
    + "|".join(sorted(OCCUPATIONS, key=len, reverse=True))
    + r")\b",
    re.I,
)
_ZH_OCCUPATION = re.compile(
    r"^用户(?:现在|目前)?是(?:一名|一个|个)?[^，,。]{0,10}?(?:" + "|".join(ZH_OCCUPATION_SUFFIXES) + r")"
)
# A role the statement gives at the place it names: "as a designer", "做课程研发", "当护士".
_ROLE = re.compile(r"\bas an? [a-z]|\b(?:working|work|works) as\b|(?:做|当|任|担任)[\u4e00-\u9fffA-Za-z]{2,}", re.I)


def occupation_of(text: str) -> bool:
    """Whether the statement says what the user does for a living."""
    return bool(_EN_OCCUPATION.match(text) or _ZH_OCCUPATION.match(text))


def names_role(text: str) -> bool:
    """Whether the statement names the role the user has where it says they work."""
    return bool(_ROLE.search(text))


def slot_of(text: str) -> str:
    if _RESIDENCE.search(text):
        return "residence"
    if _EMPLOYER.search(text) or _ROLE_AT.search(text):
        return "employer"
    return ""


def domain(text: str) -> str:
    """The lexicon's domain of the thing named ("VS Code", "vim" → editor), ASCII names inside Chinese too."""
    return domain_of(text) or domain_of(re.sub(r"[\u3400-\u9fff]+", " ", text))
