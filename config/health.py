"""/healthz for container and load-balancer probes.

Answered by the first middleware, before host validation and the HTTPS redirect, so a
probe on plain http to the container's own address gets a real answer.
"""
from django.db import DatabaseError, connection
from django.http import HttpRequest, HttpResponse, JsonResponse

HEALTH_PATH = "/healthz"


def database_health() -> JsonResponse:
    """200 when the database answers, 503 when it does not."""
    try:
        with connection.cursor() as cursor:
            cursor.execute("SELECT 1")
            cursor.fetchone()
    except DatabaseError:
        return JsonResponse({"status": "unavailable", "database": "down"}, status=503)
    return JsonResponse({"status": "ok", "database": "up"})


class HealthCheckMiddleware:
    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        if request.path == HEALTH_PATH and request.method in ("GET", "HEAD"):
            response = database_health()
            response["Cache-Control"] = "no-store"
            return response
        return self.get_response(request)
