"""Deep Recall project configuration.

Kept free of imports on purpose: `manage.py` loads `config.bootstrap` with the
system Python before any dependency is installed.
"""
