"""Writes, by noun. Every function is keyword-only, takes the owner (or the caller) explicitly
and runs in one transaction; views, API endpoints, MCP tools, admin actions and Celery tasks call
these and never write models themselves.
"""
