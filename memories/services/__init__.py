"""Writes, by noun. Every function is keyword-only, takes the owner (or the caller) explicitly
and runs in one transaction; views, API endpoints, MCP tools and admin actions call these and never
write models themselves.

The one other writer is the worker (memories.worker), which the Celery tasks run: it holds a job's
lease and writes the job's rows in its own transaction (memories.worker.store), calling these for
what they own (a source's text, entities, the rows' insert).
"""
