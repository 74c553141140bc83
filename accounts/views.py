"""Sign up and the learner's profile (login, logout and passwords are Django's own views)."""
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


def signup(request: HttpRequest) -> HttpResponse:
    if request.user.is_authenticated:
        return redirect("exams:catalogue")
    form = SignUpForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        try:
            with transaction.atomic():
                user = form.save()
        except IntegrityError:
            # Another sign-up took the name or the address between the form's check and the
            # insert: checked again, the form now names which (the winner has committed).
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


class LoginView(auth_views.LoginView):
    """Django's login, which warns before the try that would lock the account (django-axes)."""

    authentication_form = LoginForm

    def form_invalid(self, form):
        from axes.handlers.proxy import AxesProxyHandler

        username = (form.data.get("username") or "")[:150]
        failures = AxesProxyHandler.get_failures(self.request, {"username": username})
        left = settings.AXES_FAILURE_LIMIT - failures
        if left == 1:
            minutes = int(settings.AXES_COOLOFF_TIME.total_seconds() // 60)
            form.add_error(None, f"One more failed try locks this account for {minutes} minutes. Forgot your password? Reset it instead.")
        return super().form_invalid(form)
