"""Operator views. Embeddings are never rendered; state changes go through services."""

from __future__ import annotations

from typing import Any

from django import forms
from django.contrib import admin, messages
from django.contrib.auth.admin import UserAdmin as BaseUserAdmin
from django.contrib.auth.forms import BaseUserCreationForm, UserChangeForm
from django.db.models import Count, Q, QuerySet
from django.http import HttpRequest

from accounts.caller import Actor
from accounts.models import User
from memories.models import AuditEvent, Entity, Evidence, GrantSpace, Job, Memory, Relation, Source, Space
from memories.services.memories import memory_hard_delete, memory_restore, memory_suppress
from memories.services.spaces import space_create_default


def _operator(request: HttpRequest, owner: Any) -> Actor:
    """An operator acting on someone's memories: the owner's data, the operator's name on the row."""
    return Actor(owner=owner, user=request.user if request.user.is_authenticated else None)


@admin.register(Space)
class SpaceAdmin(admin.ModelAdmin):
    list_display = ("name", "owner", "is_default", "created_at")
    list_filter = ("is_default",)
    search_fields = ("name", "owner__email")
    raw_id_fields = ("owner",)


@admin.register(Source)
class SourceAdmin(admin.ModelAdmin):
    list_display = ("id", "owner", "origin", "space", "agent", "filename", "size_bytes", "recorded_at")
    list_filter = ("origin", "versioning_mode", "recorded_at")
    search_fields = ("id", "owner__email", "source_ref", "filename", "content_hash")
    raw_id_fields = ("owner", "space", "agent")
    date_hierarchy = "recorded_at"

    def has_change_permission(self, request: HttpRequest, obj: object = None) -> bool:
        # Sources are testimony: never edited, only purged by a hard delete.
        return False

    def has_delete_permission(self, request: HttpRequest, obj: object = None) -> bool:
        # Deleting a source alone would leave its memories' words everywhere: delete the memories.
        return False


class EvidenceInline(admin.TabularInline):
    model = Evidence
    fields = ("source", "stance", "recorded_at")
    readonly_fields = fields
    extra = 0
    can_delete = False


@admin.register(Memory)
class MemoryAdmin(admin.ModelAdmin):
    list_display = (
        "short_content",
        "kind",
        "owner",
        "space",
        "status",
        "pinned",
        "evidence_count",
        "recorded_at",
        "superseded_at",
    )
    list_filter = ("kind", "status", "pinned", "recorded_at", "superseded_at")
    search_fields = ("content", "owner__email", "tags")
    raw_id_fields = ("owner", "space", "source", "job", "agent", "superseded_by")
    date_hierarchy = "recorded_at"
    # `embedding` is excluded on purpose: 384 floats help nobody and slow the page.
    exclude = ("embedding",)
    # What a person said is theirs: an operator may hide it or delete it, never rewrite it.
    readonly_fields = (
        "id",
        "content",
        "search_vector_summary",
        "status",
        "suppressed_at",
        "suppressed_reason",
    )
    inlines = [EvidenceInline]
    actions = ["suppress_selected", "restore_selected", "delete_selected"]

    def delete_model(self, request: HttpRequest, obj: Memory) -> None:
        # The purge every other delete path uses: source text, evidence, entities, the export.
        memory_hard_delete(actor=_operator(request, obj.owner), memory_id=obj.id, reason="operator")

    def delete_queryset(self, request: HttpRequest, queryset: QuerySet[Memory]) -> None:
        for memory in queryset.select_related("owner"):
            memory_hard_delete(actor=_operator(request, memory.owner), memory_id=memory.id, reason="operator")

    def get_queryset(self, request: HttpRequest) -> QuerySet[Memory]:
        return (
            super()
            .get_queryset(request)
            .defer("embedding")
            .select_related("owner", "space")
            .annotate(
                _evidence_count=Count(
                    "evidence__source__claimant",
                    distinct=True,
                    filter=Q(evidence__stance=Evidence.Stance.SUPPORTS),
                )
            )
        )

    @admin.display(description="content")
    def short_content(self, obj: Memory) -> str:
        return obj.content if len(obj.content) <= 80 else obj.content[:79] + "…"

    @admin.display(description="evidence", ordering="_evidence_count")
    def evidence_count(self, obj: Memory) -> int:
        return int(getattr(obj, "_evidence_count", 0))

    @admin.display(description="full text")
    def search_vector_summary(self, obj: Memory) -> str:
        return "indexed" if obj.content else "empty"

    @admin.action(description="Suppress selected memories (restorable)")
    def suppress_selected(self, request: HttpRequest, queryset: QuerySet[Memory]) -> None:
        count = 0
        for memory in queryset.select_related("owner"):
            memory_suppress(actor=_operator(request, memory.owner), memory_id=memory.id, reason="operator")
            count += 1
        self.message_user(request, f"Suppressed {count} memories.", messages.SUCCESS)

    @admin.action(description="Restore selected memories")
    def restore_selected(self, request: HttpRequest, queryset: QuerySet[Memory]) -> None:
        count = 0
        for memory in queryset.select_related("owner"):
            memory_restore(actor=_operator(request, memory.owner), memory_id=memory.id)
            count += 1
        self.message_user(request, f"Restored {count} memories.", messages.SUCCESS)


@admin.register(Evidence)
class EvidenceAdmin(admin.ModelAdmin):
    list_display = ("id", "owner", "source", "memory", "relation", "stance", "recorded_at")
    list_filter = ("stance",)
    search_fields = ("owner__email", "source__id", "memory__id")
    raw_id_fields = ("owner", "source", "memory", "relation")


@admin.register(Entity)
class EntityAdmin(admin.ModelAdmin):
    list_display = ("name", "type", "owner", "space", "memory_count", "updated_at")
    list_filter = ("type",)
    search_fields = ("name", "normalized_name", "owner__email")
    raw_id_fields = ("owner", "space")

    def get_queryset(self, request: HttpRequest) -> QuerySet[Entity]:
        return super().get_queryset(request).annotate(_memory_count=Count("memories"))

    @admin.display(description="memories", ordering="_memory_count")
    def memory_count(self, obj: Entity) -> int:
        return int(getattr(obj, "_memory_count", 0))


@admin.register(Relation)
class RelationAdmin(admin.ModelAdmin):
    list_display = ("subject", "type", "object", "owner", "valid_from", "valid_until", "superseded_at")
    list_filter = ("type", "superseded_at")
    search_fields = ("subject__name", "object__name", "owner__email")
    raw_id_fields = ("owner", "space", "subject", "object", "superseded_by")
    exclude = ("embedding",)


@admin.register(Job)
class JobAdmin(admin.ModelAdmin):
    list_display = ("id", "kind", "status", "owner", "attempts", "error_code", "created_at", "finished_at")
    list_filter = ("kind", "status", "error_code", "created_at")
    search_fields = ("id", "owner__email", "error_code")
    raw_id_fields = ("owner", "space", "agent", "source")
    date_hierarchy = "created_at"


@admin.register(GrantSpace)
class GrantSpaceAdmin(admin.ModelAdmin):
    list_display = ("owner", "application", "personal_token", "space", "updated_at")
    search_fields = ("owner__email",)
    raw_id_fields = ("owner", "application", "personal_token", "space")


@admin.register(AuditEvent)
class AuditEventAdmin(admin.ModelAdmin):
    list_display = ("created_at", "action", "target_type", "target_id", "actor_user", "actor_agent")
    list_filter = ("action", "target_type", "created_at")
    search_fields = ("target_id", "owner_id_snapshot", "actor_user__email", "request_id")
    date_hierarchy = "created_at"

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: object = None) -> bool:
        # The audit trail is append-only.
        return False


class UserCreationForm(BaseUserCreationForm):
    class Meta:
        model = User
        fields = ("email",)

    def clean_email(self) -> str:
        email = self.cleaned_data["email"].strip().lower()
        if User.objects.filter(email=email).exists():
            raise forms.ValidationError("A user with this email already exists.")
        return str(email)


class UserEditForm(UserChangeForm):
    class Meta:
        model = User
        fields = "__all__"


@admin.register(User)
class UserAdmin(BaseUserAdmin):
    form = UserEditForm
    add_form = UserCreationForm
    ordering = ("email",)
    list_display = ("email", "display_name", "is_active", "is_staff", "date_joined", "last_login")
    list_filter = ("is_active", "is_staff", "is_superuser")
    search_fields = ("email", "display_name")
    readonly_fields = ("id", "date_joined", "last_login")
    fieldsets = (
        (None, {"fields": ("id", "email", "password")}),
        ("Profile", {"fields": ("display_name",)}),
        ("Permissions", {"fields": ("is_active", "is_staff", "is_superuser", "groups", "user_permissions")}),
        ("Dates", {"fields": ("date_joined", "last_login")}),
    )
    add_fieldsets = ((None, {"classes": ("wide",), "fields": ("email", "password1", "password2")}),)

    def save_model(self, request: HttpRequest, obj: Any, form: Any, change: bool) -> None:
        super().save_model(request, obj, form, change)
        if not change:
            # Every user has a default space, however they were created.
            space_create_default(owner=obj)
