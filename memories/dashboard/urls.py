"""Routes of the memory pages (namespace `dashboard`), included at the site root."""

from django.urls import path

from memories.dashboard import activity, agents, ask, editing, graph, imports, overview, views

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
    path("imports/", imports.import_page, name="imports"),
    path("imports/<uuid:import_id>/", imports.import_detail, name="import"),
    path("imports/<uuid:import_id>/cancel", imports.import_stop, name="import-cancel"),
    path("imports/<uuid:import_id>/undo", imports.import_remove, name="import-undo"),
    path("jobs/", views.job_list, name="jobs"),
    path("jobs/<uuid:job_id>/", views.job_detail, name="job"),
    path("spaces/", views.space_list, name="spaces"),
    path("spaces/current", views.space_choose, name="space-current"),
    path("spaces/<uuid:space_id>/rename", views.space_rename, name="space-rename"),
    path("spaces/<uuid:space_id>/default", views.space_make_default, name="space-default"),
    path("spaces/<uuid:space_id>/delete", views.space_delete, name="space-delete"),
    path("connect/", views.connect, name="connect"),
    path("connect/deeprecall_proxy.py", views.stdio_proxy_download, name="stdio-proxy"),
    path("overview/", overview.overview, name="overview"),
    path("overview/data.json", overview.overview_data, name="overview-data"),
    path("graph/", graph.graph, name="graph"),
    path("graph/data.json", graph.graph_data, name="graph-data"),
    path("graph/relations/<uuid:relation_id>/", graph.relation_detail, name="graph-relation"),
    path("ask/", ask.ask, name="ask"),
    path("activity/", activity.activity, name="activity"),
    path("agents/", agents.agent_list, name="agents"),
    path("agents/<int:application_id>/", agents.agent_detail, name="agent"),
    path("agents/<int:application_id>/pause", agents.agent_pause, {"paused": True}, name="agent-pause"),
    path("agents/<int:application_id>/resume", agents.agent_pause, {"paused": False}, name="agent-resume"),
]
