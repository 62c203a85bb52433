"""The sentence outline both languages share, run over a stub language that names the reading it chose."""

import re
from types import SimpleNamespace

import pytest

from memories.extraction.candidates import Ctx
from memories.extraction.sentence_reader import read_sentence
from memories.providers.llm_types import CandidateMemory
from tests.memories.extraction.builders import turn


def _said(reading: str, text: str) -> list[CandidateMemory]:
    return [CandidateMemory(content=f"{reading}: {text}", category="fact", importance=0.5)]


def _stub_language():
    return SimpleNamespace(
        CORRECTION=re.compile(r"^no, (?P<rest>.+)$"),
        SHORTEST_CORRECTION=6,
        REMEMBER=re.compile(r"^remember (?P<body>.+)$"),
        sentence_body=lambda s: None if len(s) < 4 else (s.rstrip("?"), s.endswith("?")),
        forget_request=lambda request: request.removeprefix("forget ") if request.startswith("forget ") else None,
        forget=lambda what, ctx: _said("forget", what),
        remember=lambda m, ctx: _said("remember", m["body"]),
        correct=lambda rest, ctx: _said(f"correct({ctx.correction})", rest),
        extract_clause=lambda clause, ctx: _said("clause", clause)[0],
    )


@pytest.mark.parametrize(
    ("sentence", "read_as"),
    [
        ("hi", []),
        ("forget my old address", ["forget: my old address"]),
        ("no, forget my old address", ["forget: my old address"]),
        ("forget my old address?", ["forget: my old address"]),
        ("remember my sister is Ana", ["remember: my sister is Ana"]),
        ("no, remember my sister is Ana", ["remember: my sister is Ana"]),
        ("is my sister Ana?", []),
        ("no, my sister is Ana?", []),
        ("no, my sister is Ana", ["correct(True): my sister is Ana"]),
        ("no, Ana", ["clause: no, Ana"]),
        ("my sister is Ana", ["clause: my sister is Ana"]),
    ],
)
def test_a_sentence_is_read_as_forget_remember_question_correction_then_clauses(sentence, read_as):
    # given a language whose every reading says which it is
    ctx = Ctx(turn=turn(1, "user", sentence))

    # when the sentence is read
    found = read_sentence(sentence, ctx, language=_stub_language())

    # then the first case that applies, in the shared order, reads it
    assert [c.content for c in found] == read_as
