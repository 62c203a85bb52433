"""What an OpenAI-compatible server must answer, as pydantic schemas, and the parser that checks a reply.

The schemas are lenient about what models get wrong without meaning anything else: the seeds' names
for categories, "high"/"medium"/"low" for importance, nulls for empty fields, a bare JSON array for
the one list asked for, a fenced code block around the JSON.
"""

from __future__ import annotations

import json
import re
from datetime import date, datetime
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, ValidationInfo, field_validator, model_validator

from memories.providers.llm_types import CATEGORIES, ENTITY_KINDS

# Names the seeds used for categories, mapped to this product's (DESIGN §3).
_CATEGORY_ALIASES = {
    "preferences": "preference",
    "facts": "fact",
    "knowledge": "fact",
    "general": "fact",
    "experience": "skill",
    "reflection": "skill",
    "reflections": "skill",
    "skill_usage": "workflow",
    "pattern": "workflow",
    "habit": "workflow",
    "procedural": "error",
    "lesson": "error",
    "task": "todo",
    "tasks": "todo",
    "plan": "todo",
    "constraint": "rule",
    "rules": "rule",
    "projects": "project",
    "decisions": "decision",
}
_IMPORTANCE_WORDS = {"high": 0.8, "medium": 0.6, "low": 0.4}
_RETENTION_ALIASES = {"session": "transient", "24h": "transient", "1d": "transient", "3d": "short", "7d": "short"}
_RETENTION_ALIASES |= {"30d": "long", "forever": "permanent"}
# The words of MemoryReply that a model may spell in its own way.
_WORD_ALIASES = {"category": _CATEGORY_ALIASES, "retention": _RETENTION_ALIASES, "action": {}}


class _Lenient(BaseModel):
    model_config = ConfigDict(extra="ignore", str_strip_whitespace=True)


class _Entity(_Lenient):
    name: str = Field(min_length=1, max_length=200)
    kind: str = "other"

    @model_validator(mode="before")
    @classmethod
    def _from_string(cls, data: Any) -> Any:
        if isinstance(data, str):
            return {"name": data}
        if isinstance(data, list | tuple) and len(data) == 2:
            return {"name": data[0], "kind": data[1]}
        return data

    @field_validator("kind", mode="before")
    @classmethod
    def _kind(cls, value: Any) -> str:
        value = str(value or "other").strip().lower()
        value = {"org": "organization", "organisation": "organization", "company": "organization"}.get(value, value)
        value = {"location": "place", "city": "place", "country": "place", "software": "tool"}.get(value, value)
        return value if value in ENTITY_KINDS else "other"


class MemoryReply(_Lenient):
    content: str = Field(min_length=1, max_length=2000)
    category: Literal[CATEGORIES]  # type: ignore[valid-type]
    importance: float = Field(ge=0.0, le=1.0)
    retention: Literal["transient", "short", "long", "permanent"] = "long"
    due_date: date | None = None
    expires_at: datetime | None = None
    subject: str = ""
    predicate: str = ""
    value: str = ""
    source_turns: list[int] = Field(default_factory=list)
    confidence: float = Field(default=0.8, ge=0.0, le=1.0)
    entities: list[_Entity] = Field(default_factory=list)
    action: Literal["remember", "forget"] = "remember"
    explicit: bool = False
    contradicts: str = ""

    @model_validator(mode="before")
    @classmethod
    def _aliases(cls, data: Any) -> Any:
        if isinstance(data, dict):
            data = dict(data)
            if "source_turns" not in data and "source_sequences" in data:
                data["source_turns"] = data.pop("source_sequences")
            for key in ("subject", "predicate", "value", "contradicts"):
                if data.get(key) is None:
                    data[key] = ""
                elif not isinstance(data[key], str):
                    data[key] = str(data[key])
            if data.get("retention") is None:
                data.pop("retention", None)
            if data.get("confidence") is None:
                data.pop("confidence", None)
            if data.get("entities") is None:
                data["entities"] = []
            if data.get("source_turns") is None:
                data["source_turns"] = []
        return data

    @field_validator("category", "retention", "action", mode="before")
    @classmethod
    def _word(cls, value: Any, info: ValidationInfo) -> Any:
        if not isinstance(value, str):
            return value
        word = value.strip().lower()
        return _WORD_ALIASES[info.field_name].get(word, word)

    @field_validator("importance", mode="before")
    @classmethod
    def _importance(cls, value: Any) -> Any:
        if isinstance(value, str) and value.strip().lower() in _IMPORTANCE_WORDS:
            return _IMPORTANCE_WORDS[value.strip().lower()]
        return value


class ExtractionReply(_Lenient):
    memories: list[MemoryReply] = Field(max_length=200)


class EpisodeReply(_Lenient):
    summary: str = Field(min_length=1)
    goal: str = ""
    outcome: str = ""
    entities: list[str] = Field(default_factory=list)
    tools_used: list[str] = Field(default_factory=list)
    completed: list[str] = Field(default_factory=list)

    @field_validator("goal", "outcome", mode="before")
    @classmethod
    def _text(cls, value: Any) -> Any:
        return "" if value is None else value

    @field_validator("entities", "tools_used", "completed", mode="before")
    @classmethod
    def _names(cls, value: Any) -> Any:
        if value is None:
            return []
        if isinstance(value, list):
            return [v["name"] if isinstance(v, dict) and "name" in v else v for v in value]
        return value


class SummaryReply(_Lenient):
    summary: str


class CompressedReply(_Lenient):
    summaries: list[str] = Field(min_length=1, max_length=3)

    @field_validator("summaries")
    @classmethod
    def _not_blank(cls, value: list[str]) -> list[str]:
        if any(not s.strip() for s in value):
            raise ValueError("summaries must not be empty strings")
        return value


# Each schema's single list field, so a bare JSON array (what some servers return despite JSON
# mode, and what the seeds' prompts asked for) can be accepted as that field.
_LIST_FIELD = {ExtractionReply: "memories", CompressedReply: "summaries"}


class InvalidOutput(Exception):
    """The reply is not JSON of the required shape; the message says what is wrong, for the repair request."""


def reply_parse(raw: str, schema: type[BaseModel]) -> BaseModel:
    text = (raw or "").strip()
    fenced = re.match(r"^```(?:json)?\s*(?P<body>.*?)\s*```$", text, re.S)
    if fenced:
        text = fenced["body"]
    if not text:
        raise InvalidOutput("the reply was empty, not a JSON object")
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise InvalidOutput(
            f"the reply is not valid JSON ({exc.msg} at line {exc.lineno} column {exc.colno})"
        ) from None
    except (ValueError, RecursionError) as exc:
        # An integer of more than 4,300 digits, or nesting deeper than the parser's recursion.
        raise InvalidOutput(f"the reply is not valid JSON ({type(exc).__name__})") from None
    if isinstance(data, list) and schema in _LIST_FIELD:
        data = {_LIST_FIELD[schema]: data}
    if not isinstance(data, dict):
        raise InvalidOutput(f"the reply is JSON but not an object (got {type(data).__name__})")
    try:
        return schema.model_validate(data)
    except ValidationError as exc:
        problems = [f"{'.'.join(str(p) for p in err['loc']) or 'reply'}: {err['msg']}" for err in exc.errors()[:8]]
        more = f" (and {exc.error_count() - 8} more)" if exc.error_count() > 8 else ""
        raise InvalidOutput("the JSON does not match the required format: " + "; ".join(problems) + more) from None
