"""English rules for preferences ("my favorite color is blue", "I prefer tea over coffee",
"I love hiking") and habits ("every morning I run 5k")."""

import re

from memories.extraction import lexicon
from memories.extraction.candidates import MEDIUM, Ctx, make, name_kind, tool_entities
from memories.extraction.english.words import ADV, DETERMINERS, clean_value, first_word
from memories.extraction.phrasing import drop_fillers, our_owner, slot_key, third_person, third_person_rest
from memories.extraction.rules import FirstMatch
from memories.providers.llm_types import CandidateMemory

# Preferences ----------------------------------------------------------------------------------


def preference_subject(value: str, alt: str = "") -> str:
    domain = lexicon.domain_of(value) or (lexicon.domain_of(alt) if alt else "")
    if domain:
        return f"{domain} preference"
    if alt:
        return " or ".join(sorted([slot_key(value), slot_key(alt)]))
    words = slot_key(value).split()
    return f"{words[-1]} preference" if words else ""


favorite = FirstMatch(re.I)


@favorite.rule(
    r"^(?P<who>my|our) (?:absolute |all[- ]time |personal )?fav(?:ou?rite|e) (?P<attr>[\w' -]{2,40}?) "
    r"(?:is|are|has to be|would be|was|has always been)\s+(?P<val>.+)$"
)
def _my_favorite(m: re.Match, clause: str, ctx: Ctx) -> CandidateMemory | None:
    attr, val = m["attr"].strip().lower(), clean_value(third_person_rest(m["val"]))
    owner = "User's" if m["who"].lower() == "my" else our_owner(attr)
    return _favorite_candidate(ctx, owner, attr, val, capitalised_is_name=True)


@favorite.rule(
    r"^(?P<val>[\w' .+#-]{2,40}?) (?:is|are) (?:definitely |probably )?my (?:absolute |all[- ]time )?"
    r"fav(?:ou?rite|e)(?: (?P<attr>[\w' -]{2,40}))?$"
)
def _favorite_named_first(m: re.Match, clause: str, ctx: Ctx) -> CandidateMemory | None:
    if first_word(m["val"]) in DETERMINERS | {"i", "that", "it", "this"}:
        return None
    val = clean_value(m["val"])
    domain = lexicon.domain_of(val)
    if domain and domain not in lexicon.TOOL_DOMAINS and val[1:] == val[1:].lower():
        # Capitalised only because it starts the sentence ("Blue is my favorite color").
        val = val[:1].lower() + val[1:]
    attr = (m["attr"] or domain or "thing").strip().lower()
    return _favorite_candidate(ctx, "User's", attr, val, capitalised_is_name=False)


def _favorite_candidate(
    ctx: Ctx, owner: str, attr: str, val: str, *, capitalised_is_name: bool
) -> CandidateMemory | None:
    if not val:
        return None
    kind = "tool" if lexicon.domain_of(val) in lexicon.TOOL_DOMAINS else name_kind(attr)
    entities = [(val, kind)] if kind != "other" or (val[:1].isupper() and capitalised_is_name) else []
    return make(
        ctx,
        f"{owner} favorite {attr} is {val}",
        "preference",
        MEDIUM,
        subject=f"favorite {attr}",
        predicate="is",
        value=val,
        entities=entities,
    )


prefer = FirstMatch(re.I)


@prefer.rule(
    r"^i (?P<advs>" + ADV + r")(?:prefer|would prefer|'d prefer) to (?P<act>.+?)"
    r"(?:\s+(?:rather than|instead of|over|than) (?P<alt>.+))?$"
)
def _prefer_to(m: re.Match, clause: str, ctx: Ctx) -> CandidateMemory:
    act = clean_value(third_person_rest(m["act"]))
    alt = clean_value(third_person_rest(m["alt"])) if m["alt"] else ""
    advs = drop_fillers(m["advs"])
    content = f"User {advs + ' ' if advs else ''}prefers to {act}" + (f" rather than {alt}" if alt else "")
    return _preference(ctx, content, act, alt)


@prefer.rule(
    r"^i (?P<advs>" + ADV + r")(?P<verb>prefer|would prefer|'d prefer|would rather have|'d rather have|would rather|"
    r"'d rather)\s+(?P<val>.+?)(?:\s+(?P<conn>over|to|rather than|instead of|than|more than) (?P<alt>.+))?$"
)
def _prefer(m: re.Match, clause: str, ctx: Ctx) -> CandidateMemory | None:
    value, alt = m["val"], m["alt"] or ""
    if m["conn"] and m["conn"].lower() == "to" and (value.endswith("ing") or len(alt.split()) > 4):
        # "I prefer going to the gym": "to" is not the comparison here.
        value, alt = f"{value} to {alt}", ""
    value, alt = clean_value(third_person_rest(value)), clean_value(third_person_rest(alt)) if alt else ""
    if not value or first_word(value) in {"it", "that", "this", "them", "not"}:
        return None
    advs = drop_fillers(m["advs"])
    if "rather" in m["verb"].lower():
        content = f"User {advs + ' ' if advs else ''}would rather {value}" + (f" than {alt}" if alt else "")
    else:
        content = f"User {advs + ' ' if advs else ''}prefers {value}" + (f" over {alt}" if alt else "")
    return _preference(ctx, content, value, alt)


def _preference(ctx: Ctx, content: str, value: str, alt: str) -> CandidateMemory:
    return make(
        ctx,
        content,
        "preference",
        MEDIUM,
        subject=preference_subject(value, alt),
        predicate="prefers",
        value=value,
        entities=tool_entities(value),
    )


# What the user says and how the memory says it, by whether it is a like or a dislike.
_SENTIMENT_PHRASES = {
    "likes": {
        "like": "likes",
        "love": "loves",
        "enjoy": "enjoys",
        "adore": "adores",
        "am a fan of": "is a fan of",
        "'m a fan of": "is a fan of",
        "am a big fan of": "is a big fan of",
        "'m a big fan of": "is a big fan of",
        "am a huge fan of": "is a huge fan of",
        "'m a huge fan of": "is a huge fan of",
        "am into": "is into",
        "'m into": "is into",
        "stick to": "sticks to",
        "stick with": "sticks with",
    },
    "dislikes": {
        "hate": "hates",
        "dislike": "dislikes",
        "detest": "detests",
        "can't stand": "can't stand",
        "cannot stand": "can't stand",
        "don't like": "doesn't like",
        "do not like": "doesn't like",
        "don't enjoy": "doesn't enjoy",
        "do not enjoy": "doesn't enjoy",
        "don't love": "doesn't love",
        "am not a fan of": "is not a fan of",
        "'m not a fan of": "is not a fan of",
        "am not into": "is not into",
        "'m not into": "is not into",
        "no longer like": "no longer likes",
    },
}


_LIKES = {
    verb: (phrase, polarity) for polarity, phrases in _SENTIMENT_PHRASES.items() for verb, phrase in phrases.items()
}


_SENTIMENT = re.compile(
    r"^i\s*(?P<advs>"
    + ADV
    + r")(?P<verb>"
    + "|".join(re.escape(v) for v in sorted(_LIKES, key=len, reverse=True))
    + r")"
    r"(?:\s+(?:really|much|at all))?\s+(?P<obj>.+)$",
    re.I,
)


OBJECT_NOT_A_PREFERENCE = re.compile(
    r"^(?:it|that|this|these|those|them|you|your|how|what|when|where|the way you|the idea|the answer|"
    r"the suggestion|the response|to know|to ask|to see|to get|to have you)\b|^to$",
    re.I,
)


sentiment = FirstMatch(re.I)


# "I don’t like …" is read with a plain apostrophe, as the verbs are written.
@sentiment.rule(lambda clause: _SENTIMENT.match(clause.replace("’", "'")))
def _sentiment(m: re.Match, clause: str, ctx: Ctx) -> CandidateMemory | None:
    obj = clean_value(third_person_rest(m["obj"]))
    if not obj or OBJECT_NOT_A_PREFERENCE.match(obj):
        return None
    phrase, polarity = _LIKES[re.sub(r"\s+", " ", m["verb"].lower())]
    advs = drop_fillers(m["advs"])
    if polarity == "dislikes":
        advs = ""
    content = f"User {advs + ' ' if advs else ''}{phrase} {obj}"
    subject = re.sub(r"^to\s+", "", obj)
    return make(
        ctx,
        content,
        "preference",
        MEDIUM,
        subject=subject,
        predicate="opinion",
        value=polarity,
        entities=tool_entities(obj),
    )


# Habits (workflow) --------------------------------------------------------------------------------

# "three times a week", "half a pack a day": how often, said as a rate.
_RATE = r"(?:(?:once|twice|\w+ times|a few times|a couple of times) )?(?:a|per) (?:day|week|month|year)"

_WHEN = (
    r"every (?:single )?(?:morning|day|night|evening|week|weekend|month|year|monday|tuesday|wednesday|thursday|friday|"
    r"saturday|sunday)|each (?:morning|day|week|night)|on (?:mondays|tuesdays|wednesdays|thursdays|fridays|"
    r"saturdays|sundays|weekends|weekdays)|first thing in the morning|before bed|after lunch|daily|weekly"
    r"|" + _RATE
)


habit = FirstMatch(re.I)

# Verbs that are an activity on their own ("I run every morning"); any other needs what it is done to
# or where ("I go like four times a week" says nothing without the gym said before).
_ACTIVITIES = (
    r"(?:run|jog|swim|cycle|bike|walk|hike|meditate|pray|cook|bake|read|write|draw|paint|train|stretch|climb|surf|"
    r"dance|sing|practi[cs]e|study|smoke|drink|work out|exercise|journal|nap|fast)"
)


@habit.rule(
    r"^i (?P<freq>usually|always|normally|typically|generally|often|regularly|frequently|never|rarely|seldom|"
    r"tend to|mostly|sometimes)\s+(?P<act>.+)$"
)
def _usually(m: re.Match, clause: str, ctx: Ctx) -> CandidateMemory | None:
    return _habit_candidate(ctx, m["act"], m["freq"].lower(), third_person(clause))


# Words that say nothing of what a habit is done to: hedges, and pronouns for what was said before.
_HEDGES = {
    "like", "about", "around", "roughly", "maybe", "probably", "usually", "at", "least", "most", "almost", "nearly",
    "them", "it", "that", "those", "these", "one", "ones", "there",
}  # fmt: skip


def _at_times(m: re.Match, clause: str, ctx: Ctx) -> CandidateMemory | None:
    act = re.sub(r"^i\s+", "", m["rest"], flags=re.I)
    verb, *rest = re.sub(r"^(?:(?:\w+ly|just|also|still|even|now|only|already)\s+)+", "", act.lower()).split() or [""]
    if not re.fullmatch(_ACTIVITIES, verb) and all(word in _HEDGES for word in rest):
        return None  # "I go like four times a week": where or what is not said
    if re.fullmatch(_RATE, m["when"], re.I) and re.fullmatch(r"[a-z]+ed|went|took|began|got|made|did|had", verb):
        return None  # "started volunteering … once a month": what happened, read by the event rules
    when = m["when"].lower()
    tail = m.groupdict().get("tail") or ""
    return _habit_candidate(ctx, act, when, f"{third_person(m['rest'])} {when}{third_person_rest(tail)}")


# "Every morning I run 5k".
habit.add(r"^(?P<when>" + _WHEN + r")[,]?\s+(?P<rest>i\s+.+)$", _at_times)


# "I run 5k every morning before work".
habit.add(
    r"^(?P<rest>i\s+(?!am\b|'m\b|was\b)(?:" + _ACTIVITIES + r"\b.*?|[a-z]+\b.+?))\s+(?P<when>" + _WHEN + r")"
    r"(?P<tail>\s+(?:before|after|at|on|in|with|during)\s+[\w' -]{1,30})?$",
    _at_times,
)


def _habit_candidate(ctx: Ctx, act: str, when: str, content: str) -> CandidateMemory | None:
    if OBJECT_NOT_A_PREFERENCE.match(act):
        return None
    return make(
        ctx,
        content,
        "workflow",
        MEDIUM,
        subject=clean_value(third_person_rest(act)),
        predicate="habit",
        value=when,
        entities=tool_entities(act),
    )
