"""The learner's pages: the exam room's (exams.room.views) and study's (exams.study.views), under one namespace."""
from django.urls import path

from exams.room.views import catalogue, exhibits, question, reports, results, start
from exams.study.views import bookmarks, dashboard, practice

app_name = "exams"
urlpatterns = [
    path("", catalogue.catalogue, name="catalogue"),
    path("dashboard/", dashboard.dashboard, name="dashboard"),
    path("dashboard/history.csv", dashboard.export_csv, name="export_csv"),
    path("dashboard/history.json", dashboard.export_json, name="export_json"),
    path("bookmarks/", bookmarks.bookmark_list, name="bookmarks"),
    path("bookmarks/<int:bookmark_id>/", bookmarks.bookmark_edit, name="bookmark_edit"),
    path("bookmarks/<int:bookmark_id>/delete/", bookmarks.bookmark_delete, name="bookmark_delete"),
    path("exams/<str:code>/", catalogue.exam_detail, name="exam"),
    path("exams/<str:code>/mock/", start.start_mock, name="start_mock"),
    path("exams/<str:code>/session/", start.start_session, name="start_session"),
    path("exams/<str:code>/practice/", practice.builder, name="practice_builder"),
    path("attempts/<int:attempt_id>/", start.attempt_resume, name="attempt"),
    path("attempts/<int:attempt_id>/q/<int:position>/", question.question, name="question"),
    path("attempts/<int:attempt_id>/q/<int:position>/report/", reports.report, name="report"),
    path("attempts/<int:attempt_id>/q/<int:position>/another/", practice.another_like_this, name="another_like_this"),
    path("attempts/<int:attempt_id>/q/<int:position>/bookmark/", bookmarks.bookmark_add, name="bookmark_add"),
    path("attempts/<int:attempt_id>/review/", results.review, name="review"),
    path("attempts/<int:attempt_id>/submit/", results.submit, name="submit"),
    path("attempts/<int:attempt_id>/results/", results.results, name="results"),
    path("attempts/<int:attempt_id>/practise-wrong/", results.practise_wrong, name="practise_wrong"),
    path("exhibits/<int:question_id>/<str:name>", exhibits.exhibit, name="exhibit"),
]
