from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import status
from rest_framework.response import Response
from rest_framework.views import APIView

from memory_project.api.fields import request_owner
from memory_project.pagination import StandardPagination
from sessions.api.serializers import (
    BulkTurnInputSerializer,
    EpisodeOutputSerializer,
    ScratchpadInputSerializer,
    ScratchpadSerializer,
    SessionInputSerializer,
    SessionOutputSerializer,
    TurnInputSerializer,
    TurnOutputSerializer,
)
from sessions.selectors.sessions import episode_list, scratchpad_get, session_get, session_list, turn_list
from sessions.services.scratchpad import scratchpad_update
from sessions.services.sessions import session_create, session_end, turn_append_many


def _paginate(request, view, queryset, serializer_class):
    paginator = StandardPagination()
    page = paginator.paginate_queryset(queryset, request, view=view)
    return paginator.get_paginated_response(serializer_class(page, many=True).data)


class SessionListCreateApi(APIView):
    @extend_schema(
        parameters=[
            OpenApiParameter("status", str),
            OpenApiParameter("agent", str),
            OpenApiParameter("channel", str),
        ],
        responses=SessionOutputSerializer(many=True),
    )
    def get(self, request):
        params = request.query_params
        qs = session_list(
            owner=request_owner(request),
            status=params.get("status"),
            agent=params.get("agent"),
            channel=params.get("channel"),
        )
        return _paginate(request, self, qs, SessionOutputSerializer)

    @extend_schema(request=SessionInputSerializer, responses={201: SessionOutputSerializer})
    def post(self, request):
        serializer = SessionInputSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        session = session_create(owner=request_owner(request), **serializer.validated_data)
        return Response(SessionOutputSerializer(session).data, status=status.HTTP_201_CREATED)


class SessionDetailApi(APIView):
    @extend_schema(responses=SessionOutputSerializer)
    def get(self, request, session_id):
        session = session_get(owner=request_owner(request), session_id=session_id)
        return Response(SessionOutputSerializer(session).data)


class TurnListCreateApi(APIView):
    @extend_schema(responses=TurnOutputSerializer(many=True))
    def get(self, request, session_id):
        session = session_get(owner=request_owner(request), session_id=session_id)
        return _paginate(request, self, turn_list(session=session), TurnOutputSerializer)

    @extend_schema(
        request=TurnInputSerializer | BulkTurnInputSerializer,
        description='One turn, or {"turns": [...]} with up to 1,000 turns stored in the order given.',
    )
    def post(self, request, session_id):
        session = session_get(owner=request_owner(request), session_id=session_id)
        bulk = isinstance(request.data, dict) and "turns" in request.data
        serializer = (BulkTurnInputSerializer if bulk else TurnInputSerializer)(data=request.data)
        serializer.is_valid(raise_exception=True)
        turns = serializer.validated_data["turns"] if bulk else [serializer.validated_data]
        stored = turn_append_many(session=session, turns=turns)
        ids = [str(t.id) for t in stored]
        body = {"ids": ids, "turns": [{"id": str(t.id), "sequence": t.sequence} for t in stored]}
        if not bulk:
            body = {**TurnOutputSerializer(stored[0]).data, **body}
        return Response(body, status=status.HTTP_201_CREATED)


class SessionEndApi(APIView):
    @extend_schema(request=None, responses={202: SessionOutputSerializer})
    def post(self, request, session_id):
        session = session_get(owner=request_owner(request), session_id=session_id)
        job = session_end(session=session)
        session.refresh_from_db()
        body = SessionOutputSerializer(session).data
        body["extraction_job"] = (
            {"id": str(job.id), "status": job.status, "kind": job.kind} if job is not None else None
        )
        return Response(body, status=status.HTTP_202_ACCEPTED)


class EpisodeListApi(APIView):
    @extend_schema(parameters=[OpenApiParameter("agent", str)], responses=EpisodeOutputSerializer(many=True))
    def get(self, request):
        qs = episode_list(owner=request_owner(request), agent=request.query_params.get("agent"))
        return _paginate(request, self, qs, EpisodeOutputSerializer)


class ScratchpadApi(APIView):
    @extend_schema(parameters=[OpenApiParameter("agent", str)], responses=ScratchpadSerializer)
    def get(self, request):
        pad = scratchpad_get(owner=request_owner(request), agent=request.query_params.get("agent", ""))
        return Response(ScratchpadSerializer(pad).data)

    @extend_schema(request=ScratchpadInputSerializer, responses=ScratchpadSerializer)
    def put(self, request):
        serializer = ScratchpadInputSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        pad = scratchpad_update(owner=request_owner(request), **serializer.validated_data)
        return Response(ScratchpadSerializer(pad).data)
