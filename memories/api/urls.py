"""REST API routes (/api/v1/...). Views live in one module per resource beside this one."""

from django.urls import path
from drf_spectacular.views import SpectacularAPIView, SpectacularSwaggerSplitView

from memories.api import open_query
from memories.api.documents import DocumentUploadView
from memories.api.export import ExportView
from memories.api.images import ImageUploadView, image_content
from memories.api.imports import ImportCancelView, ImportCollectionView, ImportItemView, ImportUndoView
from memories.api.jobs import JobDetailView, JobListView
from memories.api.memories import (
    MemoryCollectionView,
    MemoryItemView,
    MemoryPinView,
    MemoryRestoreView,
    MemorySearchView,
    MemorySuppressView,
    MemoryUnpinView,
)
from memories.api.operations import OperationListView, OperationRunView, ResourceListView, ResourceReadView
from memories.api.relations import RelationItemView, RelationRestoreView
from memories.api.spaces import SpaceCollectionView, SpaceItemView
from memories.api.tokens import TokenCollectionView, TokenItemView

urlpatterns = [
    path("schema/", SpectacularAPIView.as_view(), name="api-schema"),
    # The split view serves its script as a file, which the Content-Security-Policy allows. It is a
    # page: GET only (DRF's OPTIONS description has no template to render it with, a 500).
    path(
        "docs/",
        SpectacularSwaggerSplitView.as_view(url_name="api-schema", http_method_names=["get", "head"]),
        name="api-docs",
    ),
    path("v1/operations", OperationListView.as_view(), name="api-operations"),
    path("v1/operations/<str:name>", OperationRunView.as_view(), name="api-operation-run"),
    path("v1/resources", ResourceListView.as_view(), name="api-resources"),
    path("v1/resources/read", ResourceReadView.as_view(), name="api-resource-read"),
    *open_query.urlpatterns,
    path("v1/memories", MemoryCollectionView.as_view(), name="api-memories"),
    path("v1/memories/search", MemorySearchView.as_view(), name="api-memory-search"),
    path("v1/memories/<uuid:memory_id>", MemoryItemView.as_view(), name="api-memory"),
    path("v1/memories/<uuid:memory_id>/pin", MemoryPinView.as_view(), name="api-memory-pin"),
    path("v1/memories/<uuid:memory_id>/unpin", MemoryUnpinView.as_view(), name="api-memory-unpin"),
    path(
        "v1/memories/<uuid:memory_id>/suppress",
        MemorySuppressView.as_view(),
        name="api-memory-suppress",
    ),
    path(
        "v1/memories/<uuid:memory_id>/restore",
        MemoryRestoreView.as_view(),
        name="api-memory-restore",
    ),
    path("v1/relations/<uuid:relation_id>", RelationItemView.as_view(), name="api-relation"),
    path(
        "v1/relations/<uuid:relation_id>/restore",
        RelationRestoreView.as_view(),
        name="api-relation-restore",
    ),
    path("v1/documents", DocumentUploadView.as_view(), name="api-documents"),
    path("v1/imports", ImportCollectionView.as_view(), name="api-imports"),
    path("v1/imports/<uuid:import_id>", ImportItemView.as_view(), name="api-import"),
    path("v1/imports/<uuid:import_id>/cancel", ImportCancelView.as_view(), name="api-import-cancel"),
    path("v1/imports/<uuid:import_id>/undo", ImportUndoView.as_view(), name="api-import-undo"),
    path("v1/images", ImageUploadView.as_view(), name="api-images"),
    # The signed image_url: no credentials, the link is the access (memories/selectors/images.py).
    path("v1/images/<uuid:source_id>", image_content, name="api-image"),
    path("v1/jobs", JobListView.as_view(), name="api-jobs"),
    path("v1/jobs/<uuid:job_id>", JobDetailView.as_view(), name="api-job"),
    path("v1/export", ExportView.as_view(), name="api-export"),
    path("v1/spaces", SpaceCollectionView.as_view(), name="api-spaces"),
    path("v1/spaces/<uuid:space_id>", SpaceItemView.as_view(), name="api-space"),
    path("v1/tokens", TokenCollectionView.as_view(), name="api-tokens"),
    path("v1/tokens/<uuid:token_id>", TokenItemView.as_view(), name="api-token"),
]
