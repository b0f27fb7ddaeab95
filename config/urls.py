from django.contrib import admin
from django.urls import include, path

from memories import views as memory_views

admin.site.site_header = "Deep Recall operations"
admin.site.site_title = "Deep Recall admin"

urlpatterns = [
    path("", memory_views.home, name="home"),
    path("healthz", memory_views.healthz, name="healthz"),
    path("accounts/", include("accounts.urls")),
    path("api/", include("memories.api.urls")),
    path("admin/", admin.site.urls),
]

handler404 = "memories.api.base.handler404"
handler500 = "memories.api.base.handler500"
