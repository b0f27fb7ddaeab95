"""Forms of the memory pages. They validate input; services do the work."""

from __future__ import annotations

import uuid
from datetime import UTC, date, datetime, time, timedelta
from typing import Any

from django import forms
from django.conf import settings
from django.contrib.auth import forms as auth_forms
from django.utils import timezone
from django.utils.html import format_html

from accounts.caller import SCOPE_READ, SCOPE_WRITE
from accounts.forms import EMAIL_MAX_LENGTH, PASSWORD_RULES
from accounts.models import User
from accounts.services import NAME_MAX_LENGTH
from memories.dashboard.words import KIND_CHOICES, KIND_FILTER_CHOICES, plural
from memories.limits import (
    CAPTION_MAX_CHARS,
    QUERY_MAX_LENGTH,
    SPACE_NAME_MAX_LENGTH,
    TAG_MAX_LENGTH,
    TAGS_MAX,
)
from memories.models import Memory, Relation
from memories.selectors.memories import DATE_BY_OCCURRED, DATE_BY_RECORDED, STATUS_ALL, MemoryFilters
from memories.selectors.spaces import space_list

# What a person types to confirm a hard delete: a word, not a click, so it cannot happen by accident.
DELETE_WORD = "delete"


Reason = Memory.SuppressReason


# The words a person reads for each reason the REST API and the `forget` tool accept.
SUPPRESS_LABELS = {
    Reason.INCORRECT: "It is wrong",
    Reason.OUTDATED: "It is out of date",
    Reason.DUPLICATE: "It repeats another memory",
    Reason.PRIVATE: "It is private",
    Reason.OTHER: "Another reason",
}


# Read from the model, so a reason added there without words here fails at import.
SUPPRESS_REASONS = [(reason, SUPPRESS_LABELS[Reason(reason)]) for reason in Reason.for_callers()]


class DateInput(forms.DateInput):
    input_type = "date"


class DashboardForm(forms.Form):
    """A form whose labels end without a colon (the label sits above its field)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("label_suffix", "")
        super().__init__(*args, **kwargs)


def _space_choices(owner: User) -> list[tuple[str, str]]:
    return [
        (str(space.id), f"{space.name} (default)" if space.is_default else space.name)
        for space in space_list(owner=owner)
    ]


def parse_tags(raw: str) -> list[str]:
    """Comma-separated tags, trimmed, duplicates dropped, order kept."""
    return list(dict.fromkeys(tag.strip() for tag in raw.split(",") if tag.strip()))


def _clean_tags(raw: str) -> list[str]:
    tags = parse_tags(raw)
    if len(tags) > TAGS_MAX:
        raise forms.ValidationError(f"Give at most {TAGS_MAX} tags.")
    too_long = [tag for tag in tags if len(tag) > TAG_MAX_LENGTH]
    if too_long:
        raise forms.ValidationError(f"A tag has at most {TAG_MAX_LENGTH} characters.")
    return tags


def _start_of(day: date) -> datetime:
    return datetime.combine(day, time.min, tzinfo=UTC)


class MemorySearchForm(DashboardForm):
    """The search box and filters of the memories page (a GET form: every field optional)."""

    q = forms.CharField(
        label="Search your memory",
        required=False,
        max_length=QUERY_MAX_LENGTH,
        widget=forms.TextInput(attrs={"type": "search", "placeholder": "e.g. where does Ana live?"}),
    )
    kind = forms.ChoiceField(
        label="Kind",
        required=False,
        choices=[("", "Any kind"), *KIND_FILTER_CHOICES],
    )
    tag = forms.CharField(label="Tags", required=False, help_text="Comma-separated; all must match.")
    space = forms.ChoiceField(label="Space", required=False)
    pinned = forms.ChoiceField(
        label="Pinned",
        required=False,
        choices=[("", "Pinned or not"), ("yes", "Pinned only"), ("no", "Not pinned")],
    )
    status = forms.ChoiceField(
        label="Status",
        required=False,
        choices=[
            (Memory.Status.ACTIVE, "Active"),
            (Memory.Status.SUPPRESSED, "Suppressed"),
            (STATUS_ALL, "Active and suppressed"),
        ],
    )
    date_by = forms.ChoiceField(
        label="Dates are",
        required=False,
        choices=[(DATE_BY_RECORDED, "when it was saved"), (DATE_BY_OCCURRED, "when it happened")],
    )
    date_from = forms.DateField(label="From", required=False, widget=DateInput())
    date_to = forms.DateField(label="To (inclusive)", required=False, widget=DateInput())

    def __init__(self, *args: Any, owner: User, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.fields["space"].choices = [("", "All spaces"), *_space_choices(owner)]  # type: ignore[attr-defined]

    def clean_tag(self) -> list[str]:
        return _clean_tags(self.cleaned_data.get("tag") or "")

    def clean(self) -> dict[str, object]:
        data = super().clean() or {}
        start, end = data.get("date_from"), data.get("date_to")
        if start and end and start > end:
            self.add_error("date_to", "The end date is before the start date.")
        return data

    @property
    def query(self) -> str:
        return str(self.cleaned_data.get("q") or "").strip()

    def filters(self) -> MemoryFilters:
        """The validated filters (call after is_valid())."""
        data = self.cleaned_data
        pinned = {"yes": True, "no": False}.get(data.get("pinned") or "")
        start, end = data.get("date_from"), data.get("date_to")
        return MemoryFilters(
            kind=data.get("kind") or None,
            tags=list(data.get("tag") or []),
            space_id=uuid.UUID(data["space"]) if data.get("space") else None,
            pinned=pinned,
            status=data.get("status") or Memory.Status.ACTIVE,
            date_by=data.get("date_by") or DATE_BY_RECORDED,
            date_from=_start_of(start) if start else None,
            # The selectors' ranges are half-open; a person means the whole last day.
            date_to=_start_of(end + timedelta(days=1)) if end else None,
        )

    @property
    def has_filters(self) -> bool:
        data = getattr(self, "cleaned_data", {})
        return any(data.get(name) for name in ("kind", "tag", "space", "pinned", "date_from", "date_to")) or (
            data.get("status") not in (None, "", Memory.Status.ACTIVE)
        )


class NoteForm(DashboardForm):
    content = forms.CharField(
        label="Note",
        max_length=settings.REMEMBER_MAX_CHARS,
        widget=forms.Textarea(attrs={"rows": 6}),
        help_text="A fact, a preference, a plan or something that happened, in plain language.",
    )
    occurred_on = forms.DateField(
        label="Date (optional)",
        required=False,
        widget=DateInput(),
        help_text="The day the note refers to; words like “yesterday” in it count from this day.",
    )
    tags = forms.CharField(
        label="Tags (optional)", required=False, help_text="Comma-separated, e.g. family, travel."
    )
    space = forms.ChoiceField(label="Space")

    def __init__(self, *args: Any, owner: User, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        choices = _space_choices(owner)
        self.fields["space"].choices = choices  # type: ignore[attr-defined]
        self.fields["space"].initial = choices[0][0] if choices else None

    def clean_content(self) -> str:
        content = str(self.cleaned_data["content"]).strip()
        if not content:
            raise forms.ValidationError("Write something to remember.")
        return content

    def clean_tags(self) -> list[str]:
        return _clean_tags(self.cleaned_data.get("tags") or "")

    @property
    def occurred_at(self) -> datetime | None:
        day = self.cleaned_data.get("occurred_on")
        # Noon UTC: the same calendar day in every time zone from UTC-11 to UTC+11.
        return datetime.combine(day, time(12), tzinfo=UTC) if day else None


class _FileInSpaceForm(DashboardForm):
    """A file for one of the owner's spaces, refused here when over its size setting."""

    max_bytes_setting = "DOCUMENT_MAX_BYTES"
    what = "document"
    space = forms.ChoiceField(label="Space")

    def __init__(self, *args: Any, owner: User, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        choices = _space_choices(owner)
        self.fields["space"].choices = choices  # type: ignore[attr-defined]
        self.fields["space"].initial = choices[0][0] if choices else None

    def clean_file(self) -> Any:
        upload = self.cleaned_data["file"]
        max_bytes = int(getattr(settings, self.max_bytes_setting))
        if upload.size is not None and upload.size > max_bytes:
            raise forms.ValidationError(f"The {self.what} is larger than {max_bytes // (1024 * 1024)} MB.")
        return upload


class UploadForm(_FileInSpaceForm):
    file = forms.FileField(
        label="Document",
        help_text="Markdown, plain text, HTML or PDF.",
        widget=forms.ClearableFileInput(attrs={"accept": ".md,.markdown,.txt,.html,.htm,.pdf"}),
    )


class ImportForm(_FileInSpaceForm):
    max_bytes_setting = "IMPORT_MAX_BYTES"
    what = "file"
    file = forms.FileField(
        label="Export file",
        help_text="A ChatGPT or Claude data export (.zip), mem0 JSON, a zip of Markdown notes, or a Deep "
        "Recall export (.jsonl).",
        widget=forms.ClearableFileInput(attrs={"accept": ".zip,.json,.jsonl,.md"}),
    )


class ImageUploadForm(_FileInSpaceForm):
    max_bytes_setting = "IMAGE_MAX_BYTES"
    what = "image"
    file = forms.FileField(
        label="Image",
        help_text="PNG, JPEG or WebP. Location and camera data are removed from what is kept.",
        widget=forms.ClearableFileInput(attrs={"accept": "image/png,image/jpeg,image/webp"}),
    )
    caption = forms.CharField(
        label="Caption",
        required=False,
        max_length=CAPTION_MAX_CHARS,
        help_text="What the picture shows, in your words. Text in the picture is read too.",
        widget=forms.Textarea(attrs={"rows": 3}),
    )


class SuppressForm(DashboardForm):
    reason = forms.ChoiceField(label="Why hide it?", choices=SUPPRESS_REASONS)


class HardDeleteForm(DashboardForm):
    confirm = forms.CharField(
        label=f"Type “{DELETE_WORD}” to delete this memory for good",
        widget=forms.TextInput(attrs={"autocomplete": "off", "spellcheck": "false"}),
        error_messages={"required": f"Type the word “{DELETE_WORD}” to confirm."},
    )

    def __init__(self, *args: Any, thing: str = "memory", **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.fields["confirm"].label = f"Type “{DELETE_WORD}” to delete this {thing} for good"

    def clean_confirm(self) -> str:
        value = str(self.cleaned_data["confirm"]).strip()
        if value.lower() != DELETE_WORD:
            raise forms.ValidationError(f"Type the word “{DELETE_WORD}” to confirm.")
        return value


class SpaceNameForm(DashboardForm):
    name = forms.CharField(label="Name", max_length=SPACE_NAME_MAX_LENGTH)

    def clean_name(self) -> str:
        name = str(self.cleaned_data["name"]).strip()
        if not name:
            raise forms.ValidationError("A space needs a name.")
        return name


class SpaceDeleteForm(DashboardForm):
    memories = forms.ChoiceField(
        label="What happens to its memories?",
        widget=forms.RadioSelect,
        error_messages={"required": "Choose whether to move or delete the memories."},
    )
    confirm_name = forms.CharField(
        label="To delete the memories, type the space's name",
        required=False,
        widget=forms.TextInput(attrs={"autocomplete": "off", "spellcheck": "false"}),
    )

    def __init__(self, *args: Any, space_name: str, default_name: str, count: int, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.space_name = space_name
        held = plural(count, "memory", "memories")
        self.fields["memories"].choices = [  # type: ignore[attr-defined]
            ("move", f"Move its {held}, with their sources and jobs, into “{default_name}”"),
            ("delete", f"Delete its {held} permanently (with a receipt)"),
        ]

    def clean(self) -> dict[str, object]:
        data = super().clean() or {}
        if data.get("memories") == "delete" and (data.get("confirm_name") or "").strip() != self.space_name:
            self.add_error("confirm_name", f"Type “{self.space_name}” exactly to delete its memories.")
        return data


class SaidCheckbox(forms.CheckboxInput):
    """A checkbox whose absence from a post is not a "no": None, so the service can choose.

    A browser sends nothing for an unticked box, so a script that leaves the field out would look
    like a person who unticked it. The box is preceded by a hidden field of the same name, "false":
    unticked, the page sends that alone; ticked, it sends both and the box's value, the later one,
    is the one read. Only a post without either is None, and shown ticked again.
    """

    def __init__(self, attrs: dict[str, Any] | None = None) -> None:
        super().__init__(attrs, check_test=lambda value: value is None or bool(value))

    def render(self, name: str, value: Any, attrs: Any = None, renderer: Any = None) -> Any:
        hidden = format_html('<input type="hidden" name="{}" value="false">', name)
        return hidden + super().render(name, value, attrs, renderer)

    # The stubs' CheckboxInput answers bool; None ("not said") is what this widget adds.
    def value_from_datadict(self, data: Any, files: Any, name: str) -> bool | None:  # type: ignore[override]
        if name not in data:
            return None
        return bool(super().value_from_datadict(data, files, name))


class _SignOutChoice(forms.Form):
    """Whether a new password also ends the access of the account's apps and tokens: on unless the
    person unticks it; None when the post does not say, and the service takes the safe choice
    (memories.services.account.account_password_changed)."""

    sign_out = forms.NullBooleanField(
        label="Also sign out my apps and tokens",
        required=False,
        initial=True,
        widget=SaidCheckbox,
        help_text="Connected apps must ask you again and your personal access tokens stop working. "
        "Other browsers are signed out either way.",
    )


class _NewPasswordWords:
    """Labels a person reads, the password rules before they type, and a rule's error under the new
    password itself (Django puts it under the confirmation, which is not where the problem is)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        fields = self.fields  # type: ignore[attr-defined]
        fields["new_password1"].label = "New password"
        fields["new_password1"].help_text = PASSWORD_RULES
        fields["new_password2"].label = "New password, again"
        fields["new_password2"].help_text = "Type the same new password, to catch a typo."
        if "old_password" in fields:
            fields["old_password"].label = "Current password"

    def validate_password_for_user(self, user: object, password_field_name: str = "") -> None:
        super().validate_password_for_user(user, "new_password1")  # type: ignore[misc]


class PasswordChangeForm(_NewPasswordWords, _SignOutChoice, auth_forms.PasswordChangeForm):
    error_messages = {
        **auth_forms.PasswordChangeForm.error_messages,
        "password_incorrect": "This is not your current password.",
        "password_mismatch": "The two new passwords differ.",
    }
    field_order = ["old_password", "new_password1", "new_password2", "sign_out"]


class SetPasswordForm(_NewPasswordWords, _SignOutChoice, auth_forms.SetPasswordForm):
    """The new password of a reset by email link: a reset is the usual answer to a stolen password."""

    error_messages = {
        **auth_forms.SetPasswordForm.error_messages,
        "password_mismatch": "The two new passwords differ.",
    }
    field_order = ["new_password1", "new_password2", "sign_out"]


class _PasswordCheck(DashboardForm):
    """A form that asks for the current password before an account change."""

    password = forms.CharField(
        label="Current password",
        strip=False,
        widget=forms.PasswordInput(attrs={"autocomplete": "current-password"}),
    )

    def __init__(self, *args: Any, user: User, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.user = user

    def clean_password(self) -> str:
        password = str(self.cleaned_data["password"])
        if not self.user.check_password(password):
            raise forms.ValidationError("This is not your current password.")
        return password


class EmailChangeForm(_PasswordCheck):
    email = forms.EmailField(
        label="New email",
        max_length=EMAIL_MAX_LENGTH,
        widget=forms.EmailInput(attrs={"autocomplete": "email"}),
    )
    field_order = ["email", "password"]

    def clean_email(self) -> str:
        email = str(self.cleaned_data["email"]).strip().lower()
        if User.objects.filter(email=email).exclude(pk=self.user.pk).exists():
            raise forms.ValidationError("Another account already uses this email.")
        return email


class AccountDeleteForm(_PasswordCheck):
    email = forms.CharField(
        label="Type your email to confirm",
        widget=forms.TextInput(attrs={"autocomplete": "off", "spellcheck": "false"}),
    )
    field_order = ["email", "password"]

    def clean_email(self) -> str:
        typed = str(self.cleaned_data["email"]).strip().lower()
        if typed != self.user.email:
            raise forms.ValidationError(f"Type {self.user.email} exactly to delete this account.")
        return typed


class TokenCreateForm(DashboardForm):
    name = forms.CharField(
        label="Name",
        max_length=NAME_MAX_LENGTH,
        help_text="Where you will use it, e.g. “laptop Claude”.",
    )
    scopes = forms.MultipleChoiceField(
        label="What it may do",
        widget=forms.CheckboxSelectMultiple,
        choices=[
            (SCOPE_READ, "Read: recall and answer (memory:read)"),
            (SCOPE_WRITE, "Write: save and forget (memory:write)"),
        ],
        initial=[SCOPE_READ, SCOPE_WRITE],
        error_messages={"required": "Choose at least one thing the token may do."},
    )
    expires_on = forms.DateField(
        label="Expires on (optional)",
        required=False,
        widget=DateInput(),
        help_text="It stops working at the start of this day (UTC). Leave empty for no expiry.",
    )

    def clean_name(self) -> str:
        name = str(self.cleaned_data["name"]).strip()
        if not name:
            raise forms.ValidationError("Give the token a name.")
        return name

    def clean_expires_on(self) -> date | None:
        day = self.cleaned_data.get("expires_on")
        if day is not None and datetime.combine(day, time.min, tzinfo=UTC) <= timezone.now():
            raise forms.ValidationError("Choose a day after today.")
        return day

    @property
    def expires_at(self) -> datetime | None:
        day = self.cleaned_data.get("expires_on")
        return datetime.combine(day, time.min, tzinfo=UTC) if day else None


def _day_of(value: datetime | None) -> date | None:
    # The calendar day in the person's zone (activated by accounts' time-zone middleware).
    return timezone.localtime(value).date() if value else None


def _noon_of(day: date | None) -> datetime | None:
    # Noon in the person's zone: the day they chose, whichever way the hours are later converted.
    return datetime.combine(day, time(12), tzinfo=timezone.get_current_timezone()) if day else None


# The clocks of the edit form: field name, the memory's clock, the label a person reads.
EDIT_CLOCKS = (
    ("occurred_on", "occurred_at", "Happened on"),
    ("valid_from_on", "valid_from", "True from"),
    ("valid_until_on", "valid_until", "True until"),
    ("due_on", "due_at", "Due on"),
)


class MemoryEditForm(DashboardForm):
    """A memory's words, kind, dates and tags. Words, kind or dates changed make a new version
    (memory_revise); tags alone are relabelled in place (memory_retag)."""

    content = forms.CharField(
        label="Memory",
        max_length=settings.REMEMBER_MAX_CHARS,
        widget=forms.Textarea(attrs={"rows": 4}),
        help_text="Changing the words, kind or dates saves a new version; this one is kept in its history.",
    )
    kind = forms.ChoiceField(label="Kind", choices=KIND_CHOICES)
    tags = forms.CharField(label="Tags", required=False, help_text="Comma-separated, e.g. family, travel.")
    occurred_on = forms.DateField(label="Happened on", required=False, widget=DateInput())
    valid_from_on = forms.DateField(label="True from", required=False, widget=DateInput())
    valid_until_on = forms.DateField(label="True until", required=False, widget=DateInput())
    due_on = forms.DateField(label="Due on", required=False, widget=DateInput())

    def __init__(self, *args: Any, memory: Memory, **kwargs: Any) -> None:
        initial = {
            "content": memory.content,
            "kind": memory.kind,
            "tags": ", ".join(memory.tags),
            **{field: _day_of(getattr(memory, clock)) for field, clock, _ in EDIT_CLOCKS},
        }
        super().__init__(*args, initial=initial, **kwargs)
        self.memory = memory

    def clean_content(self) -> str:
        content = str(self.cleaned_data["content"]).strip()
        if not content:
            raise forms.ValidationError("A memory needs words; to remove it, suppress or delete it.")
        return content

    def clean_tags(self) -> list[str]:
        return _clean_tags(self.cleaned_data.get("tags") or "")

    def clean(self) -> dict[str, object]:
        data = super().clean() or {}
        start, end = data.get("valid_from_on"), data.get("valid_until_on")
        if start and end and start > end:
            self.add_error("valid_until_on", "“True until” is before “True from”.")
        return data

    @property
    def revision_wanted(self) -> bool:
        """Whether the words, kind or a date changed (a new version), not only the tags."""
        data = self.cleaned_data
        return (
            data["content"] != self.memory.content.strip()
            or data["kind"] != self.memory.kind
            or any(data.get(field) != self.initial[field] for field, _, _ in EDIT_CLOCKS)
        )

    @property
    def tags_changed(self) -> bool:
        return list(self.cleaned_data["tags"]) != list(self.memory.tags)

    @property
    def clocks(self) -> dict[str, datetime | None]:
        """The clocks as stated: an unchanged day keeps the memory's exact time, a changed one is noon."""
        clocks: dict[str, datetime | None] = {}
        for field, clock, _ in EDIT_CLOCKS:
            day = self.cleaned_data.get(field)
            same = day == self.initial[field]
            clocks[clock] = getattr(self.memory, clock) if same else _noon_of(day)
        return clocks


class BulkActionForm(DashboardForm):
    """Several memories chosen on the list, and what to do with them."""

    ACTIONS = [
        ("suppress", "Suppress (hide from agents, restorable)"),
        ("move", "Move to another space"),
        ("delete", "Delete permanently"),
    ]
    ids = forms.TypedMultipleChoiceField(
        label="Memories", coerce=uuid.UUID, error_messages={"required": "Select at least one memory."}
    )
    action = forms.ChoiceField(label="With the selected memories", choices=ACTIONS)
    space = forms.ChoiceField(label="Move to space", required=False)
    confirmed = forms.CharField(required=False, widget=forms.HiddenInput)

    def __init__(self, *args: Any, owner: User, **kwargs: Any) -> None:
        # Its own ids: the search form on the same page has a `space` field too.
        kwargs.setdefault("auto_id", "bulk_%s")
        super().__init__(*args, **kwargs)
        self.fields["space"].choices = [("", "Choose a space"), *_space_choices(owner)]  # type: ignore[attr-defined]
        # Any id is accepted here; the services look each one up with the owner (an outsider's is
        # not found), so the choices are the submitted ones.
        raw = self.data.getlist("ids") if hasattr(self.data, "getlist") else []
        self.fields["ids"].choices = [(value, value) for value in raw]  # type: ignore[attr-defined]

    def clean(self) -> dict[str, object]:
        data = super().clean() or {}
        if data.get("action") == "move" and not data.get("space"):
            self.add_error("space", "Choose the space to move them to.")
        return data


def _zone_choices() -> list[tuple[str, str]]:
    import zoneinfo

    zones = sorted(
        z for z in zoneinfo.available_timezones() if "/" in z and not z.startswith(("Etc/", "SystemV/"))
    )
    return [("", "UTC (the default)"), *((zone, zone.replace("_", " ")) for zone in zones)]


class TimeZoneForm(DashboardForm):
    time_zone = forms.ChoiceField(
        label="Time zone",
        required=False,
        help_text="Times in the dashboard are shown in it, and the days you pick are its days.",
    )

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.fields["time_zone"].choices = _zone_choices()  # type: ignore[attr-defined]


class CurrentSpaceForm(DashboardForm):
    """Which space the memory list shows (not where anything is saved)."""

    space = forms.ChoiceField(label="Show the memories of", required=False)

    def __init__(self, *args: Any, owner: User, **kwargs: Any) -> None:
        kwargs.setdefault("auto_id", "current_%s")
        super().__init__(*args, **kwargs)
        choices = [(str(space.id), space.name) for space in space_list(owner=owner)]
        self.space_ids = {value for value, _ in choices}
        self.fields["space"].choices = [("", "All spaces"), *choices]  # type: ignore[attr-defined]


class RelationFilterForm(DashboardForm):
    """The filters of the Relations page (a GET form: every field optional)."""

    name = forms.CharField(label="Person, place or thing", required=False, max_length=200)
    type = forms.ChoiceField(
        label="Relation",
        required=False,
        choices=[("", "Any relation"), *((t.value, t.value.replace("_", " ")) for t in Relation.Type)],
    )
    space = forms.ChoiceField(label="Space", required=False)
    state = forms.ChoiceField(
        label="State",
        required=False,
        choices=[("", "Current and replaced"), ("current", "Current only"), ("replaced", "Replaced only")],
    )

    def __init__(self, *args: Any, owner: User, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.fields["space"].choices = [("", "All spaces"), *_space_choices(owner)]  # type: ignore[attr-defined]

    @property
    def has_filters(self) -> bool:
        return any((getattr(self, "cleaned_data", None) or {}).values())
