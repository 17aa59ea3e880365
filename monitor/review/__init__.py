"""Review: the verdict vocabulary, verdicts on queued items and the alias proposals they file."""
