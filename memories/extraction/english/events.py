"""English rules for what happened in the user's life ("we adopted a border collie last Saturday") and
facts about the people and pets in it ("my sister Anna just had a baby", "Biscuit is two")."""

import re

from memories.extraction import vocabulary
from memories.extraction.candidates import HIGH, MEDIUM, Ctx, make, named_entities
from memories.extraction.date_notes import annotate_dates
from memories.extraction.dates import find_date
from memories.extraction.english.belongings import TRANSIENT_VALUE
from memories.extraction.english.plans import DANGLING
from memories.extraction.english.preferences import OBJECT_NOT_A_PREFERENCE
from memories.extraction.english.words import clean_value
from memories.extraction.past_dates import find_past_date
from memories.extraction.phrasing import slot_key, third_person, third_person_rest, value_text
from memories.extraction.rules import FirstMatch
from memories.providers.llm_types import CandidateMemory

# Life events: what happened to the user ("we adopted a border collie last Saturday") ----------

# Past-tense verbs (and verb phrases) that report something lasting about a life: moves, pets,
# family, work, health, milestones, and tasks brought to an end. Anything else said in the past
# tense ("I saw your message", "I tried that") is conversation, not a memory.
_EVENT_VERBS = (
    r"adopted|rescued|got (?:a|an|my|our|two|three|promoted|married|engaged|divorced|diagnosed|hired|accepted|"
    r"admitted|certified|vaccinated|laid off|fired|into|back from|a new|the job|the offer|tested)|"
    r"was (?:diagnosed|promoted|born|hired|accepted|laid off|fired|admitted|married|offered|told by (?:my|the) "
    r"doctor)|were (?:diagnosed|promoted|married|engaged)|married|started|quit|left|joined|graduated|retired|"
    r"bought|sold|had (?:a baby|a son|a daughter|twins|surgery|an operation|a stroke|a heart attack|"
    r"knee surgery|my first|our first|a (?:minor |major )?(?:accident|operation|surgery))|gave birth|ran|finished|"
    r"completed|submitted|passed|won|broke|tore|signed up|registered|enrolled|lost|visited|booked|launched|"
    r"published|became|took up|learned|learnt|sent off|filed|paid off|renewed|opened|closed|switched|met|"
    r"celebrated|welcomed|moved|relocated|wrapped up|handed in|turned in|delivered|shipped|released|"
    r"defended|earned|received|passed away|recovered|returned|came back|got back|changed jobs|landed|named"
)


_NOT_EVENT_OBJECT = re.compile(
    r"^\s*(?:it|that|this|them|those|these|you|your|what|something|anything|nothing|the same|a question|"
    r"a look|a bit|a lot|to ask|to say|to tell|your message|the (?:link|answer|message|article|code|error)|"
    r"with you|here|there|now|up|again|over)\b|^\s*$",
    re.I,
)


_HOUSEHOLD_VERBS = (
    r"adopted|rescued|welcomed|moved|relocated|bought|sold|had|got (?:married|engaged|a|an)|married|named"
)


def _without_dates(text: str, ctx: Ctx) -> str:
    for finder in (find_past_date, find_date):
        found = finder(text, ctx.now)
        if found is not None:
            text = DANGLING.sub("", text[: found.start].rstrip()) + " " + text[found.end :].lstrip()
    return text.strip()


event = FirstMatch(re.I)


@event.rule(
    # The subject may be left out after "just" / "finally": "Finally submitted my thesis!"
    r"^(?:(?P<who>i|we|my (?:wife|husband|partner) and i)\s+|(?=(?:just|finally|also)\s))"
    r"(?:(?:just|finally|recently|officially|already|also|"
    r"actually|only|successfully|eventually)\s+)*(?P<verb>" + _EVENT_VERBS + r")\b(?P<rest>.*)$"
)
def _happened(m: re.Match, clause: str, ctx: Ctx) -> CandidateMemory | None:
    return _event_candidate(ctx, clause, m["verb"].lower(), m["rest"], who=m["who"])


# "I'm signed up for …", "I've been learning the cello for two years", "I'm done with the taxes".
@event.rule(
    r"^i(?: am|'m) (?:now |finally |officially |all )?(?P<verb>signed up|registered|enrolled|engaged|married|"
    r"pregnant|retired|done with|finished with|through with|recovering from)\b(?P<rest>.+)$|"
    r"^i(?: have|'ve) been (?P<verb2>[a-z]+ing)\b(?P<rest2>.+?\b(?:for|since)\b.+)$"
)
def _in_state(m: re.Match, clause: str, ctx: Ctx) -> CandidateMemory | None:
    return _event_candidate(ctx, clause, (m["verb"] or m["verb2"]).lower(), m["rest"] or m["rest2"], who="i")


def _event_candidate(ctx: Ctx, clause: str, verb: str, rest: str, *, who: str | None) -> CandidateMemory | None:
    """What happened to `who` ("i", "we", …; None when the clause leaves the subject out)."""
    if _NOT_EVENT_OBJECT.match(rest) and verb not in {"retired", "married", "engaged", "pregnant", "quit"}:
        return None
    content = third_person(_trim_aside(clause))
    if who is None:
        said = third_person_rest(_trim_aside(clause))
        content = f"User {said[:1].lower()}{said[1:]}"
    if (who or "i").lower() != "i" and re.match(_HOUSEHOLD_VERBS, verb):
        # "We adopted a dog", "we bought a house": the household, not a work team.
        content = re.sub(r"^User's team\b", "User and their family", content)
    rest = _without_dates(rest, ctx)
    done = verb in {
        "finished",
        "completed",
        "submitted",
        "done with",
        "finished with",
        "wrapped up",
        "handed in",
        "turned in",
        "sent off",
        "filed",
        "paid off",
        "renewed",
        "delivered",
        "shipped",
    }
    value = value_text(clean_value(third_person_rest(rest))) or verb
    return make(
        ctx,
        content,
        "fact",
        MEDIUM if done else HIGH,
        retention="long" if done else "permanent",
        subject=" ".join(slot_key(f"{verb} {value}").split()[:6]),
        predicate="done" if done else "event",
        value=value,
        entities=named_entities(clause[1:]),
    )


# "My sister Anna just had a baby", "My mom lives in Porto": facts about the people (and pets) in
# the user's life, which `my_attribute` ("my X is Y") does not cover.
_RELATIVES = (
    r"wife|husband|partner|girlfriend|boyfriend|fiance|fiancee|fiancé|fiancée|son|daughter|kids|children|child|"
    r"baby|mom|mum|mother|dad|father|parents|brother|sister|siblings|twin|grandma|grandpa|grandmother|grandfather|"
    r"grandparents|aunt|uncle|cousin|niece|nephew|in-laws|mother-in-law|father-in-law|best friend|friend|"
    r"roommate|flatmate|boss|manager|cofounder|co-founder|dog|cat|puppy|kitten|pet|parrot|rabbit|hamster|horse"
)


_RELATIVE_VERBS = (
    r"lives|lived|works|worked|studies|studied|is studying|starts|begins|joins|is starting|teaches|owns|runs|"
    r"loves|likes|hates|plays|speaks|"
    r"has (?:a|an|two|three|been)|is (?:getting|having|moving|starting|turning|studying|working|living|expecting|"
    r"retiring|graduating|allergic|diabetic|vegan|vegetarian)|turns|turned|"
    + _EVENT_VERBS.replace("was (?:", "(?:was|is) (?:")
    + r"|got|had"
)


_RELATIVE_SLOTS = {"lives", "works", "studies", "is studying", "teaches"}


_ASIDE = re.compile(
    r",\s+(?:so|and|but|because|which|since)\s+(?:she|he|they|it|we|that|this)\b.*$|"
    r"\s+(?:,\s*)?(?:like i (?:said|wrote|mentioned)|as i (?:said|wrote|mentioned)).*$",
    re.I,
)


def _trim_aside(text: str) -> str:
    return _ASIDE.sub("", text)


relative = FirstMatch(re.I)


@relative.rule(
    r"^(?P<who>my|our) (?:(?:little|big|older|younger|elder|baby|new|oldest|youngest|eldest|late|twin|"
    r"best|step|ex|old|dear|sweet)[- ])?(?P<rel>" + _RELATIVES + r")(?P<name>(?:,)?\s+[A-Z][\w'-]+(?:,)?)?\s+"
    r"(?:(?:just|finally|recently|also|still|now|already)\s+)*"
    r"(?P<verb>" + _RELATIVE_VERBS + r")\b(?P<rest>.*)$"
)
def _relative(m: re.Match, clause: str, ctx: Ctx) -> CandidateMemory | None:
    if _NOT_EVENT_OBJECT.match(m["rest"]) and not m["verb"].lower().startswith(("is ", "turn")):
        return None
    rel = m["rel"].lower()
    name = (m["name"] or "").strip(" ,")
    content = third_person(_trim_aside(clause))
    entities = (
        [(name, "person" if rel in vocabulary.PERSON_ATTRIBUTES or rel.endswith("s") else "other")] if name else []
    )
    past_tense = re.match(
        r"(?:[a-z]+ed|had|got|went|ran|won|left|lost|made|became|gave|took|grew|broke|was|were)\b", m["verb"].lower()
    )
    return make(
        ctx,
        annotate_dates(content, ctx.now, bare_weekdays="past" if past_tense else True),
        "fact",
        MEDIUM,
        subject=f"{rel} {name}".strip(),
        # Where they live or work is one value at a time; events about them accumulate.
        predicate=verb if (verb := m["verb"].lower()) in _RELATIVE_SLOTS else "",
        value=value_text(third_person_rest(f"{m['verb']}{m['rest']}")),
        entities=entities + named_entities(m["rest"]),
    )


# "Biscuit is two years old", "he's two years old" (right after the user named Biscuit) ------------

named = FirstMatch(re.I)


@named.rule(
    r"^(?P<who>[A-Z][\w'-]+|he|she)(?P<verb>'s| is| was| has| had| loves| likes| hates| knows| lives| works| "
    r"studies| turned| turns| speaks| plays| goes| weighs)\b(?P<rest>.+)$"
)
def _named(m: re.Match, clause: str, ctx: Ctx) -> CandidateMemory | None:
    if not ctx.names:
        return None
    who = m["who"]
    if who.lower() in ("he", "she"):
        who = ctx.names[-1]
    elif who not in ctx.names:
        return None
    verb = {"'s": " is"}.get(m["verb"].lower(), m["verb"])
    rest = m["rest"].strip()
    if TRANSIENT_VALUE.match(rest) or OBJECT_NOT_A_PREFERENCE.match(rest):
        return None
    return make(
        ctx,
        f"{who}{verb} {third_person_rest(rest)}",
        "fact",
        MEDIUM,
        subject=who.lower(),
        predicate="",
        value=value_text(rest),
        entities=[(who, "other")],
    )
