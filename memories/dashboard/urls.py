"""Routes of the memory pages (namespace `dashboard`), included at the site root."""

from django.urls import path

from memories.dashboard import editing, views

app_name = "dashboard"

urlpatterns = [
    path("memories/", views.memory_list, name="memories"),
    path("memories/suppressed/", views.suppressed_list, name="suppressed"),
    path("memories/new/", views.note_save, name="save"),
    path("memories/upload/", views.document_upload, name="upload"),
    path("memories/upload/image/", views.image_upload, name="upload-image"),
    path("memories/bulk", editing.memory_bulk, name="memory-bulk"),
    path("memories/receipts/<uuid:event_id>/", views.receipt, name="receipt"),
    path("memories/<uuid:memory_id>/", views.memory_detail, name="memory"),
    path("memories/<uuid:memory_id>/pin", views.memory_pin, {"pinned": True}, name="memory-pin"),
    path("memories/<uuid:memory_id>/unpin", views.memory_pin, {"pinned": False}, name="memory-unpin"),
    path("memories/<uuid:memory_id>/suppress", views.memory_suppress, name="memory-suppress"),
    path("memories/<uuid:memory_id>/restore", views.memory_restore, name="memory-restore"),
    path("memories/<uuid:memory_id>/edit", editing.memory_edit, name="memory-edit"),
    path("memories/<uuid:memory_id>/delete", views.memory_delete, name="memory-delete"),
    path("relations/", views.relation_list, name="relations"),
    path("relations/<uuid:relation_id>/delete", views.relation_delete, name="relation-delete"),
    path("jobs/", views.job_list, name="jobs"),
    path("jobs/<uuid:job_id>/", views.job_detail, name="job"),
    path("spaces/", views.space_list, name="spaces"),
    path("spaces/current", views.space_choose, name="space-current"),
    path("spaces/<uuid:space_id>/rename", views.space_rename, name="space-rename"),
    path("spaces/<uuid:space_id>/default", views.space_make_default, name="space-default"),
    path("spaces/<uuid:space_id>/delete", views.space_delete, name="space-delete"),
    path("connect/", views.connect, name="connect"),
    path("connect/deeprecall_proxy.py", views.stdio_proxy_download, name="stdio-proxy"),
]
