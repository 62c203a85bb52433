from drf_spectacular.utils import OpenApiParameter, PolymorphicProxySerializer, extend_schema, extend_schema_view
from rest_framework import serializers, status
from rest_framework.response import Response
from rest_framework.views import APIView

from attachments.api import AttachmentOutputSerializer
from attachments.selectors import turn_attachments
from memory_project.api.create import OwnerCreateApi
from memory_project.api.detail import OwnerDetailApi
from memory_project.api.fields import request_owner, validated
from memory_project.api.lists import OwnerListApi
from memory_project.api.schema import ErrorSerializer
from memory_project.exceptions import Conflict
from sessions.api.serializers import (
    AgentFilterSerializer,
    BulkTurnInputSerializer,
    EpisodeOutputSerializer,
    ScratchpadInputSerializer,
    ScratchpadSerializer,
    SessionInputSerializer,
    SessionListFilterSerializer,
    SessionOutputSerializer,
    TurnInputSerializer,
    TurnOutputSerializer,
)
from sessions.models import ChatSession
from sessions.selectors.sessions import episode_list, scratchpad_get, session_get, session_list, turn_list
from sessions.services.scratchpad import scratchpad_update
from sessions.services.sessions import session_create, session_end, turn_append_many


class TurnCreatedSerializer(serializers.Serializer):
    ids = serializers.ListField(child=serializers.UUIDField())
    turns = serializers.ListField(child=serializers.DictField())
    attachments = AttachmentOutputSerializer(many=True)


@extend_schema_view(
    get=extend_schema(
        parameters=[
            OpenApiParameter("status", str),
            OpenApiParameter("agent", str),
            OpenApiParameter("channel", str),
        ]
    )
)
class SessionListCreateApi(OwnerCreateApi, OwnerListApi):
    input_serializer = SessionInputSerializer
    output_serializer = SessionOutputSerializer

    def rows(self, request):
        filters = validated(SessionListFilterSerializer, request.query_params)
        return session_list(owner=request_owner(request), **filters)

    def create(self, request, **data):
        return session_create(owner=request_owner(request), **data)


class SessionDetailApi(OwnerDetailApi):
    output_serializer = SessionOutputSerializer

    def row(self, request, session_id):
        return session_get(owner=request_owner(request), session_id=session_id)


class TurnListCreateApi(OwnerListApi):
    output_serializer = TurnOutputSerializer

    def rows(self, request, session_id):
        return turn_list(session=session_get(owner=request_owner(request), session_id=session_id))

    @extend_schema(
        request=PolymorphicProxySerializer(
            component_name="TurnOrBulkTurnsInput",
            serializers=[TurnInputSerializer, BulkTurnInputSerializer],
            resource_type_field_name=None,
        ),
        responses={201: TurnCreatedSerializer, 409: ErrorSerializer, 413: ErrorSerializer, 415: ErrorSerializer},
        description='One turn, or {"turns": [...]} with up to 1,000 turns stored in the order given. A turn may '
        'carry files: "attachments": [{"filename", "content_type", "data" (base64), "caption"}]; a file over '
        "ATTACHMENT_MAX_BYTES is a 413, a type not accepted or not matching its bytes a 415, nothing stored.",
    )
    def post(self, request, session_id):
        session = session_get(owner=request_owner(request), session_id=session_id)
        if session.status == ChatSession.SessionStatus.ENDED:
            # Refused before any work (embedding included); the service re-checks under the row lock.
            raise Conflict("This session has ended; start a new session to add turns.", code="session_ended")
        bulk = isinstance(request.data, dict) and "turns" in request.data
        data = validated(BulkTurnInputSerializer if bulk else TurnInputSerializer, request.data)
        turns = data["turns"] if bulk else [data]
        stored = turn_append_many(session=session, turns=turns)
        ids = [str(t.id) for t in stored]
        body = {
            "ids": ids,
            "turns": [{"id": str(t.id), "sequence": t.sequence} for t in stored],
            "attachments": AttachmentOutputSerializer(turn_attachments(turns=stored), many=True).data,
        }
        if not bulk:
            body = {**TurnOutputSerializer(stored[0]).data, **body}
        return Response(body, status=status.HTTP_201_CREATED)


class SessionEndApi(APIView):
    @extend_schema(request=None, responses={202: SessionOutputSerializer})
    def post(self, request, session_id):
        session = session_get(owner=request_owner(request), session_id=session_id)
        job = session_end(session=session)  # re-reads `session` after the commit: its ended state
        if job is not None:
            # In embedded mode the job may already have run (after commit, before this response).
            job.refresh_from_db()
        body = SessionOutputSerializer(session).data
        body["extraction_job"] = (
            {"id": str(job.id), "status": job.status, "kind": job.kind} if job is not None else None
        )
        return Response(body, status=status.HTTP_202_ACCEPTED)


@extend_schema_view(get=extend_schema(parameters=[OpenApiParameter("agent", str)]))
class EpisodeListApi(OwnerListApi):
    output_serializer = EpisodeOutputSerializer

    def rows(self, request):
        agent = validated(AgentFilterSerializer, request.query_params).get("agent")
        return episode_list(owner=request_owner(request), agent=agent)


class ScratchpadApi(APIView):
    @extend_schema(parameters=[OpenApiParameter("agent", str)], responses=ScratchpadSerializer)
    def get(self, request):
        agent = validated(AgentFilterSerializer, request.query_params).get("agent", "")
        pad = scratchpad_get(owner=request_owner(request), agent=agent)
        return Response(ScratchpadSerializer(pad).data)

    @extend_schema(request=ScratchpadInputSerializer, responses=ScratchpadSerializer)
    def put(self, request):
        data = validated(ScratchpadInputSerializer, request.data)
        pad = scratchpad_update(owner=request_owner(request), **data)
        return Response(ScratchpadSerializer(pad).data)
