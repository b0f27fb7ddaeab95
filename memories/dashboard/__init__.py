"""The web dashboard: server-rendered pages where people see and correct their memory.

Views are thin: they validate a form, call one service or selector, and render a
template under templates/dashboard/. Account pages and sign-up live in account.py.
"""
