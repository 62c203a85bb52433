"""How a user sentence is read, in either language.

A sentence is first read as a whole: a request to forget something, a request to remember something, a
question (nothing to keep), a correction; anything else is read clause by clause. Each language's sentence
module (`english/sentences.py`, `chinese/sentences.py`) holds its own patterns and its own reading of each
case under the names `Language` lists; the order they are tried in is the same for both and lives here.
"""

import re
from typing import Protocol

from memories.extraction.candidates import Ctx, clause_candidates
from memories.providers.llm_types import CandidateMemory


class Language(Protocol):
    """What a language's sentence module provides (a module satisfies a protocol by its top-level names)."""

    # "Actually, …", "不对，…": the statement after it is the `rest` group.
    CORRECTION: re.Pattern[str]
    # The shortest `rest` read as a correction of its own.
    SHORTEST_CORRECTION: int
    # "Remember that …", "记住…": the match goes to `remember` whole, which may read more than what to remember.
    REMEMBER: re.Pattern[str]

    def sentence_body(self, sentence: str) -> tuple[str, bool] | None:
        """The sentence without lead-in filler and final punctuation, and whether it was a question; None when
        too little is left to hold a statement."""

    def forget_request(self, request: str) -> str | None:
        """What a request to forget names, or None when the request is not one."""

    def forget(self, what: str, ctx: Ctx) -> list[CandidateMemory]: ...

    def remember(self, request: re.Match[str], ctx: Ctx) -> list[CandidateMemory]: ...

    def correct(self, rest: str, ctx: Ctx) -> list[CandidateMemory]: ...

    def extract_clause(self, clause: str, ctx: Ctx) -> CandidateMemory | None: ...


def read_sentence(sentence: str, ctx: Ctx, *, language: Language) -> list[CandidateMemory]:
    read = language.sentence_body(sentence)
    if read is None:
        return []
    body, question = read
    correction = language.CORRECTION.match(body)
    request = correction["rest"] if correction else body  # "Actually, forget that …", "其实，忘掉…"
    what = language.forget_request(request)
    if what is not None:
        return language.forget(what, ctx)
    m = language.REMEMBER.match(request)
    if m:
        return language.remember(m, ctx)
    if question:
        return []
    if correction and len(correction["rest"]) >= language.SHORTEST_CORRECTION:
        return language.correct(correction["rest"], ctx.but(correction=True))
    return clause_candidates(body, ctx, language.extract_clause)
