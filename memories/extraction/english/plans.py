"""English rules for decisions ("we decided to use Postgres") and todos and plans with dates."""

import re

from memories.extraction import candidates, lexicon
from memories.extraction.candidates import HIGH, MEDIUM, Ctx, apply_context, decided, named_entities, tool_entities
from memories.extraction.dates import DateMatch, find_date
from memories.extraction.english.words import first_word
from memories.extraction.phrasing import slot_key, strip_end, third_person, third_person_rest, value_text
from memories.extraction.rules import FirstMatch
from memories.providers.llm_types import CandidateMemory

# Decisions ----------------------------------------------------------------------------------

_USE_VERB = re.compile(
    r"^(?:to\s+)?(?:use|go with|stick with|switch to|adopt|move to|migrate to|pick|choose|try|keep|go for|"
    r"stay with|switch over to)\s+(?P<thing>.+)$",
    re.I,
)


_VALUE_END = re.compile(
    r"\s+(?:for|instead of|over|rather than|because|since|as|so that|from now on|going forward|in|on|to)\b.*$|[,(].*$",
    re.I,
)


def _decision_value(what: str) -> str:
    m = _USE_VERB.match(what)
    thing = m["thing"] if m else re.sub(r"^to\s+", "", what, flags=re.I)
    thing = re.sub(r"^(?:using|the|a|an)\s+", "", thing, flags=re.I)
    return value_text(_VALUE_END.sub("", thing)) or value_text(thing)


def _decision_candidate(ctx: Ctx, content: str, what: str, importance: float) -> CandidateMemory | None:
    value = _decision_value(what)
    if not value or first_word(value) in {"that", "it", "this", "them", "something", "again", "one", "both"}:
        return None
    subject = lexicon.domain_of(value) or lexicon.domain_of(what) or " ".join(slot_key(value).split()[:6])
    entities = tool_entities(what) or [(name, "tool") for name, _ in named_entities(value)]
    return decided(ctx, content, importance, subject=subject, value=value, entities=entities)


decision = FirstMatch(re.I)


@decision.rule(
    r"^(?:(?:ok(?:ay)?|alright|so|then|fine|good)[,]?\s+)*let's (?P<verb>go with|use|stick with|pick|choose|"
    r"switch to|adopt|settle on|go for|move to|migrate to)\s+(?P<what>.+)$"
)
def _lets(m: re.Match, clause: str, ctx: Ctx) -> CandidateMemory | None:
    what = third_person_rest(m["what"])
    return _decision_candidate(ctx, f"User decided to {m['verb'].lower()} {what}", f"{m['verb']} {what}", 0.7)


# "went to Paris" is travel, not a decision; these verbs decide only with their own preposition.
_DECIDING_PREPOSITIONS = {"settled": {"on"}, "went": {"with"}, "opted": {"for", "to"}, "committed": {"to"}}


@decision.rule(
    r"^(?:so |then |ok |okay |alright )?(?P<who>we|i)(?: have|'ve| had)? (?:finally |just |already |now |all )?"
    r"(?P<verb>decided|agreed|chose|settled|opted|went|committed)(?P<prep> on| to| with| for| that)?\s+(?P<what>.+)$"
)
def _decided(m: re.Match, clause: str, ctx: Ctx) -> CandidateMemory | None:
    verb, prep, what = m["verb"].lower(), (m["prep"] or "").strip().lower(), third_person_rest(m["what"])
    if verb in _DECIDING_PREPOSITIONS and prep not in _DECIDING_PREPOSITIONS[verb]:
        return None
    content = f"User {verb}{' ' + prep if prep else ''} {what}"
    return _decision_candidate(ctx, content, what, 0.7)


weak_decision = FirstMatch(re.I)


@weak_decision.rule(
    r"^(?P<who>i|we)(?:'ll| will| am going to|'m going to| are going to|'re going to| plan to| am planning to|"
    r"'m planning to| are planning to|'re planning to)\s+(?P<verb>use|go with|stick with|switch to|adopt|try|"
    r"move to|migrate to|pick|choose)\s+(?P<what>.+)$"
)
def _will_use(m: re.Match, clause: str, ctx: Ctx) -> CandidateMemory | None:
    return _decision_candidate(ctx, third_person(clause), f"{m['verb']} {m['what']}", MEDIUM)


# Todos and plans ---------------------------------------------------------------------------------

DANGLING = re.compile(r"\s+(?:by|on|before|until|till|due|at|for|from|in|is|are|was)\s*$", re.I)


def _without_date(text: str, due: DateMatch | None) -> str:
    if due is None:
        return text
    return (DANGLING.sub("", text[: due.start].rstrip()) + " " + text[due.end :].lstrip()).strip()


def _annotate(text: str, due: DateMatch | None) -> str:
    if due is None or due.is_absolute:
        return text
    return f"{text[: due.end]} ({due.iso}){text[due.end :]}"


def _todo_candidate(ctx: Ctx, content: str, task: str, due: DateMatch | None, importance: float) -> CandidateMemory:
    return candidates.todo(ctx, content, importance, subject=" ".join(slot_key(task).split()[:8]), task=task, due=due)


def reminder(act: str, due: DateMatch | None, ctx: Ctx) -> CandidateMemory:
    act = strip_end(act)
    content = f"User wants to be reminded to {third_person_rest(_annotate(act, due))}"
    return _todo_candidate(ctx, content, third_person_rest(_without_date(act, due)), due, HIGH)


todo = FirstMatch(re.I)


REMIND = re.compile(
    r"^(?:please |can you |could you |would you )?(?:remind me|don't let me forget|do not let me forget)"
    r"(?: to| about| that)?\s+(?P<what>.+)$",
    re.I,
)


@todo.rule(REMIND.match)
def _remind(m: re.Match, clause: str, ctx: Ctx) -> CandidateMemory:
    # Asking to be reminded is as explicit as "remember …".
    return apply_context(reminder(m["what"], find_date(m["what"], ctx.now), ctx), ctx.but(explicit=True))


@todo.rule(r"^(?:todo|to-do|to do|task|reminder)\s*[:\-]\s*(?P<what>.+)$")
def _labelled_todo(m: re.Match, clause: str, ctx: Ctx) -> CandidateMemory:
    what = m["what"]
    due = find_date(what, ctx.now)
    content = f"User has a todo: {third_person_rest(_annotate(what, due))}"
    return _todo_candidate(ctx, content, third_person_rest(_without_date(what, due)), due, MEDIUM)


def _dated_plan(m: re.Match, clause: str, ctx: Ctx) -> CandidateMemory | None:
    """A plan with a date still ahead is a todo. Without a date, "I need to …" is usually the task at hand in
    this conversation, not a todo."""
    due = find_date(clause, ctx.now)
    if due is None or due.due < ctx.now.date():
        return None
    content = third_person(_annotate(clause, due))
    task = re.sub(r"^User(?:'s team)?\s+", "", third_person(_without_date(clause, due)))
    return _todo_candidate(ctx, content, task, due, MEDIUM)


# What the user must do: "I need to …", "we have to …".
todo.add(
    r"^(?:i|we) (?:(?:really|still|also|just|definitely|absolutely|probably|urgently|seriously) )*"
    r"(?:need to|have to|'ve got to|have got to|gotta|must|got to)\s+(?P<what>.+)$",
    _dated_plan,
)


# What the user will or means to do: "I'm going to …", "we're flying …", "I have a dentist appointment …".
todo.add(
    r"^(?:i|we) (?:(?:will|'ll|am going to|'m going to|are going to|'re going to|plan to|am planning to|"
    r"'m planning to|are planning to|'re planning to|intend to|should|hope to|want to|would like to|'d like to|"
    r"expect to|might|may)\s+|(?:am|'m|are|'re) \w+ing\b|(?:have|'ve got|have got) (?:a|an|my|our|the|two|three|\d+) |"
    r"(?:leave|fly|travel|start|move|go|meet|visit|return|arrive|begin|launch|ship|present|interview)\b)",
    _dated_plan,
)


# What is due: "my report is due …", "the deadline is …", "my interview is on …".
todo.add(
    r"^(?:my|our|the) (?P<what>.+?) (?:is|are) due\b|^(?:my|our|the) (?:[\w-]+ ){0,3}?deadline\b.*\bis\b|"
    r"^(?:my|our) (?:[\w'-]+ ){0,3}?(?:is|are|will be|'s) (?:on|at|scheduled for|set for|planned for|booked for)\b",
    _dated_plan,
)
