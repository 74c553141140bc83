from django.urls import path

from exams.views import attempts, catalogue, dashboard, exhibits, reports

app_name = "exams"
urlpatterns = [
    path("", catalogue.catalogue, name="catalogue"),
    path("dashboard/", dashboard.dashboard, name="dashboard"),
    path("dashboard/history.csv", dashboard.export_csv, name="export_csv"),
    path("dashboard/history.json", dashboard.export_json, name="export_json"),
    path("exams/<str:code>/", catalogue.exam_detail, name="exam"),
    path("exams/<str:code>/mock/", attempts.start_mock, name="start_mock"),
    path("exams/<str:code>/session/", attempts.start_session, name="start_session"),
    path("attempts/<int:attempt_id>/", attempts.attempt_resume, name="attempt"),
    path("attempts/<int:attempt_id>/q/<int:position>/", attempts.question, name="question"),
    path("attempts/<int:attempt_id>/q/<int:position>/report/", reports.report, name="report"),
    path("attempts/<int:attempt_id>/review/", attempts.review, name="review"),
    path("attempts/<int:attempt_id>/submit/", attempts.submit, name="submit"),
    path("attempts/<int:attempt_id>/results/", attempts.results, name="results"),
    path("attempts/<int:attempt_id>/practise-wrong/", attempts.practise_wrong, name="practise_wrong"),
    path("exhibits/<int:question_id>/<str:name>", exhibits.exhibit, name="exhibit"),
]
