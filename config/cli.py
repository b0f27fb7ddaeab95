"""The `deeprecall` console script, and `manage.py` behind the error boundary (config/boundary.py)."""

from __future__ import annotations

import argparse
import os
from collections.abc import Sequence

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
