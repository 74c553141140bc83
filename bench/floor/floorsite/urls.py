from django.urls import path

from floorsite import views

urlpatterns = [
    path("healthz", views.hello),
    path("bench/hello", views.hello),
    path("write/", views.write),
]
