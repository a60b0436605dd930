from __future__ import annotations

from django.db import connection
from django.http import HttpRequest
from django.http import JsonResponse


def healthz(request: HttpRequest) -> JsonResponse:
    """Liveness for load balancers: the process serves and the database answers."""
    try:
        with connection.cursor() as cursor:
            cursor.execute("SELECT 1")
    except Exception as exc:  # any database failure means "not healthy"
        return JsonResponse({"status": "error", "database": str(exc)}, status=503)
    return JsonResponse({"status": "ok"})
