"""Executes the memory tools for REST (POST /api/v1/tools/{name}/) and the MCP server alike."""

from rest_framework import serializers

from memories.drafts import MemoryDraft
from memories.models import Category
from memories.services.decisions import memory_forget_matching, memory_write
from memories.services.search import memory_search_run
from memory_project.api.fields import CleanCharField, ContentField, StrictSerializer, validated
from memory_project.exceptions import ServiceError


class _SearchArgs(StrictSerializer):
    query = CleanCharField(max_length=4000)
    top_k = serializers.IntegerField(required=False, default=5, min_value=1, max_value=50)
    categories = serializers.ListField(child=serializers.ChoiceField(choices=Category.choices), required=False)


class _TraceArgs(StrictSerializer):
    query = CleanCharField(max_length=4000)
    top_k = serializers.IntegerField(required=False, default=5, min_value=1, max_value=50)


class _WriteArgs(StrictSerializer):
    content = ContentField()
    category = serializers.ChoiceField(choices=Category.choices, required=False, default=Category.FACT)
    importance = serializers.FloatField(required=False, min_value=0, max_value=1, default=None)


class _ForgetArgs(StrictSerializer):
    query = CleanCharField(max_length=4000)


def _brief(result: dict) -> dict:
    keep = ("type", "id", "content", "score", "created_at", "session_id", "metadata", "source_turns")
    return {k: result[k] for k in keep if k in result}


def tool_execute(*, owner, name: str, arguments: dict, actor: str, agent: str = "") -> dict:
    if name == "search_memory":
        args = validated(_SearchArgs, arguments)
        found = memory_search_run(
            owner=owner,
            query=args["query"],
            top_k=args["top_k"],
            scope="memories",
            categories=args.get("categories"),
            agent=agent,
            served_as="tool",
        )
        return {"results": [_brief(r) for r in found["results"]]}
    if name == "search_conversation_traces":
        args = validated(_TraceArgs, arguments)
        found = memory_search_run(owner=owner, query=args["query"], top_k=args["top_k"], scope="turns", agent=agent)
        return {"results": [_brief(r) for r in found["results"]]}
    if name == "memory_write":
        args = validated(_WriteArgs, arguments)
        draft = MemoryDraft(
            content=args["content"], category=args["category"], importance=args["importance"], agent=agent
        )
        result = memory_write(owner=owner, draft=draft, actor=actor)
        return {
            "action": result.action,
            "memory": {"id": str(result.memory.pk), "content": result.memory.content, "status": result.memory.status},
            # Which memory took the text in (noop, update), and what the write replaced (delete).
            "absorbed_by": str(result.absorbed_by.pk) if result.absorbed_by is not None else None,
            "superseded_ids": [str(m.pk) for m in result.superseded],
        }
    if name == "memory_forget":
        args = validated(_ForgetArgs, arguments)
        forgotten = memory_forget_matching(owner=owner, query=args["query"], actor=actor, agent=agent)
        if forgotten is None:
            return {"forgotten": None}
        return {"forgotten": {"id": str(forgotten.pk), "content": forgotten.content}}
    raise ServiceError(f"Unknown tool {name!r}.", code="not_found", status_code=404)
