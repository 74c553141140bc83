"""Sign up and the learner's profile (login, logout and passwords are Django's own views)."""
from django.contrib import messages
from django.contrib.auth import login
from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render

from accounts.forms import ProfileForm, SignUpForm
from accounts.models import Profile


def signup(request: HttpRequest) -> HttpResponse:
    if request.user.is_authenticated:
        return redirect("exams:catalogue")
    form = SignUpForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        user = form.save()
        Profile.objects.for_user(user)
        login(request, user, backend="django.contrib.auth.backends.ModelBackend")
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
        form.save()
        messages.success(request, "Profile saved.")
        return redirect("accounts:profile")
    return render(request, "accounts/profile.html", {"form": form, "profile": profile})
