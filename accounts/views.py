"""Sign up and the learner's profile (login, logout and passwords are Django's own views)."""
import math

from django.conf import settings
from django.contrib import messages
from django.contrib.auth import login
from django.contrib.auth import views as auth_views
from django.contrib.auth.decorators import login_required
from django.db import IntegrityError, transaction
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.utils.http import url_has_allowed_host_and_scheme

from accounts.forms import LoginForm, ProfileForm, SignUpForm, time_zone_names
from accounts.models import Profile
from accounts.timezones import remember_time_zone
from accounts.lookalikes import username_claim


def signup(request: HttpRequest) -> HttpResponse:
    if request.user.is_authenticated:
        return redirect("exams:catalogue")
    form = SignUpForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        try:
            with transaction.atomic():
                user = form.save()
                username_claim(user)
        except IntegrityError:
            # Another sign-up took the name, a look-alike of it or the address between the
            # form's check and the insert: checked again, the form now names which (the
            # winner has committed).
            form = SignUpForm(request.POST)
            if form.is_valid():
                form.add_error(None, "Your account could not be created just now. Nothing was saved; please try again.")
            return render(request, "form_page.html", {"form": form, "heading": "Create your account", "submit_label": "Sign up"})
        profile = Profile.objects.for_user(user)
        profile.time_zone = form.cleaned_data["time_zone"]
        profile.save(update_fields=["time_zone"])
        login(request, user, backend="accounts.backends.ModelBackend")
        remember_time_zone(request, profile.time_zone)
        # "Sign up to start" on an exam's page comes back to that page (only to a page of this site).
        after = request.GET.get("next", "")
        if after and url_has_allowed_host_and_scheme(after, allowed_hosts={request.get_host()}, require_https=request.is_secure()):
            messages.success(request, f"Welcome, {user.username}.")
            return redirect(after)
        messages.success(request, f"Welcome, {user.username}. Pick an exam to start.")
        return redirect("exams:catalogue")
    return render(
        request,
        "form_page.html",
        {"form": form, "heading": "Create your account", "submit_label": "Sign up",
         "intro": "Free practice exams, scored by domain."},
    )


@login_required
def profile(request: HttpRequest) -> HttpResponse:
    profile = Profile.objects.for_user(request.user)
    form = ProfileForm(request.POST or None, instance=profile)
    if request.method == "POST" and form.is_valid():
        try:
            with transaction.atomic():
                form.save()
        except IntegrityError:
            # Another account took the address between the check and the write.
            form = ProfileForm(request.POST, instance=Profile.objects.for_user(request.user))
            if form.is_valid():
                form.add_error(None, "Your profile could not be saved just now. Nothing was changed; please try again.")
            return render(request, "accounts/profile.html", {"form": form, "profile": profile, "time_zones": time_zone_names()})
        remember_time_zone(request, profile.time_zone)
        messages.success(request, "Profile saved.")
        return redirect("accounts:profile")
    return render(request, "accounts/profile.html", {"form": form, "profile": profile, "time_zones": time_zone_names()})


def _failures_of(username: str):
    """django-axes' failures for this username in the cool-off window: per address, newest first."""
    from axes.models import AccessAttempt
    from django.utils import timezone

    return AccessAttempt.objects.filter(username=username, attempt_time__gte=timezone.now() - settings.AXES_COOLOFF_TIME)


def locked_out(request: HttpRequest, response, credentials: dict | None) -> HttpResponse:
    """django-axes' lockout page (AXES_LOCKOUT_CALLABLE): says how long this address stays locked.

    A lock lasts AXES_COOLOFF_TIME from the latest failure of this username from this
    client address (the address axes keys on, accounts.client_address).
    """
    from django.db.models import Max
    from django.utils import timezone

    username = ((credentials or {}).get("username") or request.POST.get("username") or "")[:150]
    address = getattr(request, "axes_ip_address", None)
    latest = _failures_of(username).filter(ip_address=address).aggregate(latest=Max("attempt_time"))["latest"]
    left = settings.AXES_COOLOFF_TIME if latest is None else latest + settings.AXES_COOLOFF_TIME - timezone.now()
    minutes = max(1, math.ceil(left.total_seconds() / 60))  # rounded up: never "0 minutes"
    return render(
        request, "registration/locked_out.html",
        {"failure_limit": settings.AXES_FAILURE_LIMIT, "minutes_left": minutes, "cooloff_timedelta": settings.AXES_COOLOFF_TIME},
        status=429,
    )


def username_delay(username: str) -> int:
    """Seconds this username's next try must wait: the per-username ceiling across addresses.

    The per-address lock (AXES_FAILURE_LIMIT) cannot stop one username being guessed from
    many addresses. Past LOGIN_USERNAME_CEILING failures for it in the cool-off window,
    from any address, every try waits LOGIN_USERNAME_DELAY_SECONDS after the latest one:
    guessing slows to one try per delay, while the owner is only delayed, never locked out
    (and can always reset the password by email).
    """
    from django.db.models import Max, Sum
    from django.utils import timezone

    if not username:
        return 0
    counts = _failures_of(username).aggregate(failures=Sum("failures_since_start"), latest=Max("attempt_time"))
    if (counts["failures"] or 0) < settings.LOGIN_USERNAME_CEILING:
        return 0
    waited = (timezone.now() - counts["latest"]).total_seconds()
    return max(0, math.ceil(settings.LOGIN_USERNAME_DELAY_SECONDS - waited))


class LoginView(auth_views.LoginView):
    """Django's login, which warns before the try that would lock the account (django-axes),
    and slows a username guessed from many addresses (username_delay)."""

    authentication_form = LoginForm

    def post(self, request, *args, **kwargs):
        wait = username_delay((request.POST.get("username") or "")[:150])
        if wait:
            # Not tried, so not counted: the password is not even checked (an unbound form).
            context = self.get_context_data(form=self.get_form_class()(request, initial={"username": request.POST.get("username", "")[:150]}))
            context["delay_message"] = (
                f"This account has had many failed logins from many places, so each try waits a little: try again in "
                f"{wait} second{'s' if wait != 1 else ''}, or reset your password."
            )
            return self.render_to_response(context, status=429)
        return super().post(request, *args, **kwargs)

    def form_invalid(self, form):
        from axes.handlers.proxy import AxesProxyHandler

        username = (form.data.get("username") or "")[:150]
        failures = AxesProxyHandler.get_failures(self.request, {"username": username})
        left = settings.AXES_FAILURE_LIMIT - failures
        if left == 1:
            minutes = int(settings.AXES_COOLOFF_TIME.total_seconds() // 60)
            form.add_error(None, f"One more failed try locks this account for {minutes} minutes. Forgot your password? Reset it instead.")
        return super().form_invalid(form)
