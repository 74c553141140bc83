"""The exam room's pages: starting, a question, the review and results, exhibits, a learner's report on a question."""
