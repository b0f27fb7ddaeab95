"""Retrieval and answering: hybrid recall over one space (`recall`, its rows read by `rows`),
grounded answers whose citations are checked (`answer`), the dashboard's search box (`search`), and
the evidence profile's facts and claims (`evidence`), found by recall.
"""
