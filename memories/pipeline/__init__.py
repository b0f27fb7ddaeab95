"""The memory pipeline: segment, extract, embed, dedupe, supersede.

`rules` holds the built-in extraction rules (no language model); import from there.
"""
