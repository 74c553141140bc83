from django.urls import path

from cohorts import views

app_name = "cohorts"
urlpatterns = [
    path("", views.index, name="index"),
    path("new/", views.create, name="create"),
    path("join/<str:token>/", views.join, name="join"),
    path("<int:cohort_id>/", views.detail, name="detail"),
    path("<int:cohort_id>/settings/", views.edit, name="edit"),
    path("<int:cohort_id>/cohort.csv", views.export_csv, name="export_csv"),
    path("<int:cohort_id>/invitation/renew/", views.renew_invitation, name="renew_invitation"),
    path("<int:cohort_id>/invitation/revoke/", views.revoke_invitation, name="revoke_invitation"),
    path("<int:cohort_id>/members/<int:membership_id>/remove/", views.remove_member, name="remove_member"),
    path("<int:cohort_id>/leave/", views.leave, name="leave"),
    path("<int:cohort_id>/sharing/", views.results_sharing, name="results_sharing"),
    path("<int:cohort_id>/members/<int:membership_id>/results/", views.member_results, name="member_results"),
]
