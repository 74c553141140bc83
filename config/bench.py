"""The floor for load benchmarks: a hello-world view behind the full middleware stack.

Mounted at /bench/hello only when BENCHMARK_ENDPOINTS is on (never in production).
"""
from django.http import HttpRequest, HttpResponse


def hello(request: HttpRequest) -> HttpResponse:
    return HttpResponse("hello", content_type="text/plain")
