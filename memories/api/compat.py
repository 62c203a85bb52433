"""Seed 004 §7's REST endpoints (VibeWorker's `/api/memory/...`) as thin views over our services.

They live at `/api/v1/memory/...` (the seed's paths under our version prefix, with or without the
trailing slash) and speak the seed's shapes: `salience` for importance, seed 004's category names
(`preferences`, `facts`, `tasks`, `reflections`, `procedural`, `general`; ours are accepted too), and
memory.json entries with `x_*` keys carrying our exact category, status and strength.
"""

from django.conf import settings
from django.db import transaction
from django.db.models import Max
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import serializers, status
from rest_framework.response import Response
from rest_framework.views import APIView

from memories.api.lifecycle import LifecycleRunInputSerializer, LifecycleRunOutputSerializer
from memories.api.views import actor_of
from memories.drafts import MemoryDraft
from memories.formats.categories import categories_for_filter, category_from_seed
from memories.formats.memory_json import MEMORY_JSON_VERSION, format_timestamp
from memories.models import PROCEDURAL_CATEGORIES, Category, CoreMemory, LifecycleRun, Memory, Source, Status
from memories.services.decisions import memory_write
from memories.services.lifecycle import LOCK_BUSY_ERROR, lifecycle_run
from memories.services.search import memory_search_run
from memories.services.transfer import memory_to_seed_004
from memory_project.api.fields import CleanCharField, ContentField, StrictSerializer, request_owner, validated
from memory_project.exceptions import ServiceError

SEED_CATEGORIES = ("preferences", "facts", "tasks", "reflections", "procedural", "general")


class Seed004MemorySerializer(serializers.Serializer):
    """A memory in seed 004's memory.json shape (memories.services.transfer.memory_to_seed_004)."""

    id = serializers.CharField(help_text="the first 8 hex digits of x_id")
    category = serializers.ChoiceField(choices=SEED_CATEGORIES)
    content = serializers.CharField()
    salience = serializers.FloatField()
    created_at = serializers.DateTimeField()
    last_accessed = serializers.DateTimeField()
    access_count = serializers.IntegerField()
    source = serializers.ChoiceField(choices=Source.choices)
    context = serializers.JSONField(required=False, help_text="the memory's structured data, when it has any")
    x_id = serializers.UUIDField()
    x_category = serializers.ChoiceField(choices=Category.choices)
    x_status = serializers.ChoiceField(choices=Status.choices)
    x_strength = serializers.FloatField()
    x_observed_at = serializers.DateTimeField()


class CompatLifecycleOutputSerializer(serializers.Serializer):
    status = serializers.ChoiceField(choices=[*LifecycleRun.RunStatus.values, "busy"])
    step = serializers.CharField()
    counts = serializers.DictField(help_text="the step's counts")
    run = LifecycleRunOutputSerializer()


class CompatProceduralOutputSerializer(serializers.Serializer):
    memories = Seed004MemorySerializer(many=True)


class CompatRollingSummaryOutputSerializer(serializers.Serializer):
    rolling_summary = serializers.CharField(allow_blank=True)
    updated_at = serializers.DateTimeField(allow_null=True)


class CompatEntriesOutputSerializer(serializers.Serializer):
    version = serializers.IntegerField(help_text="memory.json's format version")
    last_updated = serializers.DateTimeField(allow_null=True)
    rolling_summary = serializers.CharField(allow_blank=True)
    memories = Seed004MemorySerializer(many=True)


class CompatEntryWriteOutputSerializer(serializers.Serializer):
    action = serializers.ChoiceField(choices=["ADD", "UPDATE", "DELETE", "NOOP"])
    entry = Seed004MemorySerializer()
    previous_id = serializers.UUIDField(required=False, help_text="the superseded memory (action DELETE)")


class CompatSearchResultSerializer(Seed004MemorySerializer):
    score = serializers.FloatField()
    scores = serializers.DictField(child=serializers.FloatField(allow_null=True))


class CompatSearchOutputSerializer(serializers.Serializer):
    results = CompatSearchResultSerializer(many=True)
    took_ms = serializers.FloatField()


def _category_filter(name: str | None) -> list[str] | None:
    if not name:
        return None
    categories = categories_for_filter(name)
    if categories is None:
        raise ServiceError(f"Unknown category {name!r}.", code="invalid")
    return categories


class AgentSerializer(StrictSerializer):
    agent = CleanCharField(max_length=100, required=False, allow_blank=True, default="")
    owner = CleanCharField(max_length=150, required=False)


def _run_lifecycle(request, step: str) -> Response:
    validated(LifecycleRunInputSerializer, request.data or {})
    run = lifecycle_run(owner=request_owner(request), trigger="api")
    busy = run.status == LifecycleRun.RunStatus.FAILED and run.error == LOCK_BUSY_ERROR
    body = {
        "status": "busy" if busy else run.status,
        "step": step,
        "counts": (run.counts or {}).get(step, {}),
        "run": LifecycleRunOutputSerializer(run).data,
    }
    return Response(body, status=status.HTTP_409_CONFLICT if busy else status.HTTP_200_OK)


def _lifecycle_api(step: str, *, summary: str, description: str) -> type[APIView]:
    """A seed 004 endpoint that runs the lifecycle now and answers with one step's counts."""

    class CompatLifecycleApi(APIView):
        @extend_schema(
            request=None,
            responses={200: CompatLifecycleOutputSerializer, 409: CompatLifecycleOutputSerializer},
            summary=summary,
            description=description,
        )
        def post(self, request):
            return _run_lifecycle(request, step)

    return CompatLifecycleApi


CompatConsolidateApi = _lifecycle_api(
    "dedup",
    summary="Seed 004: POST /api/memory/consolidate",
    description="Runs the lifecycle now (its dedup step merges near-duplicates; decay, archive and the "
    "other steps run too); `counts` are the dedup step's. Same as POST /api/v1/lifecycle/run/.",
)
CompatArchiveApi = _lifecycle_api(
    "digests",
    summary="Seed 004: POST /api/memory/archive",
    description="Runs the lifecycle now; its daily-digest step summarises days older than 30 days "
    "(promoting their important memories) and drops raw entries after 60. `counts` are that step's.",
)


class ProceduralQuerySerializer(StrictSerializer):
    agent = CleanCharField(max_length=100, required=False, allow_blank=True, default="")
    owner = CleanCharField(max_length=150, required=False)
    include_archived = serializers.BooleanField(required=False, default=False)
    limit = serializers.IntegerField(required=False, min_value=1, max_value=1000, default=200)


class CompatProceduralApi(APIView):
    @extend_schema(
        parameters=[ProceduralQuerySerializer],
        responses=CompatProceduralOutputSerializer,
        summary="Seed 004: GET /api/memory/procedural",
        description="The procedural memories (skills, error lessons, rules), strongest first, in memory.json shape.",
    )
    def get(self, request):
        args = validated(ProceduralQuerySerializer, request.query_params.dict())
        statuses = [Status.ACTIVE, Status.ARCHIVED] if args["include_archived"] else [Status.ACTIVE]
        qs = (
            Memory.objects.filter(
                owner=request_owner(request),
                agent=args["agent"],
                category__in=PROCEDURAL_CATEGORIES,
                status__in=statuses,
            )
            .defer("embedding", "search_vector", "search_ngrams")
            .order_by("-strength", "-importance", "id")
        )
        return Response({"memories": [memory_to_seed_004(m) for m in qs[: args["limit"]]]})


class RollingSummarySerializer(StrictSerializer):
    rolling_summary = CleanCharField(allow_blank=True, trim_whitespace=True, max_length=100_000)
    agent = CleanCharField(max_length=100, required=False, allow_blank=True, default="")


class CompatRollingSummaryApi(APIView):
    @extend_schema(
        parameters=[AgentSerializer],
        responses=CompatRollingSummaryOutputSerializer,
        summary="Seed 004: GET /api/memory/rolling-summary",
    )
    def get(self, request):
        query = validated(AgentSerializer, request.query_params.dict())
        core = CoreMemory.objects.filter(owner=request_owner(request), agent=query["agent"]).first()
        return Response(
            {
                "rolling_summary": core.rolling_summary if core else "",
                "updated_at": format_timestamp(core.updated_at) if core else None,
            }
        )

    @extend_schema(
        request=RollingSummarySerializer,
        responses=CompatRollingSummaryOutputSerializer,
        summary="Seed 004: PUT /api/memory/rolling-summary",
        description="Replaces the owner's rolling summary (CoreMemory.rolling_summary).",
    )
    def put(self, request):
        data = validated(RollingSummarySerializer, request.data)
        core, _ = CoreMemory.objects.update_or_create(
            owner=request_owner(request), agent=data["agent"], defaults={"rolling_summary": data["rolling_summary"]}
        )
        return Response({"rolling_summary": core.rolling_summary, "updated_at": format_timestamp(core.updated_at)})


class EntriesQuerySerializer(StrictSerializer):
    category = CleanCharField(max_length=40, required=False)
    agent = CleanCharField(max_length=100, required=False, allow_blank=True, default="")
    owner = CleanCharField(max_length=150, required=False)
    limit = serializers.IntegerField(required=False, min_value=1, max_value=10_000, default=1000)


class EntryCreateSerializer(StrictSerializer):
    content = ContentField()
    category = CleanCharField(max_length=40, required=False, default="general")
    salience = serializers.FloatField(required=False, min_value=0, max_value=1, allow_null=True, default=None)
    agent = CleanCharField(max_length=100, required=False, allow_blank=True, default="")
    # Seed 004 §11's tool argument; a daily-log write is kept as a memory here all the same.
    write_to = serializers.ChoiceField(choices=["memory", "daily"], required=False, default="memory")

    def validate_category(self, value):
        # Read before `content` is validated: a content that is not text is refused by its own field.
        content = self.initial_data.get("content")
        if category_from_seed(value, content=content if isinstance(content, str) else "") is None:
            raise serializers.ValidationError(
                f"Unknown category; use one of {', '.join(SEED_CATEGORIES)} (or ours: preference, fact, …)."
            )
        return value


class CompatEntriesApi(APIView):
    @extend_schema(
        parameters=[EntriesQuerySerializer],
        responses=CompatEntriesOutputSerializer,
        summary="Seed 004: GET /api/memory/entries",
        description="memory.json's content: `{version, last_updated, rolling_summary, memories}` with salience "
        "and access_count; active and archived memories, newest first.",
    )
    def get(self, request):
        args = validated(EntriesQuerySerializer, request.query_params.dict())
        owner = request_owner(request)
        qs = Memory.objects.filter(owner=owner, agent=args["agent"], status__in=[Status.ACTIVE, Status.ARCHIVED])
        categories = _category_filter(args.get("category"))
        if categories:
            qs = qs.filter(category__in=categories)
        qs = qs.defer("embedding", "search_vector", "search_ngrams").order_by("-created_at", "id")
        core = CoreMemory.objects.filter(owner=owner, agent=args["agent"]).first()
        memories = [memory_to_seed_004(m) for m in qs[: args["limit"]]]
        latest = qs.aggregate(latest=Max("updated_at"))["latest"]
        return Response(
            {
                "version": MEMORY_JSON_VERSION,
                "last_updated": format_timestamp(latest),
                "rolling_summary": core.rolling_summary if core else "",
                "memories": memories,
            }
        )

    @extend_schema(
        request=EntryCreateSerializer,
        responses={201: CompatEntryWriteOutputSerializer, 200: CompatEntryWriteOutputSerializer},
        summary="Seed 004: POST /api/memory/entries",
        description="Stores a memory through the merge decision (ADD / UPDATE / DELETE / NOOP); `salience` is "
        "its importance. 201 when a memory was added (or superseded an old one), 200 otherwise.",
    )
    def post(self, request):
        data = validated(EntryCreateSerializer, request.data)
        with transaction.atomic():
            draft = MemoryDraft(
                content=data["content"],
                category=category_from_seed(data["category"], content=data["content"]),
                importance=data["salience"],
                agent=data["agent"],
                source=Source.USER_EXPLICIT,
            )
            result = memory_write(owner=request_owner(request), draft=draft, actor=actor_of(request))
        action = {"add": "ADD", "update": "UPDATE", "delete": "DELETE", "noop": "NOOP"}[result.action]
        body = {"action": action, "entry": memory_to_seed_004(result.memory)}
        if result.previous is not None:
            body["previous_id"] = str(result.previous.pk)
        code = status.HTTP_201_CREATED if result.action in ("add", "delete") else status.HTTP_200_OK
        return Response(body, status=code)


class CompatSearchSerializer(StrictSerializer):
    query = CleanCharField(max_length=4000)
    top_k = serializers.IntegerField(required=False, default=5, min_value=1, max_value=settings.MAX_TOP_K)
    use_decay = serializers.BooleanField(
        required=False,
        default=True,
        help_text="true ranks as POST /api/v1/search/ does (relevance, importance, recency, strength); "
        "false by relevance and importance only",
    )
    category = CleanCharField(
        max_length=40,
        required=False,
        allow_null=True,
        default=None,
        help_text="a seed 004 category (procedural = skills, errors, rules and workflows) or one of ours",
    )
    agent = CleanCharField(max_length=100, required=False, allow_blank=True, allow_null=True, default=None)


class CompatSearchApi(APIView):
    @extend_schema(
        request=CompatSearchSerializer,
        responses=CompatSearchOutputSerializer,
        parameters=[OpenApiParameter("owner", str, description="staff only")],
        summary="Seed 004: POST /api/memory/search",
        description="Hybrid search over memories, ranked with or without decay (`use_decay`).",
    )
    def post(self, request):
        args = dict(validated(CompatSearchSerializer, request.data))
        owner = request_owner(request)
        categories = _category_filter(args.pop("category"))
        found = memory_search_run(owner=owner, scope="memories", categories=categories, **args)
        results = found["results"]
        by_id = {
            str(m.pk): m
            for m in Memory.objects.filter(owner=owner, pk__in=[r["id"] for r in results]).defer(
                "embedding", "search_vector", "search_ngrams"
            )
        }
        out = []
        for result in results:
            memory = by_id.get(result["id"])
            if memory is None:
                continue
            out.append({**memory_to_seed_004(memory), "score": result["score"], "scores": result["scores"]})
        return Response({"results": out, "took_ms": found["took_ms"]})
