"""English rules for facts about the user: name, job, employer, home, origin, health, age, languages."""

import re

from memories.extraction import vocabulary
from memories.extraction.candidates import HIGH, MEDIUM, Ctx, make, named_entities, named_fact
from memories.extraction.english.words import clean_value, first_word
from memories.extraction.phrasing import slot_key, third_person, third_person_rest
from memories.extraction.rules import Builder, FirstMatch
from memories.providers.llm_types import CandidateMemory

# Facts about the user, in this order: the first pattern that matches decides, even when its rule then
# keeps nothing ---------------------------------------------------------------------------------------

identity = FirstMatch(re.I)


_NAME = re.compile(
    r"^(?:my name is|my name's|i'm called|i am called|call me|people call me|you can call me|everyone calls me|"
    r"i go by)\s+(?P<name>[A-Za-z][\w'-]*(?:\s+[A-Z][\w'-]*)?)$",
    re.I,
)


_IM_NAME = re.compile(r"^(?:I'm|I am|Im|This is)\s+(?P<name>[A-Z][a-z]+(?:\s+[A-Z][a-z]+)?)$")


def _name_match(clause: str) -> re.Match | None:
    m = _NAME.match(clause) or _IM_NAME.match(clause)
    # "I'm Italian", "I'm Vegan" at the start of a sentence are not names.
    if m and m["name"].lower() not in vocabulary.NATIONALITIES and m["name"].lower() not in vocabulary.DIETS:
        return m
    return None


@identity.rule(_name_match)
def _name(m: re.Match, clause: str, ctx: Ctx) -> CandidateMemory | None:
    name = m["name"]
    if first_word(name) in {"a", "an", "the", "not", "so", "very", "just"}:
        return None
    return named_fact(ctx, f"User's name is {name}", HIGH, subject="name", predicate="is", value=name, kind="person")


@identity.rule(r"^i(?:'m| am) (?:very |severely |mildly )?allergic to (?P<what>.+)$")
def _allergy(m: re.Match, clause: str, ctx: Ctx) -> CandidateMemory:
    what = clean_value(third_person_rest(m["what"]))
    return make(
        ctx, f"User is allergic to {what}", "fact", HIGH, subject=f"{what} allergy", predicate="is", value="allergic"
    )


@identity.rule(
    r"^i(?:'m| am) (?:now |actually )?(?P<age>\d{1,3})(?: years old| yrs old| y/?o| years)?"
    r"(?:,? not \d{1,3}\b.*)?$"
)
def _age(m: re.Match, clause: str, ctx: Ctx) -> CandidateMemory:
    return make(ctx, f"User is {m['age']} years old", "fact", MEDIUM, subject="age", predicate="is", value=m["age"])


@identity.rule(
    r"^i(?:'m| am) (?:on|using|running) "
    r"(?P<os>windows(?: \d+)?|mac(?:os)?|a mac|linux|ubuntu|debian|fedora|arch(?: linux)?)$"
)
def _operating_system(m: re.Match, clause: str, ctx: Ctx) -> CandidateMemory:
    os_name = re.sub(r"^a\s+", "", m["os"], flags=re.I)
    return named_fact(
        ctx, f"User is on {os_name}", MEDIUM, subject="operating system", predicate="uses", value=os_name, kind="tool"
    )


_PLACE_CUT = re.compile(
    r"\s+(?:with|since|for|because|and|but|now|these days|at the moment|last|a few|\w+ (?:years?|months?|weeks?) ago|"
    r"in \d{4}|recently|this year|this month|two|three)\b.*$|,.*$",
    re.I,
)


def _place_fact(subject: str, predicate: str) -> Builder:
    """Where the user is from or lives: the place is whichever alternative of the pattern matched."""

    def build(m: re.Match, clause: str, ctx: Ctx) -> CandidateMemory:
        place = clean_value(
            _PLACE_CUT.sub("", next(v for k, v in m.groupdict().items() if k.startswith("place") and v))
        )
        return named_fact(
            ctx, third_person(clause), HIGH, subject=subject, predicate=predicate, value=place, kind="place"
        )

    return build


identity.add(
    r"^i(?:'m| am) (?:originally )?from (?P<place>.+)$|^i (?:originally )?come from (?P<place2>.+)$|"
    r"^i was born in (?P<place3>.+)$|^i grew up in (?P<place4>.+)$",
    _place_fact("origin", "is from"),
)


identity.add(
    r"^i (?:currently |now |still )?(?:live|am living|'m living|reside|am based|'m based|am located|'m located) "
    r"in (?P<place>.+)$|^i(?:'ve| have)? (?:just |recently |finally |officially )?(?:moved|relocated)"
    r"(?: (?:out )?from [^,]+?)?(?: to| back to| over to) (?P<place2>.+)$|"
    r"^i(?:'ve| have) (?:been )?(?:lived|living) in (?P<place3>.+)$",
    _place_fact("residence", "lives in"),
)


@identity.rule(
    r"^i (?:currently |now |still )?(?:work|am working|'m working) (?:at|for) (?P<org>.+)$|"
    r"^i (?:just |recently )?(?:joined|started at|started working at|started a new job at|got a job at)"
    r"\s+(?P<org2>.+)$"
)
def _employer(m: re.Match, clause: str, ctx: Ctx) -> CandidateMemory:
    org_text = m["org"] or m["org2"]
    org = clean_value(re.sub(r"\s+(?:as|since|for|in|on)\b.*$|,.*$", "", org_text, flags=re.I))
    role = re.search(r"\bas (?:a |an )?(?P<role>.+)$", org_text, re.I)
    return make(
        ctx,
        third_person(clause),
        "fact",
        HIGH,
        subject="employer",
        predicate="works at",
        value=org,
        entities=[(org, "organization")] + (named_entities(role["role"]) if role else []),
    )


_ROLE_CUT = re.compile(r"\s+(?:at|for|in|from|with|who|and|but|since|based|working|by|on)\b.*$", re.I)


@identity.rule(
    r"^i(?:'m| am) (?:currently |now |still )?(?:a|an) (?P<role>.+)$|"
    r"^i (?:currently |now )?work as (?:a |an )?(?P<role2>.+)$"
)
def _role(m: re.Match, clause: str, ctx: Ctx) -> CandidateMemory | None:
    """ "I'm a nurse" (an occupation), "I'm a vegetarian" (a diet), "I'm a night owl" (something else)."""
    role_text = m["role"] or m["role2"]
    core = clean_value(_ROLE_CUT.sub("", role_text))
    words = slot_key(core).split()
    if not words or first_word(core) in {"fan", "big", "huge", "little", "bit", "lot"}:
        return None
    tail = role_text[len(_ROLE_CUT.sub("", role_text)) :]
    org = re.match(r"\s+(?:at|for)\s+(?P<org>[A-Z][\w&.-]*(?:\s+[A-Z][\w&.-]*)*)", tail)
    entities = [(org["org"], "organization")] if org else []
    content = third_person(clause)
    if words[-1] in vocabulary.OCCUPATIONS or core.lower() in vocabulary.OCCUPATIONS:
        return make(ctx, content, "fact", HIGH, subject="occupation", predicate="is", value=core, entities=entities)
    if core.lower() in vocabulary.DIETS:
        return make(ctx, content, "fact", HIGH, subject="diet", predicate="is", value=core)
    return make(ctx, content, "fact", MEDIUM, subject=core, predicate="is", value="yes", entities=entities)


_HEALTH_STATES = {
    "diabetic",
    "prediabetic",
    "asthmatic",
    "epileptic",
    "pregnant",
    "colorblind",
    "colour-blind",
    "color blind",
    "deaf",
    "hard of hearing",
    "anemic",
    "anaemic",
    "celiac",
    "coeliac",
    "left-handed",
    "right-handed",
    "ambidextrous",
    "short-sighted",
    "near-sighted",
    "nearsighted",
}
# "I have type 1 diabetes", "I was diagnosed with asthma": a condition the user lives with.
_CONDITIONS = (
    r"(?:type [12] |gestational )?diabetes|prediabetes|asthma|epilepsy|celiac disease|coeliac disease|"
    r"crohn's(?: disease)?|ibs|adhd|autism|dyslexia|migraines?|arthritis|hypertension|high blood pressure|"
    r"high cholesterol|a heart condition|sleep apnea|sleep apnoea|tinnitus|eczema|psoriasis|lupus|anemia|"
    r"anaemia|hypothyroidism|pcos|endometriosis|multiple sclerosis|ms|long covid|chronic back pain"
)


@identity.rule(
    rf"^i (?:have|'ve got|have got|was diagnosed with|got diagnosed with|live with|suffer from) (?P<what>{_CONDITIONS})"
    r"(?:\s+(?:since|for)\b.*)?$"
)
def _condition(m: re.Match, clause: str, ctx: Ctx) -> CandidateMemory:
    what = m["what"].lower()
    return make(ctx, third_person(clause), "fact", HIGH, subject=f"{what} condition", predicate="has", value="yes")


@identity.rule(
    r"^i(?:'m| am) (?:(?:also|actually|now|still|severely|mildly|very)\s+)*(?:a )?(?P<word>[a-z][a-z -]+?)"
    r"(?:\s*[,—–]\s*.*|\s+-\s+.*)?$"
)
def _state(m: re.Match, clause: str, ctx: Ctx) -> CandidateMemory | None:
    """ "I'm vegan", "I'm diabetic", "I'm Portuguese"; any other adjective is not kept."""
    word = re.sub(r"\s+(?:now|these days|nowadays|anymore)$", "", m["word"].strip().lower())
    if word in vocabulary.DIETS:
        return make(ctx, f"User is {word}", "fact", HIGH, subject="diet", predicate="is", value=word)
    if word in _HEALTH_STATES:
        return make(ctx, f"User is {word}", "fact", HIGH, subject=f"{word} condition", predicate="is", value="yes")
    if word in vocabulary.NATIONALITIES:
        nationality = word.capitalize()
        return make(
            ctx, f"User is {nationality}", "fact", HIGH, subject="nationality", predicate="is", value=nationality
        )
    return None


@identity.rule(r"^i (?:currently |now )?work in (?P<field>.+)$")
def _work_in(m: re.Match, clause: str, ctx: Ctx) -> CandidateMemory | None:
    """ "I work in Lisbon" (a place, capitalised) or "I work in finance" (an industry)."""
    field_text = clean_value(_PLACE_CUT.sub("", m["field"]))
    if not field_text:
        return None
    if field_text[:1].isupper():
        return named_fact(
            ctx, third_person(clause), MEDIUM, subject="work location", predicate="is", value=field_text, kind="place"
        )
    return make(ctx, third_person(clause), "fact", MEDIUM, subject="industry", predicate="is", value=field_text)


@identity.rule(r"^i (?:also )?speak (?P<langs>.+)$")
def _languages(m: re.Match, clause: str, ctx: Ctx) -> CandidateMemory:
    langs = clean_value(m["langs"])
    return make(ctx, f"User speaks {langs}", "fact", MEDIUM, subject=langs, predicate="speaks", value=langs)
