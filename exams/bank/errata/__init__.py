"""Errata: learners' reports on a question (disputes) and the regrade a confirmed erratum runs over past attempts."""
