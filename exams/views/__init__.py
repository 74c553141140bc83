"""Learner pages, one module per area: catalogue and start pages, attempts, dashboard, reports."""
