"""Retrieval and answering: hybrid recall over one space (`recall`) and grounded answers whose
citations are checked (`answer`).
"""
