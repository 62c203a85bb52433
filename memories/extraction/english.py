"""English patterns: one user sentence in, zero or more candidate memories out.

Only the user's own first-person statements, explicit requests and instructions produce
candidates; questions, greetings, hedges and small talk produce nothing. Each clause yields at most
one candidate, from the first rule that matches, in the order of `_CLAUSE_RULES`.
"""

import re
from collections.abc import Callable

from memories.extraction import lexicon
from memories.extraction.candidates import (
    EXPLICIT,
    HIGH,
    LOW,
    MEDIUM,
    Ctx,
    apply_context,
    make,
    name_kind,
    named_entities,
    tool_entities,
)
from memories.extraction.changes import english_change
from memories.extraction.dates import DateMatch, annotate_dates, end_of_day, find_date, find_past_date
from memories.extraction.phrasing import (
    ADVERB_RUN,
    capitalize,
    drop_fillers,
    expand_contractions,
    slot_key,
    split_clauses,
    strip_end,
    third_person,
    third_person_rest,
    value_text,
)
from memories.providers.llm_types import CandidateMemory

Rule = Callable[[str, Ctx], CandidateMemory | None]

ADV = ADVERB_RUN
_DETERMINERS = {"the", "a", "an", "this", "that", "these", "those", "my", "your", "it", "so", "such", "same", "same."}
IMPERATIVE_VERBS = {
    "use",
    "write",
    "reply",
    "respond",
    "answer",
    "call",
    "add",
    "remove",
    "put",
    "keep",
    "run",
    "make",
    "format",
    "name",
    "include",
    "avoid",
    "ask",
    "check",
    "double-check",
    "commit",
    "push",
    "deploy",
    "send",
    "say",
    "speak",
    "show",
    "give",
    "explain",
    "mention",
    "start",
    "stop",
    "end",
    "sign",
    "cite",
    "test",
    "document",
    "comment",
    "indent",
    "wrap",
    "translate",
    "summarize",
    "summarise",
    "list",
    "be",
    "stay",
    "address",
    "refer",
    "spell",
    "greet",
    "confirm",
    "tell",
    "skip",
    "delete",
    "create",
    "open",
    "close",
    "save",
    "log",
    "print",
    "return",
    "follow",
    "provide",
    "sort",
    "wait",
    "read",
    "look",
    "prefer",
    "type",
    "install",
    "pin",
    "lint",
    "quote",
    "label",
    "tag",
    "round",
    "convert",
    "store",
    "back",
    "set",
    "try",
    "go",
    "let",
    "assume",
    "treat",
    "think",
    "respect",
    "mark",
    "number",
    "capitalize",
    "capitalise",
    "limit",
}
# "remember to X" with one of these verbs is an instruction to the assistant, not a reminder.
_ASSISTANT_VERBS = IMPERATIVE_VERBS - {"call", "send", "buy", "go", "pay", "book", "pick"}

# ---------------------------------------------------------------------------------------------
# Sentence level: explicit requests and corrections wrap the clause rules
# ---------------------------------------------------------------------------------------------

_LEAD_FILLER = re.compile(
    r"^(?:(?:well|so|oh+|o+h|ah+|aw+|wow|yay|phew|hmm+|hey|hi|hello|ok|okay|alright|also|and|btw|by the way|fyi|anyway|"
    r"anyways|um|uh|yeah|yes|heads up|update|good news|big news|"
    r"just so you know|for your information|guess what)"
    r"\s*[,!.:;—–-]*\s+)+",
    re.I,
)
_REQUEST = r"(?:(?:can|could|would|will) you (?:please )?|i (?:want|need|would like|'d like) you to |please )?"
_REMEMBER = re.compile(
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
_CORRECTION = re.compile(
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


# "Oops, I typed that wrong: my daughter is called Sofia": the slip itself is not the statement.
_OWN_SLIP = re.compile(
    r"^(?:i (?:typed|wrote|said|spelled|got) (?:that|it|this|her name|his name) wrong|i misspoke|my (?:bad|mistake))"
    r"[,:;.!]*\s*",
    re.I,
)


def extract_sentence(sentence: str, ctx: Ctx) -> list[CandidateMemory]:
    body = _LEAD_FILLER.sub("", sentence).strip()
    body = _LABEL.sub("", body)
    question = body.endswith("?")
    body = strip_end(body.rstrip("?").strip())
    if len(body) < 6:
        return []
    correction = _CORRECTION.match(body)
    request = correction["rest"] if correction else body  # "Actually, forget that …"
    m = _FORGET_FROM_MEMORY.match(request) or _FORGET.match(request)
    if m and not re.match(r"^(?:to|about)\b", m["what"], re.I):
        return _forget(m["what"], ctx)
    m = _REMEMBER.match(request)
    if m:
        return _remember(m["body"], ctx, reminder="forget" in m["verb"].lower())
    if question:
        return []
    m = _CORRECTION.match(body)
    if m and len(m["rest"]) >= 6:
        return _correction(_OWN_SLIP.sub("", m["rest"]), ctx.but(correction=True))
    return _clauses(body, ctx)


def _clauses(text: str, ctx: Ctx) -> list[CandidateMemory]:
    out = []
    for clause in split_clauses(text):
        candidate = extract_clause(clause, ctx)
        if candidate is not None:
            out.append(apply_context(candidate, ctx))
    return out


def _forget(what: str, ctx: Ctx) -> list[CandidateMemory]:
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


def _remember(body: str, ctx: Ctx, *, reminder: bool = False) -> list[CandidateMemory]:
    """ "remember that …" stores the statement; "remember to always …" is a rule; "remember to <do
    something the assistant does>" is an instruction; "don't forget to …" and dated ones are reminders."""
    body = strip_end(body)
    ctx = ctx.but(explicit=True)
    to = re.match(r"^to\s+(?P<act>.+)$", body, re.I)
    if to:
        act = to["act"]
        due = find_date(act, ctx.now)
        if due is None and re.match(r"^(?:always|never)\b", act, re.I):
            candidate = _rule(act, ctx)
        elif due is None and not reminder and _first_word(act) in _ASSISTANT_VERBS:
            candidate = _rule_candidate(ctx, "must", act)
        else:
            candidate = _reminder(act, due, ctx)
        return [apply_context(candidate, ctx)] if candidate else []
    found = _clauses(body, ctx)
    if found:
        return found
    if len(body) < 6:
        return []
    return [apply_context(_generic_statement(body, ctx, "fact", MEDIUM), ctx)]


def _correction(rest: str, ctx: Ctx) -> list[CandidateMemory]:
    if re.match(r"^(?:sorry|thanks|thank you|haha|lol|no worries|no problem|never ?mind)\b", rest, re.I):
        return []  # "Oops, sorry 'bout the accident": sympathy after "oops", not a correction
    found = _clauses(rest, ctx)
    if found:
        return found
    rest = strip_end(rest)
    first = _first_word(rest)
    if first in IMPERATIVE_VERBS:
        return [apply_context(_rule_candidate(ctx, "must", rest), ctx)]
    if re.match(r"^(?:don't|do not)\s+", rest, re.I):
        return [
            apply_context(_rule_candidate(ctx, "never", re.sub(r"^(?:don't|do not)\s+", "", rest, flags=re.I)), ctx)
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
    return make(
        ctx,
        content,
        category,
        importance,
        retention="permanent" if ctx.explicit else "long",
        subject=subject,
        predicate="is" if subject else "",
        value=value,
        entities=named_entities(text[1:]),
    )


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


def _first_word(text: str) -> str:
    m = re.match(r"\s*([\w'-]+)", text)
    return m.group(1).lower() if m else ""


_LEAD_TIME = re.compile(r"^(?:these days|nowadays|lately|at the moment|currently|now),?\s+(?=(?:i|we)\b)", re.I)


def extract_clause(clause: str, ctx: Ctx) -> CandidateMemory | None:
    clause = expand_contractions(strip_end(_LEAD_TIME.sub("", _LEAD_FILLER.sub("", clause.strip()))))
    if len(clause) < 6 or _GREETING.match(clause):
        return None
    rule = _rule(clause, ctx)
    if rule is not None:
        return rule
    if _REMIND.match(clause):
        return _todo(clause, ctx)
    if _QUESTION_START.match(clause) or _HEDGE.match(clause):
        return None
    for extract in _CLAUSE_RULES:
        candidate = extract(clause, ctx)
        if candidate is not None:
            return candidate
    if ctx.explicit or ctx.correction:
        # "Nah, I haven't" is an answer, not a statement to keep: a fact needs a few words.
        if re.match(r"^(?:i|my|we|our|i'm|i've)\b", clause, re.I) and len(clause.split()) >= 4:
            return _generic_statement(clause, ctx, "fact", MEDIUM)
    return None


# Rules: instructions to the assistant that should hold from now on ----------------------------

_RULE_PREFIX = re.compile(
    r"^(?:(?:please|pls|and|also|so|ok|okay|oh|btw|one more thing|from now on|going forward|moving forward|"
    r"in (?:the )?future|next time|for future reference|for the future|as a rule|in general)[,:]?\s+)+",
    re.I,
)
_FUTURE = re.compile(
    r"from now on|going forward|moving forward|in (?:the )?future|next time|for future reference|for the future",
    re.I,
)
_RULE = re.compile(
    r"^(?:you (?:should|must|need to|have to|will) |make sure (?:to |that you |you )?|be sure to |"
    r"i (?:want|need|would like|'d like) you to )?(?P<mod>always|never ever|never|don't ever|do not ever|"
    r"don't you ever)\s+(?P<act>.+)$",
    re.I,
)
_RULE_AGAIN = re.compile(r"^(?:don't|do not|never)\s+(?P<act>.+?)\s+(?:ever )?again$", re.I)
_RULE_YOU_NOT = re.compile(
    r"^you (?:should not|must not|shouldn't|mustn't|should never|must never)\s+(?P<act>.+)$", re.I
)
_RULE_MUST = re.compile(r"^you (?:must|have to)\s+(?P<act>.+)$", re.I)
_RULE_WANT = re.compile(r"^(?:you (?:should|need to)|i (?:want|need|would like|'d like) you to)\s+(?P<act>.+)$", re.I)
_RULE_DONT = re.compile(r"^(?:don't|do not)\s+(?P<act>.+)$", re.I)
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


_RULE_SCOPE = re.compile(
    r"^(?:when|whenever|if) you (?P<task>[^,]{3,60}),\s*(?P<rest>(?:always|never|don't|do not)\b.+)$", re.I
)


def _scope_text(task: str) -> str:
    task = re.sub(r"\bfor me\b", "for the user", task, flags=re.I)
    return " when " + re.sub(r"^(\w+)", lambda m: m[1] + "ing" if not m[1].endswith("ing") else m[1], task).replace(
        "eing ", "ing "
    )


def _rule(clause: str, ctx: Ctx) -> CandidateMemory | None:
    scoped = _RULE_SCOPE.match(clause)
    if scoped:
        # "When you write SQL for me, always use uppercase keywords": the rule holds for that task.
        candidate = _rule(scoped["rest"], ctx)
        if candidate is not None:
            candidate.content += _scope_text(scoped["task"])
            candidate.subject = slot_key(f"{candidate.subject} {scoped['task']}")
        return candidate
    prefix = _RULE_PREFIX.match(clause)
    future = ctx.future or bool(prefix and _FUTURE.search(prefix.group(0)))
    body = clause[prefix.end() :] if prefix else clause
    if re.match(r"^(?:i|we|my|our)\b", body, re.I) and not re.match(
        r"^i (?:want|need|would like|'d like) you to\b", body, re.I
    ):
        if future and prefix:
            return extract_clause(body, ctx.but(future=True))
        return None
    m = _RULE.match(body)
    if m:
        mod = "always" if m["mod"].lower() == "always" else "never"
        return _rule_candidate(ctx, mod, m["act"])
    m = _RULE_AGAIN.match(body) or _RULE_YOU_NOT.match(body)
    if m:
        return _rule_candidate(ctx, "never", m["act"])
    m = _RULE_MUST.match(body)
    if m:
        return _rule_candidate(ctx, "must", m["act"])
    m = _RULE_DONT.match(body)
    if m and _first_word(m["act"]) in _STYLE_VERBS and len(m["act"].split()) >= 2:
        # "Don't use var in JavaScript": a standing instruction about how the assistant works.
        return _rule_candidate(ctx, "never", m["act"])
    if future:
        m = _RULE_WANT.match(body)
        if m:
            return _rule_candidate(ctx, "must", m["act"])
        m = _RULE_DONT.match(body)
        if m:
            return _rule_candidate(ctx, "never", m["act"])
        if _first_word(body) in IMPERATIVE_VERBS:
            return _rule_candidate(ctx, "must", body)
    return None


def _rule_candidate(ctx: Ctx, mod: str, act: str) -> CandidateMemory | None:
    act = strip_end(act)
    if _first_word(act) in _DETERMINERS or len(act) < 3:
        return None
    if _first_word(act) in {"been", "heard", "seen", "tried", "done", "had", "met", "gone", "known", "thought"}:
        return None  # "never been to something like that": an experience, not an instruction
    act = third_person_rest(act)
    content = {
        "always": f"User wants the assistant to always {act}",
        "never": f"User wants the assistant to never {act}",
        "must": f"User wants the assistant to {act}",
    }[mod]
    return make(
        ctx,
        content,
        "rule",
        HIGH,
        retention="permanent",
        subject=act,
        predicate="rule",
        value=mod,
        entities=tool_entities(act),
        confidence=0.9,
    )


# Skills: "To deploy, run make deploy" ------------------------------------------------------

_SKILL = re.compile(
    r"^to (?P<goal>[a-z][\w\s'/.-]{2,60}?),\s*(?:you |we |one )?(?:need to |have to |should |must |can |just )?"
    r"(?P<steps>[a-z].+)$",
    re.I,
)
_SKILL_WAY = re.compile(
    r"^the (?:way|trick|best way|only way|right way|fix) to (?P<goal>.{3,60}?) is (?:to )?(?P<steps>.+)$", re.I
)
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


def _skill(clause: str, ctx: Ctx) -> CandidateMemory | None:
    m = _SKILL.match(clause)
    if m and _first_word(m["steps"]) in _STEP_VERBS:
        content = f"To {m['goal']}, {m['steps']}"
    else:
        m = _SKILL_WAY.match(clause)
        if not m:
            return None
        content = f"To {m['goal']}, {m['steps']}"
    return make(
        ctx,
        third_person_rest(content),
        "skill",
        MEDIUM,
        subject=m["goal"],
        predicate="how to",
        value=value_text(m["steps"]),
        entities=tool_entities(m["steps"]),
    )


# Decisions ----------------------------------------------------------------------------------

_DECIDED = re.compile(
    r"^(?:so |then |ok |okay |alright )?(?P<who>we|i)(?: have|'ve| had)? (?:finally |just |already |now |all )?"
    r"(?P<verb>decided|agreed|chose|settled|opted|went|committed)(?P<prep> on| to| with| for| that)?\s+(?P<what>.+)$",
    re.I,
)
_LETS = re.compile(
    r"^(?:(?:ok(?:ay)?|alright|so|then|fine|good)[,]?\s+)*let's (?P<verb>go with|use|stick with|pick|choose|"
    r"switch to|adopt|settle on|go for|move to|migrate to)\s+(?P<what>.+)$",
    re.I,
)
_WILL_USE = re.compile(
    r"^(?P<who>i|we)(?:'ll| will| am going to|'m going to| are going to|'re going to| plan to| am planning to|"
    r"'m planning to| are planning to|'re planning to)\s+(?P<verb>use|go with|stick with|switch to|adopt|try|"
    r"move to|migrate to|pick|choose)\s+(?P<what>.+)$",
    re.I,
)
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
    if not value or _first_word(value) in {"that", "it", "this", "them", "something", "again", "one", "both"}:
        return None
    subject = lexicon.domain_of(value) or lexicon.domain_of(what) or " ".join(slot_key(value).split()[:6])
    entities = tool_entities(what) or [(name, "tool") for name, _ in named_entities(value)]
    return make(
        ctx,
        content,
        "decision",
        importance,
        subject=subject,
        predicate="decided",
        value=value,
        entities=entities,
    )


def _decision(clause: str, ctx: Ctx) -> CandidateMemory | None:
    m = _LETS.match(clause)
    if m:
        what = third_person_rest(m["what"])
        return _decision_candidate(ctx, f"User decided to {m['verb'].lower()} {what}", f"{m['verb']} {what}", 0.7)
    m = _DECIDED.match(clause)
    if not m:
        return None
    verb, prep, what = m["verb"].lower(), (m["prep"] or "").strip().lower(), third_person_rest(m["what"])
    # "went to Paris" is travel, not a decision; these verbs decide only with their own preposition.
    allowed = {"settled": {"on"}, "went": {"with"}, "opted": {"for", "to"}, "committed": {"to"}}
    if verb in allowed and prep not in allowed[verb]:
        return None
    content = f"User {verb}{' ' + prep if prep else ''} {what}"
    return _decision_candidate(ctx, content, what, 0.7)


def _weak_decision(clause: str, ctx: Ctx) -> CandidateMemory | None:
    m = _WILL_USE.match(clause)
    if not m:
        return None
    return _decision_candidate(ctx, third_person(clause), f"{m['verb']} {m['what']}", MEDIUM)


# Todos and plans ---------------------------------------------------------------------------------

_REMIND = re.compile(
    r"^(?:please |can you |could you |would you )?(?:remind me|don't let me forget|do not let me forget)"
    r"(?: to| about| that)?\s+(?P<what>.+)$",
    re.I,
)
_TODO_STRONG = re.compile(
    r"^(?:i|we) (?:(?:really|still|also|just|definitely|absolutely|probably|urgently|seriously) )*"
    r"(?:need to|have to|'ve got to|have got to|gotta|must|got to)\s+(?P<what>.+)$",
    re.I,
)
_TODO_LABEL = re.compile(r"^(?:todo|to-do|to do|task|reminder)\s*[:\-]\s*(?P<what>.+)$", re.I)
_TODO_WEAK = re.compile(
    r"^(?:i|we) (?:(?:will|'ll|am going to|'m going to|are going to|'re going to|plan to|am planning to|"
    r"'m planning to|are planning to|'re planning to|intend to|should|hope to|want to|would like to|'d like to|"
    r"expect to|might|may)\s+|(?:am|'m|are|'re) \w+ing\b|(?:have|'ve got|have got) (?:a|an|my|our|the|two|three|\d+) |"
    r"(?:leave|fly|travel|start|move|go|meet|visit|return|arrive|begin|launch|ship|present|interview)\b)",
    re.I,
)
_DUE = re.compile(
    r"^(?:my|our|the) (?P<what>.+?) (?:is|are) due\b|^(?:my|our|the) (?:[\w-]+ ){0,3}?deadline\b.*\bis\b|"
    r"^(?:my|our) (?:[\w'-]+ ){0,3}?(?:is|are|will be|'s) (?:on|at|scheduled for|set for|planned for|booked for)\b",
    re.I,
)
_DANGLING = re.compile(r"\s+(?:by|on|before|until|till|due|at|for|from|in|is|are|was)\s*$", re.I)


def _without_date(text: str, due: DateMatch | None) -> str:
    if due is None:
        return text
    return (_DANGLING.sub("", text[: due.start].rstrip()) + " " + text[due.end :].lstrip()).strip()


def _annotate(text: str, due: DateMatch | None) -> str:
    if due is None or due.is_absolute:
        return text
    return f"{text[: due.end]} ({due.iso}){text[due.end :]}"


def _todo_candidate(ctx: Ctx, content: str, task: str, due: DateMatch | None, importance: float) -> CandidateMemory:
    expires_at = end_of_day(due.due, ctx.now) if due else None
    retention = "long"
    if due is not None and (due.due - ctx.now.date()).days <= 3:
        retention = "short"
    return make(
        ctx,
        content,
        "todo",
        importance,
        retention=retention,
        expires_at=expires_at,
        subject=" ".join(slot_key(task).split()[:8]),
        predicate="due",
        value=due.due.isoformat() if due else "",
        entities=named_entities(task),
    )


def _reminder(act: str, due: DateMatch | None, ctx: Ctx) -> CandidateMemory:
    act = strip_end(act)
    content = f"User wants to be reminded to {third_person_rest(_annotate(act, due))}"
    return _todo_candidate(ctx, content, third_person_rest(_without_date(act, due)), due, HIGH)


def _todo(clause: str, ctx: Ctx) -> CandidateMemory | None:
    due = find_date(clause, ctx.now)
    if due is not None and due.due < ctx.now.date():
        due = None
    m = _REMIND.match(clause)
    if m:
        # Asking to be reminded is as explicit as "remember …".
        return apply_context(_reminder(m["what"], find_date(m["what"], ctx.now), ctx), ctx.but(explicit=True))
    m = _TODO_LABEL.match(clause)
    if m:
        what = m["what"]
        due = find_date(what, ctx.now)
        content = f"User has a todo: {third_person_rest(_annotate(what, due))}"
        return _todo_candidate(ctx, content, third_person_rest(_without_date(what, due)), due, MEDIUM)
    # Without a date, "I need to …" is usually the task at hand in this conversation, not a todo.
    if due is None or not (_TODO_STRONG.match(clause) or _TODO_WEAK.match(clause) or _DUE.match(clause)):
        return None
    content = third_person(_annotate(clause, due))
    task = re.sub(r"^User(?:'s team)?\s+", "", third_person(_without_date(clause, due)))
    return _todo_candidate(ctx, content, task, due, MEDIUM)


# Preferences ----------------------------------------------------------------------------------

_FAVORITE = re.compile(
    r"^(?P<who>my|our) (?:absolute |all[- ]time |personal )?fav(?:ou?rite|e) (?P<attr>[\w' -]{2,40}?) "
    r"(?:is|are|has to be|would be|was|has always been)\s+(?P<val>.+)$",
    re.I,
)
_FAVORITE_REVERSED = re.compile(
    r"^(?P<val>[\w' .+#-]{2,40}?) (?:is|are) (?:definitely |probably )?my (?:absolute |all[- ]time )?"
    r"fav(?:ou?rite|e)(?: (?P<attr>[\w' -]{2,40}))?$",
    re.I,
)
_PREFER_TO = re.compile(
    r"^i (?P<advs>" + ADV + r")(?:prefer|would prefer|'d prefer) to (?P<act>.+?)"
    r"(?:\s+(?:rather than|instead of|over|than) (?P<alt>.+))?$",
    re.I,
)
_PREFER = re.compile(
    r"^i (?P<advs>" + ADV + r")(?P<verb>prefer|would prefer|'d prefer|would rather have|'d rather have|would rather|"
    r"'d rather)\s+(?P<val>.+?)(?:\s+(?P<conn>over|to|rather than|instead of|than|more than) (?P<alt>.+))?$",
    re.I,
)
_TRAILING_FILLER = re.compile(
    r"(?:\s+(?:now|nowadays|these days|instead|anymore|any more|too|as well|though|actually|honestly|lately|"
    r"for real|more|a lot|so much|very much|the most))+$",
    re.I,
)


def _clean_value(text: str) -> str:
    return value_text(_TRAILING_FILLER.sub("", strip_end(text)))


def preference_subject(value: str, alt: str = "") -> str:
    domain = lexicon.domain_of(value) or (lexicon.domain_of(alt) if alt else "")
    if domain:
        return f"{domain} preference"
    if alt:
        return " or ".join(sorted([slot_key(value), slot_key(alt)]))
    words = slot_key(value).split()
    return f"{words[-1]} preference" if words else ""


def _favorite(clause: str, ctx: Ctx) -> CandidateMemory | None:
    m = _FAVORITE.match(clause)
    if m:
        attr, val = m["attr"].strip().lower(), _clean_value(third_person_rest(m["val"]))
        owner = "User's" if m["who"].lower() == "my" else "User's team's"
    else:
        m = _FAVORITE_REVERSED.match(clause)
        if not m or _first_word(m["val"]) in _DETERMINERS | {"i", "that", "it", "this"}:
            return None
        val = _clean_value(m["val"])
        domain = lexicon.domain_of(val)
        if domain and domain not in lexicon.TOOL_DOMAINS and val[1:] == val[1:].lower():
            # Capitalised only because it starts the sentence ("Blue is my favorite color").
            val = val[:1].lower() + val[1:]
        attr = (m["attr"] or domain or "thing").strip().lower()
        owner = "User's"
    if not val:
        return None
    kind = "tool" if lexicon.domain_of(val) in lexicon.TOOL_DOMAINS else name_kind(attr)
    entities = [(val, kind)] if kind != "other" or (val[:1].isupper() and m.re is _FAVORITE) else []
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


def _prefer(clause: str, ctx: Ctx) -> CandidateMemory | None:
    m = _PREFER_TO.match(clause)
    if m:
        act = _clean_value(third_person_rest(m["act"]))
        alt = _clean_value(third_person_rest(m["alt"])) if m["alt"] else ""
        advs = drop_fillers(m["advs"])
        content = f"User {advs + ' ' if advs else ''}prefers to {act}" + (f" rather than {alt}" if alt else "")
        value = act
    else:
        m = _PREFER.match(clause)
        if not m:
            return None
        value, alt = m["val"], m["alt"] or ""
        if m["conn"] and m["conn"].lower() == "to" and (value.endswith("ing") or len(alt.split()) > 4):
            # "I prefer going to the gym": "to" is not the comparison here.
            value, alt = f"{value} to {alt}", ""
        value, alt = _clean_value(third_person_rest(value)), _clean_value(third_person_rest(alt)) if alt else ""
        if not value or _first_word(value) in {"it", "that", "this", "them", "not"}:
            return None
        advs = drop_fillers(m["advs"])
        if "rather" in m["verb"].lower():
            content = f"User {advs + ' ' if advs else ''}would rather {value}" + (f" than {alt}" if alt else "")
        else:
            content = f"User {advs + ' ' if advs else ''}prefers {value}" + (f" over {alt}" if alt else "")
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


_LIKES = {
    "like": ("likes", "likes"),
    "love": ("loves", "likes"),
    "enjoy": ("enjoys", "likes"),
    "adore": ("adores", "likes"),
    "am a fan of": ("is a fan of", "likes"),
    "'m a fan of": ("is a fan of", "likes"),
    "am a big fan of": ("is a big fan of", "likes"),
    "'m a big fan of": ("is a big fan of", "likes"),
    "am a huge fan of": ("is a huge fan of", "likes"),
    "'m a huge fan of": ("is a huge fan of", "likes"),
    "am into": ("is into", "likes"),
    "'m into": ("is into", "likes"),
    "hate": ("hates", "dislikes"),
    "dislike": ("dislikes", "dislikes"),
    "detest": ("detests", "dislikes"),
    "can't stand": ("can't stand", "dislikes"),
    "cannot stand": ("can't stand", "dislikes"),
    "don't like": ("doesn't like", "dislikes"),
    "do not like": ("doesn't like", "dislikes"),
    "don't enjoy": ("doesn't enjoy", "dislikes"),
    "do not enjoy": ("doesn't enjoy", "dislikes"),
    "don't love": ("doesn't love", "dislikes"),
    "am not a fan of": ("is not a fan of", "dislikes"),
    "'m not a fan of": ("is not a fan of", "dislikes"),
    "am not into": ("is not into", "dislikes"),
    "'m not into": ("is not into", "dislikes"),
    "no longer like": ("no longer likes", "dislikes"),
    "stick to": ("sticks to", "likes"),
    "stick with": ("sticks with", "likes"),
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
_OBJECT_NOT_A_PREFERENCE = re.compile(
    r"^(?:it|that|this|these|those|them|you|your|how|what|when|where|the way you|the idea|the answer|"
    r"the suggestion|the response|to know|to ask|to see|to get|to have you)\b|^to$",
    re.I,
)


def _sentiment(clause: str, ctx: Ctx) -> CandidateMemory | None:
    m = _SENTIMENT.match(clause.replace("’", "'"))
    if not m:
        return None
    obj = _clean_value(third_person_rest(m["obj"]))
    if not obj or _OBJECT_NOT_A_PREFERENCE.match(obj):
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

_WHEN = (
    r"every (?:single )?(?:morning|day|night|evening|week|weekend|month|year|monday|tuesday|wednesday|thursday|friday|"
    r"saturday|sunday)|each (?:morning|day|week|night)|on (?:mondays|tuesdays|wednesdays|thursdays|fridays|"
    r"saturdays|sundays|weekends|weekdays)|first thing in the morning|before bed|after lunch|daily|weekly"
)
_HABIT = re.compile(
    r"^i (?P<freq>usually|always|normally|typically|generally|often|regularly|frequently|never|rarely|seldom|"
    r"tend to|mostly|sometimes)\s+(?P<act>.+)$",
    re.I,
)
_HABIT_LEAD = re.compile(r"^(?P<when>" + _WHEN + r")[,]?\s+(?P<rest>i\s+.+)$", re.I)
_HABIT_TAIL = re.compile(
    r"^(?P<rest>i\s+(?!am\b|'m\b|was\b)[a-z]+\b.+?)\s+(?P<when>" + _WHEN + r")"
    r"(?P<tail>\s+(?:before|after|at|on|in|with|during)\s+[\w' -]{1,30})?$",
    re.I,
)


def _habit(clause: str, ctx: Ctx) -> CandidateMemory | None:
    m = _HABIT.match(clause)
    if m:
        act, when, content = m["act"], m["freq"].lower(), third_person(clause)
    else:
        m = _HABIT_LEAD.match(clause) or _HABIT_TAIL.match(clause)
        if not m:
            return None
        act = re.sub(r"^i\s+", "", m["rest"], flags=re.I)
        when = m["when"].lower()
        tail = m.groupdict().get("tail") or ""
        content = f"{third_person(m['rest'])} {when}{third_person_rest(tail)}"
    if _OBJECT_NOT_A_PREFERENCE.match(act):
        return None
    return make(
        ctx,
        content,
        "workflow",
        MEDIUM,
        subject=_clean_value(third_person_rest(act)),
        predicate="habit",
        value=when,
        entities=tool_entities(act),
    )


# Facts about the user ---------------------------------------------------------------------------------

_NAME = re.compile(
    r"^(?:my name is|my name's|i'm called|i am called|call me|people call me|you can call me|everyone calls me|"
    r"i go by)\s+(?P<name>[A-Za-z][\w'-]*(?:\s+[A-Z][\w'-]*)?)$",
    re.I,
)
_IM_NAME = re.compile(r"^(?:I'm|I am|Im|This is)\s+(?P<name>[A-Z][a-z]+(?:\s+[A-Z][a-z]+)?)$")
_ROLE = re.compile(
    r"^i(?:'m| am) (?:currently |now |still )?(?:a|an) (?P<role>.+)$|"
    r"^i (?:currently |now )?work as (?:a |an )?(?P<role2>.+)$",
    re.I,
)
_ROLE_CUT = re.compile(r"\s+(?:at|for|in|from|with|who|and|but|since|based|working|by|on)\b.*$", re.I)
_EMPLOYER = re.compile(
    r"^i (?:currently |now |still )?(?:work|am working|'m working) (?:at|for) (?P<org>.+)$|"
    r"^i (?:just |recently )?(?:joined|started at|started working at|started a new job at|got a job at)"
    r"\s+(?P<org2>.+)$",
    re.I,
)
_WORK_IN = re.compile(r"^i (?:currently |now )?work in (?P<field>.+)$", re.I)
_LIVE = re.compile(
    r"^i (?:currently |now |still )?(?:live|am living|'m living|reside|am based|'m based|am located|'m located) "
    r"in (?P<place>.+)$|^i(?:'ve| have)? (?:just |recently |finally |officially )?(?:moved|relocated)"
    r"(?: (?:out )?from [^,]+?)?(?: to| back to| over to) (?P<place2>.+)$|"
    r"^i(?:'ve| have) (?:been )?(?:lived|living) in (?P<place3>.+)$",
    re.I,
)
_ORIGIN = re.compile(
    r"^i(?:'m| am) (?:originally )?from (?P<place>.+)$|^i (?:originally )?come from (?P<place2>.+)$|"
    r"^i was born in (?P<place3>.+)$|^i grew up in (?P<place4>.+)$",
    re.I,
)
_IM_WORD = re.compile(
    r"^i(?:'m| am) (?:(?:also|actually|now|still|severely|mildly|very)\s+)*(?:a )?(?P<word>[a-z][a-z -]+?)(?:,.*)?$",
    re.I,
)
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
}
_ALLERGY = re.compile(r"^i(?:'m| am) (?:very |severely |mildly )?allergic to (?P<what>.+)$", re.I)
_AGE = re.compile(
    r"^i(?:'m| am) (?:now |actually )?(?P<age>\d{1,3})(?: years old| yrs old| y/?o| years)?"
    r"(?:,? not \d{1,3}\b.*)?$",
    re.I,
)
_SPEAK = re.compile(r"^i (?:also )?speak (?P<langs>.+)$", re.I)
_ON_OS = re.compile(
    r"^i(?:'m| am) (?:on|using|running) "
    r"(?P<os>windows(?: \d+)?|mac(?:os)?|a mac|linux|ubuntu|debian|fedora|arch(?: linux)?)$",
    re.I,
)
_PLACE_CUT = re.compile(
    r"\s+(?:with|since|for|because|and|but|now|these days|at the moment|last|a few|\w+ (?:years?|months?|weeks?) ago|"
    r"in \d{4}|recently|this year|this month|two|three)\b.*$|,.*$",
    re.I,
)


def _identity(clause: str, ctx: Ctx) -> CandidateMemory | None:
    m = _NAME.match(clause) or _IM_NAME.match(clause)
    if m and m["name"].lower() not in lexicon.NATIONALITIES and m["name"].lower() not in lexicon.DIETS:
        name = m["name"]
        if _first_word(name) in {"a", "an", "the", "not", "so", "very", "just"}:
            return None
        return make(
            ctx,
            f"User's name is {name}",
            "fact",
            HIGH,
            subject="name",
            predicate="is",
            value=name,
            entities=[(name, "person")],
        )
    m = _ALLERGY.match(clause)
    if m:
        what = _clean_value(third_person_rest(m["what"]))
        return make(
            ctx,
            f"User is allergic to {what}",
            "fact",
            HIGH,
            subject=f"{what} allergy",
            predicate="is",
            value="allergic",
        )
    m = _AGE.match(clause)
    if m:
        return make(ctx, f"User is {m['age']} years old", "fact", MEDIUM, subject="age", predicate="is", value=m["age"])
    m = _ON_OS.match(clause)
    if m:
        os_name = re.sub(r"^a\s+", "", m["os"], flags=re.I)
        return make(
            ctx,
            f"User is on {os_name}",
            "fact",
            MEDIUM,
            subject="operating system",
            predicate="uses",
            value=os_name,
            entities=[(os_name, "tool")],
        )
    m = _ORIGIN.match(clause)
    if m:
        place = _clean_value(_PLACE_CUT.sub("", m["place"] or m["place2"] or m["place3"] or m["place4"]))
        return make(
            ctx,
            third_person(clause),
            "fact",
            HIGH,
            subject="origin",
            predicate="is from",
            value=place,
            entities=[(place, "place")],
        )
    m = _LIVE.match(clause)
    if m:
        place = _clean_value(_PLACE_CUT.sub("", m["place"] or m["place2"] or m["place3"]))
        return make(
            ctx,
            third_person(clause),
            "fact",
            HIGH,
            subject="residence",
            predicate="lives in",
            value=place,
            entities=[(place, "place")],
        )
    m = _EMPLOYER.match(clause)
    if m:
        org_text = m["org"] or m["org2"]
        org = _clean_value(re.sub(r"\s+(?:as|since|for|in|on)\b.*$|,.*$", "", org_text, flags=re.I))
        entities = [(org, "organization")]
        role = re.search(r"\bas (?:a |an )?(?P<role>.+)$", org_text, re.I)
        return make(
            ctx,
            third_person(clause),
            "fact",
            HIGH,
            subject="employer",
            predicate="works at",
            value=org,
            entities=entities + (named_entities(role["role"]) if role else []),
        )
    m = _ROLE.match(clause)
    if m:
        role_text = m["role"] or m["role2"]
        core = _clean_value(_ROLE_CUT.sub("", role_text))
        words = slot_key(core).split()
        if not words or _first_word(core) in {"fan", "big", "huge", "little", "bit", "lot"}:
            return None
        tail = role_text[len(_ROLE_CUT.sub("", role_text)) :]
        org = re.match(r"\s+(?:at|for)\s+(?P<org>[A-Z][\w&.-]*(?:\s+[A-Z][\w&.-]*)*)", tail)
        entities = [(org["org"], "organization")] if org else []
        if words[-1] in lexicon.OCCUPATIONS or core.lower() in lexicon.OCCUPATIONS:
            return make(
                ctx,
                third_person(clause),
                "fact",
                HIGH,
                subject="occupation",
                predicate="is",
                value=core,
                entities=entities,
            )
        if core.lower() in lexicon.DIETS:
            return make(ctx, third_person(clause), "fact", HIGH, subject="diet", predicate="is", value=core)
        return make(
            ctx, third_person(clause), "fact", MEDIUM, subject=core, predicate="is", value="yes", entities=entities
        )
    m = _IM_WORD.match(clause)
    if m:
        word = re.sub(r"\s+(?:now|these days|nowadays|anymore)$", "", m["word"].strip().lower())
        if word in lexicon.DIETS:
            return make(ctx, f"User is {word}", "fact", HIGH, subject="diet", predicate="is", value=word)
        if word in _HEALTH_STATES:
            return make(ctx, f"User is {word}", "fact", HIGH, subject=f"{word} condition", predicate="is", value="yes")
        if word in lexicon.NATIONALITIES:
            nationality = word.capitalize()
            return make(
                ctx, f"User is {nationality}", "fact", HIGH, subject="nationality", predicate="is", value=nationality
            )
        return None
    m = _WORK_IN.match(clause)
    if m:
        field_text = _clean_value(_PLACE_CUT.sub("", m["field"]))
        if not field_text:
            return None
        if field_text[:1].isupper():
            return make(
                ctx,
                third_person(clause),
                "fact",
                MEDIUM,
                subject="work location",
                predicate="is",
                value=field_text,
                entities=[(field_text, "place")],
            )
        return make(ctx, third_person(clause), "fact", MEDIUM, subject="industry", predicate="is", value=field_text)
    m = _SPEAK.match(clause)
    if m:
        langs = _clean_value(m["langs"])
        return make(ctx, f"User speaks {langs}", "fact", MEDIUM, subject=langs, predicate="speaks", value=langs)
    return None


_MY = re.compile(
    r"^(?P<who>my|our) (?P<attr>[a-z][\w' -]{0,40}?) (?P<verb>is|are|'s|was|were|has been|will be) (?P<val>.+)$", re.I
)
_TRANSIENT_VALUE = re.compile(
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


def _my_attribute(clause: str, ctx: Ctx) -> CandidateMemory | None:
    m = _MY.match(clause)
    if not m:
        return None
    attr = m["attr"].strip()
    if re.search(r"\b(?:says|said|thinks|thought|told|tells|asks|asked|my|your|that|and)\b", attr, re.I):
        return None  # "my teacher says my bowls are …": someone's remark, not an attribute
    words = attr.lower().replace("'s", "").split()
    if not words or words[0] in lexicon.NOT_ATTRIBUTES or "fav" in attr.lower() or words[-1] in lexicon.NOT_ATTRIBUTES:
        return None
    val = _clean_value(third_person_rest(m["val"]))
    if len(val) < 2 or _TRANSIENT_VALUE.match(val):
        return None
    owner = "User's" if m["who"].lower() == "my" else "User's team's"
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

_USES = re.compile(
    r"^(?P<who>i|we) (?P<advs>" + ADV + r")(?:use|am using|'m using|are using|'re using|work with|code in|"
    r"program in|write in|develop in|have been using|'ve been using|rely on|switched to|now use)\s+(?P<what>.+)$",
    re.I,
)
_FOR = re.compile(r"\s+(?:for|to|as|when|at|in|on|with)\s+(?P<purpose>.+)$", re.I)


def _uses(clause: str, ctx: Ctx) -> CandidateMemory | None:
    m = _USES.match(clause)
    if not m:
        return None
    what = third_person_rest(m["what"])
    purpose = _FOR.search(what)
    value = _clean_value(what[: purpose.start()] if purpose else what)
    if not value or _first_word(value) in {"it", "that", "this", "them"}:
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


_WORKING_ON = re.compile(
    r"^(?:i|we)(?:'m| am|'re| are)? (?:currently |now |still |also )?(?:working on|building|developing|writing|"
    r"making|creating|maintaining|work on|maintain|build|develop|migrating|porting|rewriting|redesigning|"
    r"refactoring|launching)\s+(?P<what>.+)$",
    re.I,
)
_CALLED = re.compile(r"\b(?:called|named)\s+(?P<name>[\w.-]+(?:\s+[A-Z][\w.-]*)*)", re.I)
_PROJECT_USES = re.compile(
    r"^(?P<who>the|our|my|this) (?P<noun>project|app|application|repo|repository|codebase|service|site|website|"
    r"backend|frontend|api|stack|server|bot) (?P<verb>uses|is built with|is written in|runs on|is using|"
    r"is deployed on|depends on|is based on|is hosted on)\s+(?P<x>.+)$",
    re.I,
)


def _project(clause: str, ctx: Ctx) -> CandidateMemory | None:
    m = _PROJECT_USES.match(clause)
    if m:
        owner = {"my": "User's", "our": "User's team's"}.get(m["who"].lower(), "The")
        value = _clean_value(_FOR.sub("", third_person_rest(m["x"])))
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
    m = _WORKING_ON.match(clause)
    if not m or _first_word(m["what"]) in {"it", "that", "this", "them", "something"}:
        return None
    what = _clean_value(third_person_rest(m["what"]))
    called = _CALLED.search(what)
    name = called["name"] if called else ""
    entities = [(name, "project")] if name else named_entities(what, "project")
    return make(
        ctx,
        third_person(clause),
        "project",
        MEDIUM,
        subject=name or " ".join(slot_key(what).split()[:6]),
        predicate="works on",
        value=what,
        entities=entities + tool_entities(what),
    )


_HAVE = re.compile(
    r"^(?:i|we) (?:have|'ve got|have got|own)\s+(?P<q>a|an|one|two|three|four|five|\d+)\s+(?P<thing>.+)$", re.I
)
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


def _have(clause: str, ctx: Ctx) -> CandidateMemory | None:
    m = _HAVE.match(clause)
    if not m:
        return None
    thing = _clean_value(third_person_rest(m["thing"]))
    if _first_word(thing) in _NOT_POSSESSIONS or len(thing) < 3:
        return None
    core = re.sub(r"\s+(?:named|called|who|that|which|with|from|at)\b.*$", "", thing, flags=re.I)
    called = _CALLED.search(thing)
    people = lexicon.PERSON_ATTRIBUTES | {"kids", "children", "sons", "daughters"}
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
_EVENT = re.compile(
    # The subject may be left out after "just" / "finally": "Finally submitted my thesis!"
    r"^(?:(?P<who>i|we|my (?:wife|husband|partner) and i)\s+|(?=(?:just|finally|also)\s))"
    r"(?:(?:just|finally|recently|officially|already|also|"
    r"actually|only|successfully|eventually)\s+)*(?P<verb>" + _EVENT_VERBS + r")\b(?P<rest>.*)$",
    re.I,
)
# "I'm signed up for …", "I've been learning the cello for two years", "I'm done with the taxes".
_STATE = re.compile(
    r"^i(?: am|'m) (?:now |finally |officially |all )?(?P<verb>signed up|registered|enrolled|engaged|married|"
    r"pregnant|retired|done with|finished with|through with|recovering from)\b(?P<rest>.+)$|"
    r"^i(?: have|'ve) been (?P<verb2>[a-z]+ing)\b(?P<rest2>.+?\b(?:for|since)\b.+)$",
    re.I,
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
            text = _DANGLING.sub("", text[: found.start].rstrip()) + " " + text[found.end :].lstrip()
    return text.strip()


def _event(clause: str, ctx: Ctx) -> CandidateMemory | None:
    m = _EVENT.match(clause)
    if m:
        verb, rest = m["verb"].lower(), m["rest"]
    else:
        m = _STATE.match(clause)
        if not m:
            return None
        verb, rest = (m["verb"] or m["verb2"]).lower(), m["rest"] or m["rest2"]
    if _NOT_EVENT_OBJECT.match(rest) and verb not in {"retired", "married", "engaged", "pregnant", "quit"}:
        return None
    content = third_person(_trim_aside(clause))
    if not m.groupdict().get("who") and m.re is _EVENT:
        said = third_person_rest(_trim_aside(clause))
        content = f"User {said[:1].lower()}{said[1:]}"
    if (m.groupdict().get("who") or "i").lower() != "i" and re.match(_HOUSEHOLD_VERBS, verb):
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
    value = value_text(_clean_value(third_person_rest(rest))) or verb
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
# the user's life, which `_my_attribute` ("my X is Y") does not cover.
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
_RELATIVE = re.compile(
    r"^(?P<who>my|our) (?:(?:little|big|older|younger|elder|baby|new|oldest|youngest|eldest|late|twin|"
    r"best|step|ex|old|dear|sweet)[- ])?(?P<rel>" + _RELATIVES + r")(?P<name>(?:,)?\s+[A-Z][\w'-]+(?:,)?)?\s+"
    r"(?:(?:just|finally|recently|also|still|now|already)\s+)*"
    r"(?P<verb>" + _RELATIVE_VERBS + r")\b(?P<rest>.*)$",
    re.I,
)
_ASIDE = re.compile(
    r",\s+(?:so|and|but|because|which|since)\s+(?:she|he|they|it|we|that|this)\b.*$|"
    r"\s+(?:,\s*)?(?:like i (?:said|wrote|mentioned)|as i (?:said|wrote|mentioned)).*$",
    re.I,
)


def _trim_aside(text: str) -> str:
    return _ASIDE.sub("", text)


def _relative(clause: str, ctx: Ctx) -> CandidateMemory | None:
    m = _RELATIVE.match(clause)
    if not m or _NOT_EVENT_OBJECT.match(m["rest"]) and not m["verb"].lower().startswith(("is ", "turn")):
        return None
    rel = m["rel"].lower()
    name = (m["name"] or "").strip(" ,")
    content = third_person(_trim_aside(clause))
    entities = [(name, "person" if rel in lexicon.PERSON_ATTRIBUTES or rel.endswith("s") else "other")] if name else []
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

_NAMED_PREDICATE = re.compile(
    r"^(?P<who>[A-Z][\w'-]+|he|she)(?P<verb>'s| is| was| has| had| loves| likes| hates| knows| lives| works| "
    r"studies| turned| turns| speaks| plays| goes| weighs)\b(?P<rest>.+)$",
    re.I,
)


def _named(clause: str, ctx: Ctx) -> CandidateMemory | None:
    m = _NAMED_PREDICATE.match(clause)
    if not m or not ctx.names:
        return None
    who = m["who"]
    if who.lower() in ("he", "she"):
        who = ctx.names[-1]
    elif who not in ctx.names:
        return None
    verb = {"'s": " is"}.get(m["verb"].lower(), m["verb"])
    rest = m["rest"].strip()
    if _TRANSIENT_VALUE.match(rest) or _OBJECT_NOT_A_PREFERENCE.match(rest):
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


_CLAUSE_RULES: list[Rule] = [
    english_change,  # knowledge updates first: "I quit …", "I switched from … to …", "I moved to …"
    _skill,
    _decision,
    _todo,
    _favorite,
    _prefer,
    _sentiment,
    _habit,
    _identity,
    _my_attribute,
    _weak_decision,
    _uses,
    _project,
    _have,
    _event,
    _relative,
    _named,
]

__all__ = ["EXPLICIT", "LOW", "extract_clause", "extract_sentence", "preference_subject"]
