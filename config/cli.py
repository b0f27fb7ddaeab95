"""The `deeprecall` console script, and `manage.py` behind the error boundary (config/boundary.py)."""

from __future__ import annotations

import argparse
import io
import os
import sys
import time
import zipfile
from collections.abc import Sequence
from pathlib import Path

from config.boundary import ServiceConfigError, fail


def run_django(argv: Sequence[str]) -> None:
    """Run a Django management command behind the configuration error boundary."""
    from django.core.exceptions import ImproperlyConfigured
    from django.core.management import execute_from_command_line

    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    try:
        execute_from_command_line(list(argv))
    except (ImproperlyConfigured, ServiceConfigError) as exc:
        fail(str(exc))


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        prog="deeprecall",
        description="Deep Recall: long-term memory for AI agents.",
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    up = sub.add_parser("up", help="start the web server, MCP endpoint, worker and database")
    up.add_argument("--host", default=None, help="interface to listen on (default 127.0.0.1)")
    up.add_argument("--port", type=int, default=None, help="port (default $PORT or 8000)")
    sub.add_parser("manage", help="run a Django management command", add_help=False)
    sub.add_parser(
        "mcp",
        help="run a stdio MCP server that proxies to a Deep Recall deployment",
        description=(
            "Speak MCP over stdin/stdout for clients that only support stdio, and proxy the tools to "
            "a Deep Recall deployment."
        ),
        epilog=(
            "environment: DEEPRECALL_API_URL (the deployment's base URL), DEEPRECALL_API_TOKEN (a personal "
            "access token), optional DEEPRECALL_API_TIMEOUT (seconds, default 120) and DEEPRECALL_LOG_LEVEL "
            "(logs go to stderr)"
        ),
    )
    imports = sub.add_parser(
        "import",
        help="import a history (ChatGPT or Claude export, mem0 JSON, Markdown notes, a Deep Recall export)",
        description=(
            "Send an export to a Deep Recall deployment's POST /api/v1/imports and follow its progress. "
            "A folder (an Obsidian vault) is sent as a zip of its Markdown notes."
        ),
        epilog="environment: DEEPRECALL_API_URL (the deployment's base URL), DEEPRECALL_API_TOKEN (a "
        "personal access token with memory:write)",
    )
    imports.add_argument("file", type=Path, help="the export file, or a folder of Markdown notes")
    imports.add_argument("--space", default=None, help="the space to import into (its id; default: yours)")
    imports.add_argument("--no-wait", action="store_true", help="print the import's id and return")
    args, rest = parser.parse_known_args(argv)
    if args.command is None:
        parser.print_help()
        return
    if args.command == "up":
        command = ["deeprecall", "up"]
        if args.host:
            command += ["--host", args.host]
        if args.port:
            command += ["--port", str(args.port)]
        run_django(command + rest)
    elif args.command == "import":
        if rest:
            parser.error(f"import takes one file (got also {' '.join(rest)})")
        raise SystemExit(import_file(args.file, space=args.space, wait=not args.no_wait))
    elif args.command == "manage":
        run_django(["deeprecall", *rest])
    elif args.command == "mcp":
        if rest:
            parser.error(
                f"mcp takes no arguments (got {' '.join(rest)}); configure it with environment variables"
            )
        # Imported here, and never Django: the proxy must start fast without a database.
        from mcp_gateway.stdio_proxy import main as mcp_main

        raise SystemExit(mcp_main())


def _folder_zip(folder: Path) -> bytes:
    """A folder's Markdown notes as a zip, their paths relative to the folder (the notes' ids)."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for path in sorted(folder.rglob("*")):
            # A link is not followed: a vault someone shared can hold "notes.md" linking to
            # ~/.ssh/id_ed25519, which would be uploaded as a note.
            # (rglob does not enter a linked folder; it does list a linked file.)
            if path.is_file() and not path.is_symlink() and path.suffix.lower() in (".md", ".markdown"):
                archive.write(path, path.relative_to(folder).as_posix())
    return buffer.getvalue()


def import_file(path: Path, *, space: str | None, wait: bool) -> int:
    """`deeprecall import FILE`: 0 when the import succeeded (or was sent, without waiting), 1 when
    the deployment refused it or it failed; what happened is printed either way."""
    import httpx

    url = os.environ.get("DEEPRECALL_API_URL", "").strip().rstrip("/")
    token = os.environ.get("DEEPRECALL_API_TOKEN", "").strip()
    if not url or not token:
        print("set DEEPRECALL_API_URL and DEEPRECALL_API_TOKEN", file=sys.stderr)
        return 2
    if path.is_dir():
        data, name = _folder_zip(path), f"{path.name or 'notes'}.zip"
    elif path.is_file():
        data, name = path.read_bytes(), path.name
    else:
        print(f"{path}: no such file or folder", file=sys.stderr)
        return 2
    headers = {"Authorization": f"Bearer {token}"}
    with httpx.Client(base_url=url, timeout=600, headers=headers) as client:
        response = client.post(
            "/api/v1/imports", files={"file": (name, data)}, data={"space": space} if space else {}
        )
        body = response.json()
        if response.status_code != 202:
            error = body.get("error", {})
            print(f"refused: {error.get('code')}: {error.get('message')}", file=sys.stderr)
            return 1
        made = body["import"]
        print(f"import {made['id']}: {made['format']}, {made['items']['total']} items")
        while wait and made["status"] in ("queued", "running"):
            time.sleep(1)
            made = client.get(f"/api/v1/imports/{made['id']}").json()["import"]
            items = made["items"]
            print(
                f"  {made['status']}: {items['read']}/{items['total']} read, {items['stored']} stored",
                flush=True,
            )
    items = made["items"]
    reasons = made["skipped_reasons"] or ""
    print(
        f"{made['status']}: {items['stored']} stored, {items['skipped']} skipped {reasons}, "
        f"{items['failed']} failed"
    )
    if made.get("error"):
        print(f"{made['error']['code']}: {made['error']['message']}", file=sys.stderr)
    return 0 if made["status"] in ("succeeded", "queued", "running") else 1
