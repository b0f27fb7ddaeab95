"""Imports of a history (ChatGPT, Claude, mem0, Markdown notes, our own export): the file checked and
stored with its job, a cancel, and an undo that purges everything the import stored.

The file is read whole here (`import_parse`) before anything is stored, so a damaged zip, a zip bomb,
an unknown format or a changed schema is refused at once with its code, and nothing is half-written.
The worker reads it again and stores its items in batches (memories/worker/imports.py).
"""

from __future__ import annotations

import uuid
from collections.abc import Iterable
from typing import Any, cast

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from accounts.caller import Actor, Caller
from accounts.models import User
from memories.errors import AppError, Code
from memories.models import AuditEvent, Entity, Evidence, Import, Job, Memory, Relation, Source, Space
from memories.parsing import RowId
from memories.pipeline.import_formats import ArchiveLimits, import_parse
from memories.pipeline.supersede import supersession_undo
from memories.services.audit import audit_record
from memories.services.jobs import job_queue
from memories.services.purge import memories_purge, purge_record, relation_purge
from memories.services.spaces import space_for_caller, space_room_check, spaces_missing
from memories.wire import PurgeReceipt

# An item's Source: source_kind names the format, source_ref the item (the idempotency key).
SOURCE_KIND_PREFIX = "import:"


def import_source_kind(fmt: str) -> str:
    return f"{SOURCE_KIND_PREFIX}{fmt}"


def import_claimant(import_id: object) -> str:
    """Who asserted an imported item, as the evidence count sees it: the import (docs/decisions.md)."""
    return f"import:{import_id}"


def own_sources(*, owner_id: uuid.UUID, refs: Iterable[str]) -> set[str]:
    """Of our export's source ids, those that are this owner's own sources, still whole: the file
    is an export of this very account, and what it says is here already (never another owner's row,
    whose ids say nothing here)."""
    ids = {ref for ref in refs if _is_uuid(ref)}
    if not ids:
        return set()
    rows = Source.objects.filter(owner_id=owner_id, id__in=ids, purged_at__isnull=True)
    return {str(row_id) for row_id in rows.values_list("id", flat=True)}


def _is_uuid(text: str) -> bool:
    try:
        return str(uuid.UUID(text)) == text
    except ValueError:
        return False


def archive_limits() -> ArchiveLimits:
    """What a zip may unpack to (settings, read per call)."""
    return ArchiveLimits(max_total=settings.IMPORT_MAX_UNPACKED_BYTES, max_ratio=settings.IMPORT_MAX_RATIO)


def import_create(
    *, caller: Caller, actor: Actor, filename: str, data: bytes, space_id: RowId | None = None
) -> Import:
    """Check the file (format, schema, archive caps) and store it with its queued job; the audit
    trail records the import. Raises AppError, storing nothing, for a file that cannot be imported."""
    if len(data) > settings.IMPORT_MAX_BYTES:
        raise AppError(
            Code.IMPORT_TOO_LARGE,
            f"The file is larger than {settings.IMPORT_MAX_BYTES // (1024 * 1024)} MB.",
            details={"max_bytes": settings.IMPORT_MAX_BYTES},
        )
    filename = "".join(ch for ch in filename if ch.isprintable()).strip()[:255]
    _pending_check(caller.user)  # before the file is read: a refusal costs no parse
    parsed = import_parse(data=data, filename=filename, limits=archive_limits())
    if not parsed.items:
        raise AppError(Code.IMPORT_EMPTY, "The file holds no conversations, memories or notes.")
    space = space_for_caller(caller=caller, space_id=space_id)
    with transaction.atomic():
        # Again under the owner's row lock: imports sent at the same moment are counted one by one.
        User.objects.select_for_update().filter(id=caller.user.id).first()
        _pending_check(caller.user)
        if parsed.state is not None:
            # Our export names its spaces: a file that would take the account past its spaces is
            # refused whole, before anything is stored (the worker would put the rest elsewhere).
            adding = spaces_missing(owner=caller.user, names=parsed.state.spaces)
            space_room_check(owner=caller.user, adding=adding)
        job = job_queue(caller=caller, space=space, source=None, kind=Job.Kind.IMPORT, options={})
        made = Import.objects.create(
            owner=caller.user,
            space=space,
            job=job,
            format=parsed.format,
            filename=filename,
            size_bytes=len(data),
            data=data,
            items_total=len(parsed.items),
        )
        audit_record(
            actor=actor,
            action=AuditEvent.Action.IMPORTED,
            target_type="import",
            target_id=made.id,
            detail={"format": parsed.format, "items": len(parsed.items)},
        )
    return made


def _pending_check(owner: User) -> None:
    """Refuse one import more than IMPORT_MAX_PENDING queued or running: each keeps its whole file
    in the database until it is done, and the upload rate alone lets 20 files of 200 MB a minute in."""
    pending = Import.objects.filter(
        owner=owner, job__status__in=(Job.Status.QUEUED, Job.Status.RUNNING)
    ).count()
    if pending >= settings.IMPORT_MAX_PENDING:
        raise AppError(Code.IMPORT_QUEUE_FULL, details={"max_pending": settings.IMPORT_MAX_PENDING})


def _import_for_update(*, owner: User, import_id: RowId) -> Import:
    made = Import.objects.select_for_update().select_related("job").filter(owner=owner, id=import_id).first()
    if made is None:
        raise AppError(Code.IMPORT_NOT_FOUND)
    return made


@transaction.atomic
def import_cancel(*, actor: Actor, import_id: RowId) -> Import:
    """Ask the import to stop: the worker stops before its next batch (a batch in hand commits
    whole). A queued import stops at once. Idempotent; an import that already stopped is left as
    it is."""
    made = _import_for_update(owner=actor.owner, import_id=import_id)
    if made.cancel_requested_at is None and made.job.status in (Job.Status.QUEUED, Job.Status.RUNNING):
        made.cancel_requested_at = timezone.now()
        made.save(update_fields=["cancel_requested_at"])
        if made.job.status == Job.Status.QUEUED:
            import_job_stop(job=made.job, made=made)
    return made


def import_job_stop(*, job: Job, made: Import) -> None:
    """End the import's job as cancelled and let go of the file (inside the caller's transaction)."""
    Job.objects.filter(id=job.id).update(
        status=Job.Status.FAILED,
        error_code=Code.IMPORT_CANCELLED.value,
        error_message="The import was cancelled.",
        finished_at=timezone.now(),
        lease_expires_at=None,
    )
    Import.objects.filter(id=made.id).update(data=None)


@transaction.atomic
def import_undo(*, actor: Actor, import_id: RowId) -> PurgeReceipt:
    """Remove everything the import stored, as a hard delete does (memories purged, the words gone
    from every source), and give back the receipt. What its memories had replaced is current again.
    Only once the import has stopped (`import_running` before); a second undo answers the first's
    receipt."""
    made = _import_for_update(owner=actor.owner, import_id=import_id)
    if made.undo_receipt is not None:
        return cast(PurgeReceipt, made.undo_receipt)
    if made.job.status in (Job.Status.QUEUED, Job.Status.RUNNING):
        raise AppError(Code.IMPORT_RUNNING)
    owner = actor.owner
    # The owner's imports still going, locked before any memory (their worker locks its import's row
    # before the memories it writes, so the two cannot wait for each other): one of them may be
    # writing into a space this import made (_spaces_undo).
    going = list(
        Import.objects.select_for_update()
        .filter(owner=owner, job__status__in=(Job.Status.QUEUED, Job.Status.RUNNING))
        .exclude(id=made.id)
        .order_by("id")
    )
    # Its items' sources, and the `relate` claims an import of our own export replayed.
    sources = Source.objects.filter(owner=owner, claimant=import_claimant(made.id))
    source_ids = list(sources.values_list("id", flat=True))
    memories = list(
        Memory.objects.select_for_update().filter(owner=owner, source_id__in=source_ids).defer("embedding")
    )
    # What the import's memories replaced is current again (the rows they replaced among themselves
    # go with them): every one of them, current or not, since an older memory the import replaced
    # may be linked to an imported memory the import itself replaced later.
    for memory in memories:
        supersession_undo(successor=memory)
    purged = memories_purge(owner=owner, memories=memories)
    _relations_undo(owner=owner, source_ids=source_ids, purged=purged)
    # Items that only confirmed memories stored before (evidence, no memory of their own) go too.
    leftover = Source.objects.filter(owner=owner, id__in=source_ids)
    purged["sources_deleted"] += leftover.count()
    leftover.delete()
    purged["spaces"] = _spaces_undo(owner=owner, made=made, going=going)
    receipt = purge_record(
        actor=actor,
        action=AuditEvent.Action.IMPORT_UNDONE,
        target_type="import",
        target_id=made.id,
        purged=purged,
    )
    made.undone_at = timezone.now()
    made.undo_receipt = dict(receipt)
    made.data = None
    made.save(update_fields=["undone_at", "undo_receipt", "data"])
    return receipt


def _relations_undo(*, owner: User, source_ids: list[Any], purged: dict[str, int]) -> None:
    """Purge the relations only the import's claims asserted, newest first (what one replaced is
    current again, as after any relation's hard delete); one also claimed outside the import stays
    and loses the import's claims with its sources."""
    claimed = Evidence.objects.filter(owner=owner, source_id__in=source_ids, relation__isnull=False)
    relations = Relation.objects.select_for_update().filter(owner=owner, id__in=claimed.values("relation_id"))
    for relation in relations.order_by("-recorded_at", "-id"):
        if Evidence.objects.filter(owner=owner, relation=relation).exclude(source_id__in=source_ids).exists():
            continue
        for name, count in relation_purge(owner=owner, relation=relation).items():
            purged[name] = purged.get(name, 0) + count


def _spaces_undo(*, owner: User, made: Import, going: list[Import]) -> int:
    """Delete the spaces the import made (our own export's), those still empty: one the person has
    put something in since is theirs now. A space another import still going has chosen for its
    items (`spaces_used`, recorded under its row lock, which the caller holds) is handed to that
    import instead: its undo removes it. Returns how many went."""
    made_ids = made.restored.get("spaces", []) if isinstance(made.restored, dict) else []
    deleted = 0
    for space in Space.objects.select_for_update().filter(owner=owner, id__in=made_ids, is_default=False):
        held = (Memory, Source, Relation, Entity, Job, Import)
        if any(model.objects.filter(owner=owner, space=space).exists() for model in held):
            continue
        taker = next(
            (other for other in going if str(space.id) in _restored_list(other, "spaces_used")), None
        )
        if taker is not None:
            taker.restored = {**taker.restored, "spaces": [*_restored_list(taker, "spaces"), str(space.id)]}
            taker.save(update_fields=["restored"])
            continue
        space.delete()
        deleted += 1
    return deleted


def _restored_list(made: Import, key: str) -> list[str]:
    value = made.restored.get(key, []) if isinstance(made.restored, dict) else []
    return [str(item) for item in value] if isinstance(value, list) else []
