from django.contrib import admin
from django.urls import include, path

from memories import views as memory_views

admin.site.site_header = "Deep Recall operations"
admin.site.site_title = "Deep Recall admin"

urlpatterns = [
    path("", memory_views.home, name="home"),
    path("healthz", memory_views.healthz, name="healthz"),
    path("accounts/", include("accounts.urls")),
    path("admin/", admin.site.urls),
]
