"""Top-level URL routes (/healthz is answered by config.health's middleware)."""
from django.conf import settings
from django.contrib import admin
from django.templatetags.static import static
from django.urls import include, path
from django.utils.functional import lazy
from django.views.generic import RedirectView

from accounts import views as account_views

urlpatterns = [
    # Browsers ask for /favicon.ico on pages without an icon link (the admin's).
    path("favicon.ico", RedirectView.as_view(url=lazy(static, str)("favicon.svg"), permanent=True)),
    path("admin/", admin.site.urls),
    path("accounts/login/", account_views.LoginView.as_view(), name="login"),
    path("accounts/", include("django.contrib.auth.urls")),
    path("accounts/", include("accounts.urls")),
    path("cohorts/", include("cohorts.urls")),
    path("", include("exams.urls")),
]

if settings.BENCHMARK_ENDPOINTS:
    from config import bench

    urlpatterns.insert(0, path("bench/hello", bench.hello, name="bench_hello"))

handler400 = "config.hostile.bad_request"
handler403 = "config.hostile.permission_denied"
handler404 = "config.hostile.page_not_found"
handler500 = "config.hostile.server_error"
