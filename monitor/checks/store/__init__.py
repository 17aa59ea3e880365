"""The checks stage's storage adapter, the only module of ``monitor.checks`` that touches the store: runs
(which records were checked at which set of check versions, and storing outcomes) in ``runs``; findings
read back, graded again against the rewriter profile, and the profile itself, in ``findings``.

Every name the rest of the code reads is importable from here as well as from its module.
"""

from monitor.checks.store.findings import (
    RESTYLE_PAGE,
    FindingRow,
    ProfileReader,
    RewriteMeta,
    StoredRewrite,
    day_spans,
    evaluation_events,
    finding_row,
    list_findings,
    load_profile,
    profile_conversations,
    record_added_lemmas,
    restyle_findings,
    rewrite_meta,
    stored_rewrites,
)
from monitor.checks.store.runs import (
    Coverage,
    Pair,
    check_set_ids,
    check_set_key,
    clear_runs,
    count_unchecked,
    coverage,
    delete_runs,
    fully_checked,
    run_statuses,
    sets_holding,
    store_outcomes,
    unchecked_newest_first,
    unchecked_record_ids,
)

__all__ = [
    "RESTYLE_PAGE",
    "Coverage",
    "FindingRow",
    "Pair",
    "RewriteMeta",
    "StoredRewrite",
    "check_set_ids",
    "check_set_key",
    "clear_runs",
    "count_unchecked",
    "coverage",
    "day_spans",
    "delete_runs",
    "evaluation_events",
    "finding_row",
    "fully_checked",
    "list_findings",
    "ProfileReader",
    "load_profile",
    "profile_conversations",
    "record_added_lemmas",
    "restyle_findings",
    "rewrite_meta",
    "run_statuses",
    "sets_holding",
    "stored_rewrites",
    "store_outcomes",
    "unchecked_newest_first",
    "unchecked_record_ids",
]
