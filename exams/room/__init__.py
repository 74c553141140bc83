"""The exam room: the draw (draw.py), saving answers (saving.py), reading a question page
(reading.py), grading (grading.py), who may open an attempt (access.py), the attempt
workflows (services.py: start, check, submit, finish, expire) and the attempt pages (views/).

May import exams.models, exams.letters, exams.markdown, the bank's plain computations, and
study's review cards (grading a slot records a review). Study builds its sessions through
services.attempt_start.
"""
