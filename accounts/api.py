"""API views for the caller's own account. Each acts on request.user only."""

from __future__ import annotations

from typing import Any

from drf_spectacular.utils import OpenApiResponse
from drf_spectacular.utils import extend_schema
from rest_framework import exceptions
from rest_framework import generics
from rest_framework import status
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from accounts import tokens
from accounts.models import DigestPreferences
from accounts.models import User
from accounts.requests import signed_in
from accounts.serializers import DigestPreferencesSerializer
from accounts.serializers import ProfileSerializer
from accounts.serializers import TokenKeySerializer
from accounts.serializers import TokenStateSerializer
from core.api.errors import ErrorSerializer
from core.api.views import StrictQueryParams
from core.api.views import refuse_body


class TokenExists(exceptions.APIException):
    status_code = status.HTTP_409_CONFLICT
    default_detail = "You already have an API token; rotate it for a new key."
    default_code = "token_exists"


class ProfileView(StrictQueryParams, generics.RetrieveUpdateAPIView):
    """The caller's profile."""

    serializer_class = ProfileSerializer

    def get_object(self) -> User:
        return signed_in(self.request)


class DigestPreferencesView(StrictQueryParams, generics.RetrieveUpdateAPIView):
    """The caller's digest settings (defaults until first changed)."""

    serializer_class = DigestPreferencesSerializer

    def get_object(self) -> DigestPreferences:
        # As the settings page: every user has preferences once they look.
        return DigestPreferences.objects.stored_for(signed_in(self.request))


class TokenView(StrictQueryParams, APIView):
    """The caller's API token: whether there is one, create it, revoke it."""

    @extend_schema(
        summary="Whether the caller has an API token (never its key)",
        responses={200: TokenStateSerializer},
    )
    def get(self, request: Request) -> Response:
        token = tokens.get_token(user=signed_in(request))
        state = {"exists": token is not None, "created": token and token.created}
        return Response(TokenStateSerializer(state).data)

    @extend_schema(
        summary="Create the caller's API token",
        request=None,
        responses={
            201: TokenKeySerializer,
            409: OpenApiResponse(
                ErrorSerializer, description="A token exists (code token_exists)."
            ),
        },
    )
    def post(self, request: Request) -> Response:
        refuse_body(request)
        try:
            token = tokens.create_token(user=signed_in(request))
        except tokens.TokenExistsError:
            raise TokenExists from None
        return Response(TokenKeySerializer(token).data, status=status.HTTP_201_CREATED)

    @extend_schema(
        summary="Revoke the caller's API token",
        description="Idempotent; the key stops working at once.",
        responses={204: OpenApiResponse(description="No token (any more).")},
    )
    def delete(self, request: Request) -> Response:
        tokens.revoke_token(user=signed_in(request))
        return Response(status=status.HTTP_204_NO_CONTENT)


class TokenRotateView(StrictQueryParams, APIView):
    @extend_schema(
        summary="Rotate the caller's API token",
        description="A new key (created if there was none); the old key stops "
        "working at once.",
        request=None,
        responses={200: TokenKeySerializer},
    )
    def post(self, request: Request, *args: Any) -> Response:
        refuse_body(request)
        return Response(
            TokenKeySerializer(tokens.rotate_token(user=signed_in(request))).data
        )
