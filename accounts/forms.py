"""Sign-up and profile forms."""
import zoneinfo

from django import forms
from django.contrib.admin.forms import AdminAuthenticationForm
from django.contrib.auth.forms import AdminUserCreationForm, AuthenticationForm, UserChangeForm, UserCreationForm
from django.core.validators import MaxLengthValidator
from django.contrib.auth.models import User

from accounts.emails import EMAIL_TAKEN, email_taken
from accounts.models import Profile


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


def _unique_email(email: str, *, user_pk: int | None) -> str:
    email = email.strip()
    if email_taken(email, user_pk=user_pk):
        raise forms.ValidationError(EMAIL_TAKEN, code="email_taken")
    return email


class LearnerChangeForm(UserChangeForm):
    """The admin's user form, with the one-account-per-email rule."""

    def clean_email(self) -> str:
        return _unique_email(self.cleaned_data.get("email") or "", user_pk=self.instance.pk)


class LearnerCreationForm(AdminUserCreationForm):
    email = forms.EmailField(required=False, help_text="Optional; for password resets. One account per address.")

    class Meta(AdminUserCreationForm.Meta):
        fields = ("username", "email")

    def clean_email(self) -> str:
        return _unique_email(self.cleaned_data.get("email") or "", user_pk=None)


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
        fields = ("email", "time_zone", "shortcuts_enabled")

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        if not self.is_bound:
            self.initial["email"] = self.instance.user.email

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
