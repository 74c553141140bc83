"""Sign-up and profile forms."""
import zoneinfo

from django import forms
from django.contrib.admin.forms import AdminAuthenticationForm
from django.contrib.auth.forms import AdminUserCreationForm, AuthenticationForm, UserChangeForm, UserCreationForm
from django.contrib.auth.models import User
from django.core.validators import MaxLengthValidator
from django.utils import timezone

from accounts.emails import EMAIL_TAKEN, email_taken
from accounts.models import Profile
from accounts.lookalikes import LOOK_ALIKE, look_alike


class TimeZoneField(forms.CharField):
    """A time zone typed or picked from a searchable list (a datalist of every IANA name)."""

    def __init__(self, **kwargs):
        kwargs.setdefault("max_length", 64)
        super().__init__(**kwargs)
        self.widget.attrs.update({"list": "time-zones", "autocomplete": "off", "spellcheck": "false"})

    def clean(self, value):
        value = super().clean(value).strip().replace(" ", "_")
        if not value:
            return "UTC"
        known = {name.casefold(): name for name in zoneinfo.available_timezones()}
        if value.casefold() not in known:
            raise forms.ValidationError(f"{value!r} is not a time zone we know: type a city such as Europe/Paris or America/New_York.")
        return known[value.casefold()]


class SignUpForm(UserCreationForm):
    email = forms.EmailField(required=True, help_text="For password resets only.")
    # Filled in by the page from the browser's own zone; the learner may change it later.
    time_zone = TimeZoneField(required=False, widget=forms.HiddenInput(attrs={"data-browser-time-zone": "1"}))

    class Meta(UserCreationForm.Meta):
        model = User
        fields = ("username", "email")

    def clean_email(self) -> str:
        return _unique_email(self.cleaned_data["email"], user_pk=None)

    def clean_username(self) -> str:
        return _distinct_username(super().clean_username(), user_pk=None)


def _distinct_username(username: str, *, user_pk: int | None) -> str:
    """Refuse a username whose confusable skeleton another user's already has (accounts.lookalikes)."""
    if username and look_alike(username, user_pk=user_pk) is not None:
        raise forms.ValidationError(LOOK_ALIKE, code="username_look_alike")
    return username


def _unique_email(email: str, *, user_pk: int | None) -> str:
    email = email.strip()
    if email_taken(email, user_pk=user_pk):
        raise forms.ValidationError(EMAIL_TAKEN, code="email_taken")
    return email


class LearnerChangeForm(UserChangeForm):
    """The admin's user form, with the one-account-per-email rule."""

    def clean_email(self) -> str:
        return _unique_email(self.cleaned_data.get("email") or "", user_pk=self.instance.pk)

    def clean_username(self) -> str:
        return _distinct_username(self.cleaned_data.get("username") or "", user_pk=self.instance.pk)


class LearnerCreationForm(AdminUserCreationForm):
    email = forms.EmailField(required=False, help_text="Optional; for password resets. One account per address.")

    class Meta(AdminUserCreationForm.Meta):
        fields = ("username", "email")

    def clean_email(self) -> str:
        return _unique_email(self.cleaned_data.get("email") or "", user_pk=None)

    def clean_username(self) -> str:
        return _distinct_username(super().clean_username(), user_pk=None)


def time_zone_names() -> list[str]:
    return sorted(zoneinfo.available_timezones())


class ProfileForm(forms.ModelForm):
    """The learner's settings, and the account's email address (kept on the user)."""

    email = forms.EmailField(required=False, help_text="For password resets. One account per address.")
    time_zone = TimeZoneField(
        help_text="Start typing a city (Europe/Paris, America/New_York). Times and review due dates follow it.",
    )

    class Meta:
        model = Profile
        fields = ("email", "time_zone", "shortcuts_enabled", "ask_certainty_in_mocks", "desired_retention", "exam_date")
        widgets = {
            "desired_retention": forms.NumberInput(attrs={"step": "0.01", "min": "0.80", "max": "0.97"}),
            "exam_date": forms.DateInput(attrs={"type": "date"}, format="%Y-%m-%d"),
        }

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        if not self.is_bound:
            self.initial["email"] = self.instance.user.email
        # Left empty (an older form, a script), it keeps what was saved.
        self.fields["desired_retention"].required = False

    def clean_desired_retention(self):
        value = self.cleaned_data["desired_retention"]
        return self.instance.desired_retention if value is None else value

    def clean_exam_date(self):
        exam_date = self.cleaned_data["exam_date"]
        # Only a newly typed date must lie ahead: a saved one that has passed stays valid.
        if exam_date and "exam_date" in self.changed_data:
            time_zone = self.cleaned_data.get("time_zone") or self.instance.time_zone
            today = timezone.now().astimezone(zoneinfo.ZoneInfo(time_zone)).date()
            if exam_date < today:
                raise forms.ValidationError(f"{exam_date:%d %B %Y} has passed: give a date from today on, or leave it empty.")
        return exam_date

    def clean_email(self) -> str:
        if "email" not in self.data:
            # A post of the other settings alone (an older page) leaves the address as it is.
            return self.instance.user.email
        return _unique_email(self.cleaned_data.get("email") or "", user_pk=self.instance.user_id)

    def save(self, commit: bool = True) -> Profile:
        profile = super().save(commit=commit)
        user = profile.user
        if commit and user.email != self.cleaned_data["email"]:
            user.email = self.cleaned_data["email"]
            user.save(update_fields=["email"])
        return profile


def _bound_lengths(form: AuthenticationForm) -> None:
    # The stock form only sets the widget's maxlength, so a 300-character name reached
    # django-axes' 255-character column; validated here, it never reaches authenticate().
    field = form.fields["username"]
    field.validators.append(MaxLengthValidator(field.max_length))
    form.fields["password"].max_length = 4096
    form.fields["password"].validators.append(MaxLengthValidator(4096))


class LoginForm(AuthenticationForm):
    """Django's login form, whose username and password lengths are also validated."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        _bound_lengths(self)


class AdminLoginForm(AdminAuthenticationForm):
    """The admin's login form, with the same length limits (found by the fuzzer)."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        _bound_lengths(self)
