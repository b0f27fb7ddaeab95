"""The worker: a job's life from the queue to its rows, above the pipeline's steps.

The Celery tasks (memories.tasks) call it; it calls the pipeline's steps (extract, dedupe, the update
engine, supersede) and the services that write what they find.
"""
