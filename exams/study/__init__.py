"""Study: the practice builder (builder.py, practice.py), review cards and their FSRS
scheduling (reviews.py, scheduling.py), bookmarks, progress and readiness, the dashboard and
its exports (views/).

May import exams.models, exams.letters and the exam room (sessions are attempts: they start
through exams.room.services and draw with exams.room.draw).
"""
