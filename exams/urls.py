from django.urls import path

from exams import views

app_name = "exams"
urlpatterns = [
    path("", views.catalogue, name="catalogue"),
    path("exams/<str:code>/", views.exam_detail, name="exam"),
    path("exams/<str:code>/mock/", views.start_mock, name="start_mock"),
    path("attempts/<int:attempt_id>/", views.attempt_resume, name="attempt"),
    path("attempts/<int:attempt_id>/q/<int:position>/", views.question, name="question"),
    path("attempts/<int:attempt_id>/review/", views.review, name="review"),
    path("attempts/<int:attempt_id>/submit/", views.submit, name="submit"),
    path("attempts/<int:attempt_id>/results/", views.results, name="results"),
]
