"""The LLM provider for any OpenAI-compatible chat completions server (OpenAI, Azure, Ollama, vLLM).

Every call asks for a JSON object (`response_format={"type": "json_object"}`) and validates it
against a pydantic schema. Invalid JSON or a schema mismatch gets exactly one repair request (the
bad output and the validation error are sent back); a second failure raises `LLMError`.

Transient failures (timeouts, connection errors, 408/409/429 and 5xx) are retried here rather than
by the SDK (its `max_retries` is 0) so that the backoff is a setting: LLM_MAX_RETRIES retries,
LLM_RETRY_BACKOFF_SECONDS × 2^n (jittered, capped at LLM_RETRY_MAX_BACKOFF_SECONDS), honouring a
server's Retry-After. Other HTTP errors (400, 401, 404, …) fail at once: retrying cannot fix them.
"""

from __future__ import annotations

import logging
import random
import re
import time
from datetime import datetime

from pydantic import BaseModel

from memories.extraction.dates import end_of_day
from memories.extraction.heuristic import content_key
from memories.extraction.phrasing import slot_key
from memories.extraction.summaries import summarize_text
from memories.providers.llm_types import CandidateMemory, EpisodeSummary, LLMError, TurnView
from memories.providers.openai_prompts import (
    COMPRESS_SYSTEM,
    EPISODE_SYSTEM,
    EXISTING_LIMIT,
    EXTRACT_SYSTEM,
    REPAIR_PROMPT,
    SUMMARIZE_SYSTEM,
    conversation_text,
    existing_summary,
)
from memories.providers.openai_schemas import (
    CompressedReply,
    EpisodeReply,
    ExtractionReply,
    InvalidOutput,
    MemoryReply,
    SummaryReply,
    reply_parse,
)
from memory_project.text import estimate_tokens

logger = logging.getLogger(__name__)

MAX_CANDIDATES = 50
RETRYABLE_STATUS = {408, 409, 429}
MAX_RETRY_AFTER_SECONDS = 60.0


def _existing_named(reference: str, existing: list[str], known: dict[str, str]) -> str:
    """The existing memory the model pointed at, verbatim: by its text, a part of it, or its number
    in the list it was shown."""
    reference = (reference or "").strip()
    if not reference:
        return ""
    number = re.fullmatch(r"#?(\d{1,3})\.?", reference)
    if number and 1 <= int(number[1]) <= min(len(existing), EXISTING_LIMIT):
        return existing[int(number[1]) - 1]
    reference = re.sub(r"^\d{1,3}\.\s+", "", reference)
    if content_key(reference) in known:
        return known[content_key(reference)]
    return next((e for e in existing if reference.casefold() in e.casefold()), "")


def _describe(exc: BaseException | None) -> str:
    if exc is None:
        return "unknown error"
    status = getattr(exc, "status_code", None)
    message = getattr(exc, "message", None) or str(exc) or type(exc).__name__
    message = re.sub(r"^Error code: \d+ - ", "", message)
    return f"HTTP {status}: {message}" if status else f"{type(exc).__name__}: {message}"


def _retry_after(exc: BaseException) -> float | None:
    response = getattr(exc, "response", None)
    headers = getattr(response, "headers", None) or {}
    for header, divisor in (("retry-after-ms", 1000.0), ("retry-after", 1.0)):
        raw = headers.get(header)
        if raw is None:
            continue
        try:
            seconds = float(raw) / divisor
        except ValueError:
            continue
        if 0 <= seconds:
            return min(seconds, MAX_RETRY_AFTER_SECONDS)
    return None


class OpenAIProvider:
    name = "openai"

    def __init__(
        self,
        *,
        api_key: str,
        model: str,
        base_url: str | None = None,
        timeout: float = 30.0,
        max_retries: int = 3,
        backoff: float = 0.5,
        max_backoff: float = 8.0,
    ):
        from openai import OpenAI

        if not api_key and not base_url:
            raise LLMError("LLM_PROVIDER is 'openai' but neither OPENAI_API_KEY nor OPENAI_BASE_URL is set")
        self.model = model
        self.base_url = base_url or "https://api.openai.com/v1"
        self.timeout = timeout
        self.max_retries = max_retries
        self.backoff = backoff
        self.max_backoff = max_backoff
        # Local servers (Ollama, vLLM) accept any key, but the SDK insists on one.
        self._client = OpenAI(api_key=api_key or "unused", base_url=base_url, timeout=timeout, max_retries=0)

    # -- transport -----------------------------------------------------------------------------

    def _delay(self, attempt: int, exc: BaseException) -> float:
        server = _retry_after(exc)
        if server is not None:
            return server
        return min(self.max_backoff, self.backoff * 2**attempt) * (1 - 0.25 * random.random())

    def _complete(self, messages: list[dict], *, task: str) -> str:
        from openai import APIConnectionError, APIStatusError, OpenAIError

        attempts = self.max_retries + 1
        last: BaseException | None = None
        for attempt in range(attempts):
            try:
                response = self._client.chat.completions.create(
                    model=self.model,
                    messages=messages,
                    response_format={"type": "json_object"},
                    temperature=0,
                )
            except APIConnectionError as exc:  # includes timeouts
                last = exc
            except APIStatusError as exc:
                if exc.status_code not in RETRYABLE_STATUS and exc.status_code < 500:
                    raise LLMError(
                        f"{task}: {self.model} at {self.base_url} refused the request: {_describe(exc)}"
                    ) from exc
                last = exc
            except OpenAIError as exc:
                raise LLMError(f"{task}: {self.model} at {self.base_url} failed: {_describe(exc)}") from exc
            else:
                choices = getattr(response, "choices", None) or []
                message = choices[0].message if choices else None
                return (getattr(message, "content", None) or "") if message is not None else ""
            if attempt + 1 < attempts:
                delay = self._delay(attempt, last)
                logger.info("llm %s: %s; retry %d/%d in %.2fs", task, _describe(last), attempt + 1, attempts - 1, delay)
                time.sleep(delay)
        raise LLMError(
            f"{task}: no answer from {self.model} at {self.base_url} after {attempts} attempt(s): {_describe(last)}"
        ) from last

    def _ask(self, *, task: str, system: str, user: str, schema: type[BaseModel]) -> BaseModel:
        messages = [{"role": "system", "content": system}, {"role": "user", "content": user}]
        raw = self._complete(messages, task=task)
        try:
            return reply_parse(raw, schema)
        except InvalidOutput as first:
            logger.warning("llm %s: invalid output, asking for a repair: %s", task, first)
            repair = messages + [
                {"role": "assistant", "content": raw[:8000]},
                {"role": "user", "content": REPAIR_PROMPT.format(error=first)},
            ]
            raw = self._complete(repair, task=f"{task} (repair)")
            try:
                return reply_parse(raw, schema)
            except InvalidOutput as second:
                raise LLMError(
                    f"{task}: {self.model} returned unusable output twice (one repair attempted): {second}"
                ) from None

    # -- the interface -------------------------------------------------------------------------

    def extract(self, *, turns: list[TurnView], existing: list[str]) -> list[CandidateMemory]:
        if not turns:
            return []
        existing = list(existing or [])
        ordered = sorted(turns, key=lambda t: t.sequence)
        reference = ordered[-1].created_at
        user = (
            f"Today is {reference:%Y-%m-%d} ({reference:%A}).\n\n"
            f"Existing memories (for deduplication and contradictions only, do not repeat them):\n"
            f"{existing_summary(existing)}\n\n"
            f"Conversation:\n{conversation_text(ordered)}"
        )
        result = self._ask(task="extract", system=EXTRACT_SYSTEM, user=user, schema=ExtractionReply)
        return self._candidates(result.memories, ordered, existing, reference)

    def _candidates(
        self, memories: list[MemoryReply], turns: list[TurnView], existing: list[str], reference: datetime
    ) -> list[CandidateMemory]:
        known = {content_key(e): e for e in existing}
        sequences = {t.sequence for t in turns}
        out: list[CandidateMemory] = []
        for memory in memories:
            if memory.action == "remember" and content_key(memory.content) in known:
                continue
            expires_at = memory.expires_at
            if memory.due_date is not None:
                expires_at = end_of_day(memory.due_date, reference)
            if expires_at is not None and expires_at.tzinfo is None and reference.tzinfo is not None:
                expires_at = expires_at.replace(tzinfo=reference.tzinfo)
            retention = memory.retention
            if expires_at is not None and retention == "permanent":
                retention = "long"
            contradicts = _existing_named(memory.contradicts, existing, known)
            out.append(
                CandidateMemory(
                    content=re.sub(r"\s+", " ", memory.content).strip(),
                    category=memory.category,
                    importance=round(memory.importance, 3),
                    retention=retention,
                    expires_at=expires_at,
                    subject=slot_key(memory.subject),
                    predicate=slot_key(memory.predicate),
                    value=memory.value,
                    source_sequences=list(dict.fromkeys(s for s in memory.source_turns if s in sequences)),
                    confidence=round(memory.confidence, 3),
                    entities=list(dict.fromkeys((e.name, e.kind) for e in memory.entities)),
                    action=memory.action,
                    explicit=memory.explicit,
                    contradicts=contradicts,
                )
            )
        return out[:MAX_CANDIDATES]

    def summarize_episode(self, *, turns: list[TurnView]) -> EpisodeSummary:
        if not turns:
            return EpisodeSummary(summary="")
        ordered = sorted(turns, key=lambda t: t.sequence)
        result = self._ask(
            task="summarize_episode",
            system=EPISODE_SYSTEM,
            user=f"Conversation:\n{conversation_text(ordered)}",
            schema=EpisodeReply,
        )
        called = list(dict.fromkeys(t.tool_name for t in ordered if t.tool_name))
        return EpisodeSummary(
            summary=result.summary,
            goal=result.goal,
            outcome=result.outcome,
            entities=list(dict.fromkeys(e.strip() for e in result.entities if e and e.strip())),
            tools_used=list(dict.fromkeys(called + [t.strip() for t in result.tools_used if t and t.strip()])),
            completed=[(task.strip(), None) for task in dict.fromkeys(result.completed) if task and task.strip()],
        )

    def summarize(self, *, text: str, max_tokens: int) -> str:
        if not (text or "").strip() or max_tokens <= 0:
            return ""
        user = f"Write at most {max_tokens} tokens (about {max(1, int(max_tokens * 0.75))} words).\n\nText:\n{text}"
        result = self._ask(task="summarize", system=SUMMARIZE_SYSTEM, user=user, schema=SummaryReply)
        summary = result.summary.strip()
        if estimate_tokens(summary) > max_tokens:
            # Models overshoot length limits; the budget is the caller's, so trim extractively.
            summary = summarize_text(summary, max_tokens)
        return summary

    def compress(self, *, memories: list[str]) -> list[str]:
        cleaned = [m.strip() for m in memories or [] if m and m.strip()]
        if len(cleaned) <= 1:
            return cleaned
        listing = "\n".join(f"{i}. {m}" for i, m in enumerate(cleaned, start=1))
        result = self._ask(
            task="compress", system=COMPRESS_SYSTEM, user=f"Memories:\n{listing}", schema=CompressedReply
        )
        return [s.strip() for s in result.summaries]
