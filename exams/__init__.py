"""The exams app: the model (exams.models) and its vocabulary, shared by every concern.

Concerns, each its own package:
- exams.bank: the question bank and its authoring (admin, imports and formats, exhibits,
  cue checks, loading the shipped bank) and errata (exams.bank.errata: reports, the regrade).
- exams.room: the exam room (the draw, saving, reading, grading, the attempt pages).
- exams.study: study (practice builder, review cards and scheduling, bookmarks, progress,
  readiness, the dashboard).
- exams.statistics: item and test statistics (the refresh, the formulas, the mis-key rule).
Here: exams.models (one module per concern), exams.letters (a choice's letter), exams.bounds
(the bank's bounds), exams.markdown, exams.tasks (background tasks: thin wrappers, their
paths are stored in queued rows), exams.urls (the learner's pages), exams.roles, exams.tuning.
Imports point one way: pages (views, admin, forms, urls) → workflows → models → plain
computations; tests/test_import_contract.py holds it.
"""
