"""Fault injection against a throwaway PostgreSQL and real gunicorn (run one at a time)."""
