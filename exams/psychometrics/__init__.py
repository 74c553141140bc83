"""Item statistics, test reliability and the mis-key rule (classical test theory over finished mocks)."""
