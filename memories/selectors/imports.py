"""Reads of imports: one of the owner's, and their list."""

from __future__ import annotations

from django.db.models import QuerySet

from accounts.models import User
from memories.errors import AppError, Code
from memories.models import Import
from memories.parsing import RowId


def import_list(*, owner: User) -> QuerySet[Import]:
    """The owner's imports, newest first, with their jobs; the file's bytes are not read."""
    return (
        Import.objects.filter(owner=owner).select_related("job").defer("data").order_by("-created_at", "-id")
    )


def import_get(*, owner: User, import_id: RowId) -> Import:
    """One of the owner's imports (`import_not_found` for another account's: existence is not revealed)."""
    made = import_list(owner=owner).filter(id=import_id).first()
    if made is None:
        raise AppError(Code.IMPORT_NOT_FOUND)
    return made
