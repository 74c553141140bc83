"""Learner settings on the user page, including the instructor-set time accommodation."""
from django.contrib import admin
from django.contrib.auth.admin import UserAdmin
from django.contrib.auth.models import User

from accounts.forms import AdminLoginForm, LearnerChangeForm, LearnerCreationForm
from accounts.models import Profile
from accounts.lookalikes import username_claim
from config.integrity import RaceSafeAdminMixin


class ProfileInline(admin.StackedInline):
    model = Profile
    can_delete = False
    fields = ("accommodation_factor", "time_zone", "shortcuts_enabled")


admin.site.login_form = AdminLoginForm
admin.site.unregister(User)


@admin.register(User)
class LearnerAdmin(RaceSafeAdminMixin, UserAdmin):
    form = LearnerChangeForm
    add_form = LearnerCreationForm
    add_fieldsets = (
        (None, {"classes": ("wide",), "fields": ("username", "email", "usable_password", "password1", "password2")}),
    )
    inlines = [ProfileInline]
    list_display = ("username", "email", "is_staff", "accommodation")
    list_select_related = ("profile",)

    def save_model(self, request, obj, form, change):
        super().save_model(request, obj, form, change)
        # Inside the admin's transaction: a look-alike saved meanwhile raises IntegrityError,
        # and RaceSafeAdminMixin shows the form again with its error.
        username_claim(obj)

    @admin.display(description="Time factor")
    def accommodation(self, user: User) -> str:
        profile = getattr(user, "profile", None)
        return f"×{profile.accommodation_factor}" if profile else "×1.00"


@admin.register(Profile)
class ProfileAdmin(admin.ModelAdmin):
    list_display = ("user", "accommodation_factor", "time_zone", "shortcuts_enabled")
    list_editable = ("accommodation_factor",)
    search_fields = ("user__username", "user__email")
    list_select_related = ("user",)
