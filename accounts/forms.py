"""Sign-up and profile forms."""
import zoneinfo

from django import forms
from django.contrib.auth.forms import UserCreationForm
from django.contrib.auth.models import User

from accounts.models import Profile


class SignUpForm(UserCreationForm):
    email = forms.EmailField(required=True, help_text="For password resets only.")

    class Meta(UserCreationForm.Meta):
        model = User
        fields = ("username", "email")

    def clean_email(self) -> str:
        email = self.cleaned_data["email"].strip()
        if User.objects.filter(email__iexact=email).exists():
            raise forms.ValidationError("An account with this email address already exists. Log in or reset the password.")
        return email


def _time_zone_choices() -> list[tuple[str, str]]:
    return [(name, name.replace("_", " ")) for name in sorted(zoneinfo.available_timezones())]


class ProfileForm(forms.ModelForm):
    time_zone = forms.ChoiceField(
        choices=_time_zone_choices,
        help_text="Review due dates follow your local calendar day.",
    )

    class Meta:
        model = Profile
        fields = ("time_zone", "shortcuts_enabled")
