"""Vocabulary the English rules share: imperative verbs, determiners, the first word of a clause, value cleaning."""

import re

from memories.extraction.phrasing import ADVERB_RUN, strip_end, value_text

ADV = ADVERB_RUN


DETERMINERS = {"the", "a", "an", "this", "that", "these", "those", "my", "your", "it", "so", "such", "same", "same."}


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
ASSISTANT_VERBS = IMPERATIVE_VERBS - {"call", "send", "buy", "go", "pay", "book", "pick"}


def first_word(text: str) -> str:
    m = re.match(r"\s*([\w'-]+)", text)
    return m.group(1).lower() if m else ""


_TRAILING_FILLER = re.compile(
    r"(?:\s+(?:now|nowadays|these days|instead|anymore|any more|too|as well|though|actually|honestly|lately|"
    r"for real|more|a lot|so much|very much|the most))+$",
    re.I,
)


def clean_value(text: str) -> str:
    return value_text(_TRAILING_FILLER.sub("", strip_end(text)))
