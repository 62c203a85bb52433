"""English rules for what the user has and uses: "my X is Y", tools, projects, possessions."""

import re

from memories.extraction import lexicon, vocabulary
from memories.extraction.candidates import HIGH, MEDIUM, Ctx, make, name_kind, named_entities, tool_entities, works_on
from memories.extraction.english.words import ADV, clean_value, first_word
from memories.extraction.phrasing import our_owner, slot_key, strip_end, third_person, third_person_rest
from memories.extraction.rules import FirstMatch
from memories.providers.llm_types import CandidateMemory

TRANSIENT_VALUE = re.compile(
    r"^(?:not|so|too|very|really|pretty|kinda|kind of|a bit|a little|down|broken|slow|fast|dead|off|on|fine|ok|okay|"
    r"good|bad|better|worse|here|there|ready|done|gone|late|busy|tired|sick|full|empty|wrong|right|correct|weird|"
    r"strange|crashing|failing|working|loading|stuck|frozen|running|acting up)\b",
    re.I,
)


_PROJECT_ATTRS = {
    "project",
    "app",
    "api",
    "repo",
    "repository",
    "stack",
    "database",
    "db",
    "server",
    "deadline",
    "branch",
    "prefix",
    "endpoint",
    "port",
    "domain",
    "url",
    "backend",
    "frontend",
    "codebase",
    "staging",
    "production",
    "ci",
    "pipeline",
    "team",
}


_KEY_ATTRS = {"name", "birthday", "email", "phone", "address", "phone number", "email address", "anniversary"}


my_attribute = FirstMatch(re.I)


@my_attribute.rule(
    r"^(?P<who>my|our) (?P<attr>[a-z][\w' -]{0,40}?) (?P<verb>is|are|'s|was|were|has been|will be) (?P<val>.+)$"
)
def _my_attribute(m: re.Match, clause: str, ctx: Ctx) -> CandidateMemory | None:
    attr = m["attr"].strip()
    if re.search(r"\b(?:says|said|thinks|thought|told|tells|asks|asked|my|your|that|and)\b", attr, re.I):
        return None  # "my teacher says my bowls are …": someone's remark, not an attribute
    words = attr.lower().replace("'s", "").split()
    if (
        not words
        or words[0] in vocabulary.NOT_ATTRIBUTES
        or "fav" in attr.lower()
        or words[-1] in vocabulary.NOT_ATTRIBUTES
    ):
        return None
    val = clean_value(third_person_rest(m["val"]))
    if len(val) < 2 or TRANSIENT_VALUE.match(val):
        return None
    owner = "User's" if m["who"].lower() == "my" else our_owner(m["attr"])
    verb = {"'s": "is"}.get(m["verb"].lower(), m["verb"].lower())
    category = "project" if set(words) & _PROJECT_ATTRS else "fact"
    importance = HIGH if attr.lower().split()[-1] in _KEY_ATTRS or attr.lower() in _KEY_ATTRS else MEDIUM
    kind = name_kind(attr)
    entities = [(val, kind)] if kind != "other" and (val[:1].isupper() or kind == "tool") else []
    entities += tool_entities(val)
    return make(
        ctx,
        f"{owner} {attr} {verb} {val}",
        category,
        importance,
        subject=attr,
        predicate="is",
        value=val,
        entities=entities,
    )


# Tools and projects -----------------------------------------------------------------------------

_FOR = re.compile(r"\s+(?:for|to|as|when|at|in|on|with)\s+(?P<purpose>.+)$", re.I)


uses = FirstMatch(re.I)


@uses.rule(
    r"^(?P<who>i|we) (?P<advs>" + ADV + r")(?:use|am using|'m using|are using|'re using|work with|code in|"
    r"program in|write in|develop in|have been using|'ve been using|rely on|switched to|now use)\s+(?P<what>.+)$"
)
def _uses(m: re.Match, clause: str, ctx: Ctx) -> CandidateMemory | None:
    what = third_person_rest(m["what"])
    purpose = _FOR.search(what)
    value = clean_value(what[: purpose.start()] if purpose else what)
    if not value or first_word(value) in {"it", "that", "this", "them"}:
        return None
    subject = lexicon.domain_of(value) or (slot_key(purpose["purpose"]) if purpose else slot_key(value))
    we = m["who"].lower() == "we"
    entities = tool_entities(value) or [(name, "tool") for name, _ in named_entities(value)]
    return make(
        ctx,
        third_person(clause),
        "project" if we else "preference",
        MEDIUM,
        subject=subject,
        predicate="uses",
        value=value,
        entities=entities,
    )


project = FirstMatch(re.I)


@project.rule(
    r"^(?P<who>the|our|my|this) (?P<noun>project|app|application|repo|repository|codebase|service|site|website|"
    r"backend|frontend|api|stack|server|bot) (?P<verb>uses|is built with|is written in|runs on|is using|"
    r"is deployed on|depends on|is based on|is hosted on)\s+(?P<x>.+)$"
)
def _project_uses(m: re.Match, clause: str, ctx: Ctx) -> CandidateMemory:
    owner = {"my": "User's", "our": our_owner(m["noun"])}.get(m["who"].lower(), "The")
    value = clean_value(_FOR.sub("", third_person_rest(m["x"])))
    domain = lexicon.domain_of(value)
    noun = m["noun"].lower()
    return make(
        ctx,
        f"{owner} {noun} {m['verb'].lower()} {third_person_rest(strip_end(m['x']))}",
        "project",
        MEDIUM,
        subject=f"{noun} {domain or 'stack'}",
        predicate="uses",
        value=value,
        entities=tool_entities(value) or named_entities(value, "tool"),
    )


_CALLED = re.compile(r"\b(?:called|named)\s+(?P<name>[\w.-]+(?:\s+[A-Z][\w.-]*)*)", re.I)


@project.rule(
    r"^(?:i|we)(?:'m| am|'re| are)? (?:currently |now |still |also )?(?:working on|building|developing|writing|"
    r"making|creating|maintaining|work on|maintain|build|develop|migrating|porting|rewriting|redesigning|"
    r"refactoring|launching)\s+(?P<what>.+)$"
)
def _working_on(m: re.Match, clause: str, ctx: Ctx) -> CandidateMemory | None:
    if first_word(m["what"]) in {"it", "that", "this", "them", "something"}:
        return None
    what = clean_value(third_person_rest(m["what"]))
    called = _CALLED.search(what)
    name = called["name"] if called else ""
    return works_on(ctx, third_person(clause), what, name=name, subject=name or " ".join(slot_key(what).split()[:6]))


_NOT_POSSESSIONS = {
    "question",
    "questions",
    "doubt",
    "problem",
    "issue",
    "idea",
    "suggestion",
    "request",
    "minute",
    "minutes",
    "sec",
    "second",
    "moment",
    "bug",
    "error",
    "quick",
    "feeling",
    "few",
    "couple",
    "lot",
    "meeting",
    "call",
    "appointment",
    "headache",
    "cold",
    "fever",
    "cough",
    "break",
    "chance",
    "look",
    "try",
    "go",
    "favor",
    "favour",
    "follow-up",
    "followup",
    "concern",
    "thought",
    "update",
    "hard",
    "good",
    "great",
    "bad",
    "little",
    "bit",
    "new",
}


have = FirstMatch(re.I)


@have.rule(r"^(?:i|we) (?:have|'ve got|have got|own)\s+(?P<q>a|an|one|two|three|four|five|\d+)\s+(?P<thing>.+)$")
def _have(m: re.Match, clause: str, ctx: Ctx) -> CandidateMemory | None:
    thing = clean_value(third_person_rest(m["thing"]))
    if first_word(thing) in _NOT_POSSESSIONS or len(thing) < 3:
        return None
    core = re.sub(r"\s+(?:named|called|who|that|which|with|from|at)\b.*$", "", thing, flags=re.I)
    called = _CALLED.search(thing)
    people = vocabulary.PERSON_ATTRIBUTES | {"kids", "children", "sons", "daughters"}
    kind = "person" if set(slot_key(core).split()) & people else "other"
    entities = [(called["name"], kind)] if called else []
    return make(
        ctx,
        third_person(clause),
        "fact",
        MEDIUM,
        subject=" ".join(slot_key(thing).split()[:6]),
        predicate="has",
        value=f"{m['q']} {thing}",
        entities=entities,
    )
