"""English patterns: one user sentence in, zero or more candidate memories out.

Only the user's own first-person statements, explicit requests and instructions produce
candidates; questions, greetings, hedges and small talk produce nothing. A sentence is first read
as a whole ("remember …", "forget …", a correction), then clause by clause: each clause yields at
most one candidate, from the first rule that matches, in the order of `_CLAUSE_RULES` (the rules
live in this package's modules, one per kind of statement). `sentence_reader.read_sentence` runs
this module's readings in the order both languages share.
"""

import re

from memories.extraction.candidates import (
    MEDIUM,
    ClauseRule,
    Ctx,
    apply_context,
    clause_candidates,
    make,
    named_entities,
    plain_statement,
)
from memories.extraction.changes import english_change
from memories.extraction.dates import find_date
from memories.extraction.english import belongings, events, identity, instructions, plans, preferences
from memories.extraction.english.words import ASSISTANT_VERBS, IMPERATIVE_VERBS, first_word
from memories.extraction.phrasing import (
    capitalize,
    expand_contractions,
    strip_end,
    third_person,
    third_person_rest,
    value_text,
)
from memories.extraction.statement_rules import everyday_rules, instruction
from memories.providers.llm_types import CandidateMemory

# ---------------------------------------------------------------------------------------------
# Sentence level: explicit requests and corrections wrap the clause rules
# ---------------------------------------------------------------------------------------------

_LEAD_FILLER = re.compile(
    r"^(?:(?:well|so|oh+|o+h|ah+|aw+|wow|yay|phew|hmm+|hey|hi|hello|ok|okay|alright|also|and|btw|by the way|fyi|anyway|"
    r"anyways|um|uh|yeah|yes|heads up|update|good news|big news|"
    r"just so you know|for your information|guess what|honestly|frankly|to be honest|tbh|funny thing|fun fact|"
    r"quick update(?: on my end)?|"
    # "Reminder: I am lactose intolerant" restates a fact; "Reminder: call mom" stays a todo.
    r"(?:just a |as a |friendly )?reminder(?=\s*[,:;—–-]*\s+(?:i am|i'm|i have|i've|my)\b))"
    r"\s*[,!.:;—–-]*\s+)+",
    re.I,
)


_REQUEST = r"(?:(?:can|could|would|will) you (?:please )?|i (?:want|need|would like|'d like) you to |please )?"


REMEMBER = re.compile(
    r"^" + _REQUEST + r"(?:please )?(?P<verb>remember|keep in mind|make a note|make a note of|take note|note down|"
    r"don't forget|do not forget|never forget|save (?:this|that) (?:to|in) (?:your )?memory|"
    r"add (?:this|that) to (?:your )?memory|for the record)(?:\s+(?:that|this|of))?\s*[:,-]?\s+(?P<body>.+)$",
    re.I,
)


_FORGET = re.compile(
    r"^" + _REQUEST + r"(?:please )?(?:forget|stop remembering|unlearn|delete the memory|erase the memory|"
    r"remove the memory|delete (?:your )?memory of|erase (?:your )?memory of)"
    r"(?:\s+(?:about|that|the fact that|everything about|what i said about|of|on))?\s*[:,-]?\s*(?P<what>.+)$",
    re.I,
)


_FORGET_FROM_MEMORY = re.compile(
    r"^" + _REQUEST + r"(?:please )?(?:delete|erase|remove|drop) (?P<what>.+?) from (?:your )?memory$", re.I
)


_PRONOUN_ONLY = re.compile(r"^(?:it|that|this|them|those|these|everything|all|about it|about that)$", re.I)


CORRECTION = re.compile(
    r"^(?:(?:no|nope|nah|not quite|not really|wrong|incorrect|correction|oops|"
    r"that's (?:wrong|not right|not true|incorrect|not correct|not it)|"
    r"that is (?:wrong|not right|not true|incorrect|not correct)|you're wrong|you are wrong)\b[,.!;:]*\s*"
    r"(?:actually|in fact|rather)?[,]?\s*|actually[,]?\s+|i meant[,:]?\s+|to correct myself[,:]?\s+)(?P<rest>.+)$",
    re.I,
)


# "Quick life update: I moved …", "Big news in the family: my sister …": a short label before a colon.
_LABEL = re.compile(
    r"^(?!(?:todo|to-do|to do|task|reminder|note)\b)[\w' -]{2,40}:\s+(?=(?:i|i'm|i've|my|we|we're|our)\b)", re.I
)


SHORTEST_CORRECTION = 6


def sentence_body(sentence: str) -> tuple[str, bool] | None:
    body = _LEAD_FILLER.sub("", sentence).strip()
    body = _LABEL.sub("", body)
    question = body.endswith("?")
    body = strip_end(body.rstrip("?").strip())
    return (body, question) if len(body) >= 6 else None


def forget_request(request: str) -> str | None:
    m = _FORGET_FROM_MEMORY.match(request) or _FORGET.match(request)
    return m["what"] if m and not re.match(r"^(?:to|about)\b", m["what"], re.I) else None


def _clauses(text: str, ctx: Ctx) -> list[CandidateMemory]:
    return clause_candidates(text, ctx, extract_clause)


def forget(what: str, ctx: Ctx) -> list[CandidateMemory]:
    what = strip_end(re.sub(r"^(?:that|about|the fact that)\s+", "", what.strip(), flags=re.I))
    if _PRONOUN_ONLY.match(what) or len(what) < 3:
        return []
    found = _clauses(what, ctx.but(explicit=True))
    if not found:
        content = capitalize(third_person(what))
        found = [apply_context(make(ctx, content, "fact", MEDIUM, subject="", value=what), ctx.but(explicit=True))]
    for candidate in found:
        candidate.action = "forget"
    return found


def remember(request: re.Match[str], ctx: Ctx) -> list[CandidateMemory]:
    """ "remember that …" stores the statement; "remember to always …" is a rule; "remember to <do
    something the assistant does>" is an instruction; "don't forget to …" and dated ones are reminders."""
    body = strip_end(request["body"])
    reminder = "forget" in request["verb"].lower()
    ctx = ctx.but(explicit=True)
    to = re.match(r"^to\s+(?P<act>.+)$", body, re.I)
    if to:
        act = to["act"]
        due = find_date(act, ctx.now)
        if due is None and re.match(r"^(?:always|never)\b", act, re.I):
            candidate = instructions.rule(act, ctx)
        elif due is None and not reminder and first_word(act) in ASSISTANT_VERBS:
            candidate = instructions.rule_candidate(ctx, "must", act)
        else:
            candidate = plans.reminder(act, due, ctx)
        return [apply_context(candidate, ctx)] if candidate else []
    found = _clauses(body, ctx)
    if found:
        return found
    if len(body) < 6:
        return []
    return [apply_context(_generic_statement(body, ctx, "fact", MEDIUM), ctx)]


# "Oops, I typed that wrong: my daughter is called Sofia": the slip itself is not the statement.
_OWN_SLIP = re.compile(
    r"^(?:i (?:typed|wrote|said|spelled|got) (?:that|it|this|her name|his name) wrong|i misspoke|my (?:bad|mistake))"
    r"[,:;.!]*\s*",
    re.I,
)


def correct(rest: str, ctx: Ctx) -> list[CandidateMemory]:
    rest = _OWN_SLIP.sub("", rest)
    if re.match(r"^(?:sorry|thanks|thank you|haha|lol|no worries|no problem|never ?mind)\b", rest, re.I):
        return []  # "Oops, sorry 'bout the accident": sympathy after "oops", not a correction
    found = _clauses(rest, ctx)
    if found:
        return found
    rest = strip_end(rest)
    first = first_word(rest)
    if first in IMPERATIVE_VERBS:
        return [apply_context(instructions.rule_candidate(ctx, "must", rest), ctx)]
    if re.match(r"^(?:don't|do not)\s+", rest, re.I):
        return [
            apply_context(
                instructions.rule_candidate(ctx, "never", re.sub(r"^(?:don't|do not)\s+", "", rest, flags=re.I)), ctx
            )
        ]
    if first in {"it", "that", "this", "there", "it's", "that's", "thats", "its"} or len(rest.split()) < 4:
        return []
    if first in {"never", "not", "no", "nothing", "nobody"}:
        return []  # "Nope, never been to something like that": an answer, not a correction
    return [apply_context(_generic_statement(rest, ctx, "fact", MEDIUM), ctx)]


_IS = re.compile(r"^(?P<subj>.{2,60}?)\s+(?:is|are|was|should be|needs to be|has to be)\s+(?P<val>.+)$", re.I)


def _generic_statement(text: str, ctx: Ctx, category: str, importance: float) -> CandidateMemory:
    content = capitalize(third_person(text))
    m = _IS.match(strip_end(text))
    subject, value = ("", "")
    if m and not re.match(r"^(?:i|it|this|that|there|what|which)\b", m["subj"], re.I):
        subject, value = third_person_rest(m["subj"]), value_text(m["val"])
    entities = named_entities(text[1:])
    return plain_statement(ctx, content, category, importance, subject=subject, value=value, entities=entities)


# ---------------------------------------------------------------------------------------------
# Clause level
# ---------------------------------------------------------------------------------------------

_GREETING = re.compile(
    r"^(?:hi|hello|hey|hiya|yo|thanks|thank you|thx|ty|ok|okay|k|sure|great|cool|nice|awesome|perfect|bye|goodbye|"
    r"good (?:morning|afternoon|evening|night)|lol|haha|hmm+|yes|yeah|yep|no|nope|got it|sounds good|of course|"
    r"you too|same|welcome|cheers|np|no problem|never ?mind|nvm|alright|fine|great job|well done|good job)"
    r"(?:\s+(?:there|again|so much|a lot|you|man|buddy|mate|all|everyone|very much))*$",
    re.I,
)


_QUESTION_START = re.compile(
    r"^(?:what|why|how|when|where|who|whom|which|whose|do|does|did|is|are|am|was|were|can|could|would|will|"
    r"shall|should|may|might|has|had|isn't|aren't|doesn't|didn't|won't|wouldn't|can't|couldn't|shouldn't|"
    r"any idea|anyone)\b",
    re.I,
)


_HEDGE = re.compile(
    r"^(?:if|unless|i think|i guess|i suppose|i wonder|i was wondering|i'm wondering|i'm not sure|i am not sure|"
    r"i don't know|i dont know|i have no idea|maybe|perhaps|i mean|i see|i understand|i agree|i know|i hope you|"
    r"i need you to|i want you to|i'd like you to|i would like you to|please|let me|tell me|show me|give me|"
    r"help me|i need help|i have a question|i've a question|i'm sorry|sorry|i'm just|just|i feel like|"
    r"i would like|i'd like|i wish|i bet|i'm curious|i am curious|i was just|here's|here is|this is not|"
    r"it's|it is|that's|that is|there's|there is)\b",
    re.I,
)


_LEAD_TIME = re.compile(r"^(?:these days|nowadays|lately|at the moment|currently|now),?\s+(?=(?:i|we)\b)", re.I)


# A chat sentence that opens on a past-tense verb of a life change has dropped its "I": "Left Bain
# back in April", "Cancelled the gym in January", "Renewed the lease".
_DROPPED_I = re.compile(
    r"^(?:left|quit|joined|moved|sold|bought|cancell?ed|started|finished|renewed|adopted|switched|"
    r"dropped|gave up|signed|graduated|retired|swapped|traded|landed|accepted|got married|got engaged|got divorced)\b",
    re.I,
)
_ABOUT_ASSISTANT = re.compile(r"\byour?\b", re.I)


def extract_clause(clause: str, ctx: Ctx) -> CandidateMemory | None:
    """A clause's candidate; failing that, its first part alone: what follows a statement after a
    comma is often a remark on it ("I run every morning before work, usually out the door by 6")."""
    found = _read_clause(clause, ctx)
    head = re.split(r"\s*[,;]\s+", clause.strip(), maxsplit=1)[0]
    if found is None and head != clause.strip() and len(head.split()) >= 3:
        found = _read_clause(head, ctx)
    return found


def _read_clause(clause: str, ctx: Ctx) -> CandidateMemory | None:
    clause = expand_contractions(strip_end(_LEAD_TIME.sub("", _LEAD_FILLER.sub("", clause.strip()))))
    if _DROPPED_I.match(clause) and not _ABOUT_ASSISTANT.search(clause):
        clause = "I " + clause[0].lower() + clause[1:]
    if len(clause) < 6 or _GREETING.match(clause):
        return None
    rule = instruction(clause, ctx, instructions=instructions, extract_clause=extract_clause)
    if rule is not None:
        return rule
    if plans.REMIND.match(clause):
        return plans.todo(clause, ctx)
    if _QUESTION_START.match(clause) or _HEDGE.match(clause):
        return None
    for extract in _CLAUSE_RULES:
        candidate = extract(clause, ctx)
        if candidate is not None:
            return candidate
    # "Nah, I haven't" is an answer, not a statement to keep: a fact needs a few words.
    if re.match(r"^(?:i|my|we|our|i'm|i've)\b", clause, re.I) and len(clause.split()) >= 4:
        if ctx.explicit or ctx.correction or (_CHANGED.search(clause) and not _MOMENT.search(clause)):
            return _generic_statement(clause, ctx, "fact", MEDIUM)
    # "Since March I've been teaching at Fairview": when the change is said first, the statement follows it.
    m = _CHANGE_FIRST.match(clause)
    if m and len(m["rest"].split()) >= 4 and not _MOMENT.search(clause):
        since = m["since"].strip(" ,")
        return _generic_statement(f"{m['rest']} {since[0].lower()}{since[1:]}", ctx, "fact", MEDIUM)
    return None


# What says that something about the user changed, whatever the verb: such a statement is kept even
# when no rule knows the verb, since the memory it makes stale would otherwise be served as current.
_CHANGED = re.compile(
    r"\b(?:now|these days|nowadays|anymore|any more|no longer|since (?:last|this|early|late|\w+ \d{4}|"
    r"january|february|march|april|may|june|july|august|september|october|november|december|then)|"
    r"from now on|(?:have|has|'ve) (?:just |recently |finally )?(?:become|started|switched|moved|changed)|became|"
    r"gone back to|went back to|swapped|traded|"
    r"done with|is history|accepted (?:an|a|the) (?:job )?offer|new job|took (?:a|an) [\w -]{0,30}?job)\b",
    re.I,
)
# How one is right now ("I'm so tired now", "I'm at the airport now"): a moment, not a change.
_MOMENT = re.compile(
    r"\b(?:right now|just now|today|tonight|this (?:morning|afternoon|evening)|at the moment|on my way|"
    r"fine|okay|ok|alright|all set|ready|better|tired|sleepy|hungry|thirsty|bored|busy|stressed|exhausted|excited|"
    r"nervous|sick|at the (?:airport|office|gym|"
    r"station|doctor's|store|mall|beach|park)|in a meeting|driving|waiting|stuck)\b",
    re.I,
)
_CHANGE_FIRST = re.compile(
    r"^(?:[\w' ]{1,20},\s+)?"
    r"(?P<since>(?:ever )?since (?:last |this |early |late )?[\w ]{2,20}?,?|from now on,?|these days,?|nowadays,?)\s+"
    r"(?P<rest>(?:i|i am|i have|we|we are|we have|my|our)\b.+)$",
    re.I,
)


_CLAUSE_RULES: list[ClauseRule] = [
    english_change,  # knowledge updates first: "I quit …", "I switched from … to …", "I moved to …"
    instructions.skill,
    plans.decision,
    *everyday_rules(plans=plans, preferences=preferences, identity=identity, belongings=belongings),
    events.event,
    events.relative,
    events.named,
]
