"""The question bank and its authoring: the admin that edits it, imports and exports
(imports, formats/), exhibit images, the cue checks, loading the shipped bank, and errata
(errata/: learners' reports and the regrade a confirmed erratum runs).

May import exams.models, exams.letters, exams.bounds, exams.markdown, the exam room's
grading (a regrade grades again) and jobs. The room and study import from here only
plain computations (formats, exhibits) and the report workflow.
"""
