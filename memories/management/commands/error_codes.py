"""`manage.py error_codes`: print the error catalogue as the table in docs/api.md; `--write` puts
it there (between the markers), so the docs cannot drift from `memories.errors`."""

from __future__ import annotations

from pathlib import Path

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError, CommandParser

from memories.errors import markdown_table

START = "<!-- error codes: generated from memories/errors.py by `manage.py error_codes --write` -->\n"
END = "<!-- end of error codes -->\n"


def docs_path() -> Path:
    return Path(settings.BASE_DIR) / "docs" / "api.md"


def with_table(text: str) -> str:
    """`text` (docs/api.md) with the generated table between its markers."""
    if START not in text or END not in text:
        raise CommandError("docs/api.md has no error-code markers")
    before, rest = text.split(START, 1)
    _, after = rest.split(END, 1)
    return f"{before}{START}{markdown_table()}{END}{after}"


class Command(BaseCommand):
    help = "Print the error catalogue as a Markdown table; --write updates docs/api.md."
    requires_system_checks: list[str] = []

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--write", action="store_true", help="rewrite the table in docs/api.md")

    def handle(self, *args: object, **options: object) -> None:
        if not options["write"]:
            self.stdout.write(markdown_table(), ending="")
            return
        path = docs_path()
        path.write_text(with_table(path.read_text()))
        self.stdout.write(f"updated {path.name}")
