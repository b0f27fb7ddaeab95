"""Reads, by noun. Every function is keyword-only and takes the owner explicitly; nothing here
writes. A row of another account is indistinguishable from a row that does not exist.
"""
