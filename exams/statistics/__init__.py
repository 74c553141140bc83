"""Item and test statistics: counted responses totalled in SQL (totals.py), the formulas
(formulas.py: facility, discrimination, KR-20, the mis-key rule) and the background refresh
(refresh.py). May import exams.models and exams.tuning; nothing imports it but pages, tasks and commands.
"""
