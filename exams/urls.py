from django.urls import path

from exams import views

app_name = "exams"
urlpatterns = [
    path("", views.catalogue, name="catalogue"),
    path("exams/<str:code>/", views.exam_detail, name="exam"),
]
