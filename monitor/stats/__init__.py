"""Statistics: finding rates, precision of verdicts, whole-traffic estimates and the label evaluation."""
