"""English rules for instructions to the assistant ("always …", "never …", "from now on …") and
skills ("To deploy, run make deploy")."""

import re

from memories.extraction import candidates
from memories.extraction.candidates import MEDIUM, Ctx, make, tool_entities
from memories.extraction.english.words import DETERMINERS, IMPERATIVE_VERBS, first_word
from memories.extraction.phrasing import slot_key, strip_end, third_person_rest, value_text
from memories.extraction.rules import Builder, FirstMatch
from memories.providers.llm_types import CandidateMemory

# Rules: instructions to the assistant that should hold from now on ----------------------------

_FUTURE_WORDS = (
    r"from now on|going forward|moving forward|in (?:the )?future|next time|for future reference|for the future"
)


# A lead-in before an instruction; with one of the future words, what follows holds from now on.
_RULE_PREFIX = re.compile(
    r"^(?:(?:please|pls|and|also|so|ok|okay|oh|btw|one more thing|"
    + _FUTURE_WORDS
    + r"|as a rule|in general)[,:]?\s+)+",
    re.I,
)


_FUTURE = re.compile(_FUTURE_WORDS, re.I)


_RULE_SCOPE = re.compile(
    r"^(?:when|whenever|if) you (?P<task>[^,]{3,60}),\s*(?P<rest>(?:always|never|don't|do not)\b.+)$", re.I
)


def _scope_text(task: str) -> str:
    task = re.sub(r"\bfor me\b", "for the user", task, flags=re.I)
    return " when " + re.sub(r"^(\w+)", lambda m: m[1] + "ing" if not m[1].endswith("ing") else m[1], task).replace(
        "eing ", "ing "
    )


def _after_prefix(clause: str, ctx: Ctx) -> tuple[str, bool, bool]:
    """The clause without its lead-in ("please", "from now on"), whether it holds from now on, and
    whether there was a lead-in."""
    prefix = _RULE_PREFIX.match(clause)
    future = ctx.future or bool(prefix and _FUTURE.search(prefix.group(0)))
    return (clause[prefix.end() :] if prefix else clause), future, prefix is not None


def _first_person(body: str) -> bool:
    return bool(re.match(r"^(?:i|we|my|our)\b", body, re.I)) and not re.match(
        r"^i (?:want|need|would like|'d like) you to\b", body, re.I
    )


def future_statement(clause: str, ctx: Ctx) -> str:
    """ "From now on, I take the train": the statement after the lead-in, to be read as one that holds
    from now on ("" when the clause is not one)."""
    body, future, prefixed = _after_prefix(clause, ctx)
    return body if future and prefixed and _first_person(body) else ""


def rule(clause: str, ctx: Ctx) -> CandidateMemory | None:
    scoped = _RULE_SCOPE.match(clause)
    if scoped:
        # "When you write SQL for me, always use uppercase keywords": the rule holds for that task.
        candidate = rule(scoped["rest"], ctx)
        if candidate is not None:
            candidate.content += _scope_text(scoped["task"])
            candidate.subject = slot_key(f"{candidate.subject} {scoped['task']}")
        return candidate
    body, future, _ = _after_prefix(clause, ctx)
    if _first_person(body):
        return None
    return (_INSTRUCTION_FROM_NOW_ON if future else _INSTRUCTION)(body, ctx)


def _as(mode: str) -> Builder:
    """The instruction is the match's `act`, in `mode` ("always", "never" or "must")."""
    return lambda m, body, ctx: rule_candidate(ctx, mode, m["act"])


# "You should …", "make sure to …", "I want you to …" before "always" or "never".
_ASKED = (
    r"(?:you (?:should|must|need to|have to|will) |make sure (?:to |that you |you )?|be sure to |"
    r"i (?:want|need|would like|'d like) you to )?"
)


# The ways an instruction is said, tried in this order on the clause after its lead-in.
_INSTRUCTION = FirstMatch(re.I)


_INSTRUCTION.add(r"^" + _ASKED + r"always\s+(?P<act>.+)$", _as("always"))
_INSTRUCTION.add(
    r"^" + _ASKED + r"(?:never ever|never|don't ever|do not ever|don't you ever)\s+(?P<act>.+)$", _as("never")
)
_INSTRUCTION.add(r"^(?:don't|do not|never)\s+(?P<act>.+?)\s+(?:ever )?again$", _as("never"))
_INSTRUCTION.add(r"^you (?:should not|must not|shouldn't|mustn't|should never|must never)\s+(?P<act>.+)$", _as("never"))
_INSTRUCTION.add(r"^you (?:must|have to)\s+(?P<act>.+)$", _as("must"))


_STYLE_VERBS = {
    "use",
    "write",
    "add",
    "put",
    "include",
    "mention",
    "format",
    "indent",
    "commit",
    "push",
    "deploy",
    "log",
    "reply",
    "respond",
    "answer",
    "sign",
    "apologize",
    "apologise",
    "assume",
    "repeat",
    "translate",
    "suggest",
    "recommend",
    "call",
    "rely",
    "mix",
    "abbreviate",
    "hardcode",
    "hard-code",
}


_DONT = re.compile(r"^(?:don't|do not)\s+(?P<act>.+)$", re.I)


def _dont_in_style(body: str) -> re.Match | None:
    """ "Don't use var in JavaScript": a standing instruction about how the assistant works."""
    m = _DONT.match(body)
    return m if m and first_word(m["act"]) in _STYLE_VERBS and len(m["act"].split()) >= 2 else None


_INSTRUCTION.add(_dont_in_style, _as("never"))


def _imperative(body: str) -> re.Match | None:
    """A bare imperative ("Use tabs"): the whole clause is the act."""
    return re.match(r"(?P<act>.*)", body, re.S) if first_word(body) in IMPERATIVE_VERBS else None


# After "from now on" or "next time", a request or a bare imperative is a standing instruction too.
_INSTRUCTION_FROM_NOW_ON = _INSTRUCTION.extended()
_INSTRUCTION_FROM_NOW_ON.add(
    r"^(?:you (?:should|need to)|i (?:want|need|would like|'d like) you to)\s+(?P<act>.+)$", _as("must")
)
_INSTRUCTION_FROM_NOW_ON.add(_DONT.match, _as("never"))
_INSTRUCTION_FROM_NOW_ON.add(_imperative, _as("must"))


def rule_candidate(ctx: Ctx, mod: str, act: str) -> CandidateMemory | None:
    act = strip_end(act)
    if first_word(act) in DETERMINERS or len(act) < 3:
        return None
    if first_word(act) in {"been", "heard", "seen", "tried", "done", "had", "met", "gone", "known", "thought"}:
        return None  # "never been to something like that": an experience, not an instruction
    act = third_person_rest(act)
    content = {
        "always": f"User wants the assistant to always {act}",
        "never": f"User wants the assistant to never {act}",
        "must": f"User wants the assistant to {act}",
    }[mod]
    return candidates.rule(ctx, content, subject=act, mode=mod, act=act)


# Skills: "To deploy, run make deploy" ------------------------------------------------------

_STEP_VERBS = IMPERATIVE_VERBS | {
    "first",
    "restart",
    "clear",
    "export",
    "press",
    "click",
    "enable",
    "disable",
    "edit",
    "change",
    "copy",
    "pull",
    "build",
    "rebuild",
    "ssh",
    "login",
    "bump",
    "source",
    "activate",
    "reboot",
    "flush",
    "kill",
    "update",
    "upgrade",
    "downgrade",
    "reset",
    "rerun",
    "re-run",
}


skill = FirstMatch(re.I)


_SKILL = re.compile(
    r"^to (?P<goal>[a-z][\w\s'/.-]{2,60}?),\s*(?:you |we |one )?(?:need to |have to |should |must |can |just )?"
    r"(?P<steps>[a-z].+)$",
    re.I,
)


def _to_goal_do_steps(clause: str) -> re.Match | None:
    """ "To deploy, run make deploy": the steps start with a verb."""
    m = _SKILL.match(clause)
    return m if m and first_word(m["steps"]) in _STEP_VERBS else None


def _skill(m: re.Match, clause: str, ctx: Ctx) -> CandidateMemory:
    return make(
        ctx,
        third_person_rest(f"To {m['goal']}, {m['steps']}"),
        "skill",
        MEDIUM,
        subject=m["goal"],
        predicate="how to",
        value=value_text(m["steps"]),
        entities=tool_entities(m["steps"]),
    )


skill.add(_to_goal_do_steps, _skill)
skill.add(r"^the (?:way|trick|best way|only way|right way|fix) to (?P<goal>.{3,60}?) is (?:to )?(?P<steps>.+)$", _skill)
