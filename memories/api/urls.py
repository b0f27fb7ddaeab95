"""REST API routes (/api/v1/...). Views live in write_views.py and read_views.py."""

from django.urls import path
from drf_spectacular.views import SpectacularAPIView, SpectacularSwaggerSplitView

from memories.api import read_views, token_views, write_views

urlpatterns = [
    path("schema/", SpectacularAPIView.as_view(), name="api-schema"),
    # The split view serves its script as a file, which the Content-Security-Policy allows.
    path("docs/", SpectacularSwaggerSplitView.as_view(url_name="api-schema"), name="api-docs"),
    path("v1/operations", write_views.OperationListView.as_view(), name="api-operations"),
    path("v1/operations/<str:name>", write_views.OperationRunView.as_view(), name="api-operation-run"),
    path("v1/memories", write_views.MemoryCollectionView.as_view(), name="api-memories"),
    path("v1/memories/<uuid:memory_id>", write_views.MemoryItemView.as_view(), name="api-memory"),
    path("v1/memories/<uuid:memory_id>/pin", write_views.MemoryPinView.as_view(), name="api-memory-pin"),
    path(
        "v1/memories/<uuid:memory_id>/unpin", write_views.MemoryUnpinView.as_view(), name="api-memory-unpin"
    ),
    path(
        "v1/memories/<uuid:memory_id>/suppress",
        write_views.MemorySuppressView.as_view(),
        name="api-memory-suppress",
    ),
    path(
        "v1/memories/<uuid:memory_id>/restore",
        write_views.MemoryRestoreView.as_view(),
        name="api-memory-restore",
    ),
    path("v1/relations/<uuid:relation_id>", write_views.RelationItemView.as_view(), name="api-relation"),
    path("v1/documents", write_views.DocumentUploadView.as_view(), name="api-documents"),
    path("v1/jobs", read_views.JobListView.as_view(), name="api-jobs"),
    path("v1/jobs/<uuid:job_id>", read_views.JobDetailView.as_view(), name="api-job"),
    path("v1/export", read_views.ExportView.as_view(), name="api-export"),
    path("v1/spaces", read_views.SpaceCollectionView.as_view(), name="api-spaces"),
    path("v1/spaces/<uuid:space_id>", read_views.SpaceItemView.as_view(), name="api-space"),
    path("v1/tokens", token_views.TokenCollectionView.as_view(), name="api-tokens"),
    path("v1/tokens/<uuid:token_id>", token_views.TokenItemView.as_view(), name="api-token"),
]
