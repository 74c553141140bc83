"""Sign-up and profile forms."""
import zoneinfo

from django import forms
from django.contrib.auth.forms import AuthenticationForm, UserCreationForm
from django.core.validators import MaxLengthValidator
from django.contrib.auth.models import User
from django.utils import timezone

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
        email = self.cleaned_data["email"].strip()
        if User.objects.filter(email__iexact=email).exists():
            raise forms.ValidationError("An account with this email address already exists. Log in or reset the password.")
        return email


def time_zone_names() -> list[str]:
    return sorted(zoneinfo.available_timezones())


class ProfileForm(forms.ModelForm):
    time_zone = TimeZoneField(
        help_text="Start typing a city (Europe/Paris, America/New_York). Times and review due dates follow it.",
    )

    class Meta:
        model = Profile
        fields = ("time_zone", "shortcuts_enabled", "desired_retention", "exam_date")
        widgets = {
            "desired_retention": forms.NumberInput(attrs={"step": "0.01", "min": "0.80", "max": "0.97"}),
            "exam_date": forms.DateInput(attrs={"type": "date"}, format="%Y-%m-%d"),
        }

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
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


class LoginForm(AuthenticationForm):
    """Django's login form, whose username length is also validated: the stock form only sets
    the widget's maxlength, so a 300-character name reached django-axes' 255-character column."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        field = self.fields["username"]
        field.validators.append(MaxLengthValidator(field.max_length))
        self.fields["password"].max_length = 4096
        self.fields["password"].validators.append(MaxLengthValidator(4096))
