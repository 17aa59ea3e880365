"""The verdict vocabulary: what a reviewer can say about a rewrite, and which artifact went wrong first.

One definition for the queue, the regression cases, replay, the terminal review and the dashboard. The
members are ``StrEnum``s, so they compare equal to the strings stored in the ``verdicts`` table and
serialise to them (``json.dumps(Label.OK) == '"ok"'``). Imports only the standard library.
"""

from __future__ import annotations

from enum import StrEnum


class Label(StrEnum):
    """A verdict label (issue 6's form). ``ok`` and ``false_alarm_synonym`` mean the rewrite was fine."""

    OK = "ok"
    FABRICATED_CONSTRAINT = "fabricated_constraint"
    DROPPED_CONSTRAINT = "dropped_constraint"
    WRONG_ANTECEDENT = "wrong_antecedent"
    UNRESOLVED_REFERENCE = "unresolved_reference"
    OVER_CARRIED = "over_carried"
    NOT_A_QUERY = "not_a_query"
    WINDOW_TRUNCATED = "window_truncated"
    MISSING_ASSISTANT_TURNS = "missing_assistant_turns"
    FOREIGN_SESSION = "foreign_session"
    RANKING = "ranking"
    GENERATION = "generation"
    FALSE_ALARM_SYNONYM = "false_alarm_synonym"


class Artifact(StrEnum):
    """The first wrong artifact, in the order a reviewer reads them; ``none`` when nothing was wrong."""

    CHAT_STATE = "chat_state"
    REWRITE = "rewrite"
    RETRIEVAL = "retrieval"
    GENERATION = "generation"
    NONE = "none"


LABELS: tuple[str, ...] = tuple(label.value for label in Label)
ARTIFACTS: tuple[str, ...] = tuple(artifact.value for artifact in Artifact)
FINE_LABELS: tuple[str, ...] = (Label.OK.value, Label.FALSE_ALARM_SYNONYM.value)
"""Labels meaning the rewrite was fine; they go with artifact ``none``."""
DEFAULT_ARTIFACT: dict[str, str] = {
    **{label: Artifact.REWRITE.value for label in LABELS},
    Label.OK: Artifact.NONE,
    Label.FALSE_ALARM_SYNONYM: Artifact.NONE,
    Label.WINDOW_TRUNCATED: Artifact.CHAT_STATE,
    Label.MISSING_ASSISTANT_TURNS: Artifact.CHAT_STATE,
    Label.FOREIGN_SESSION: Artifact.CHAT_STATE,
    Label.RANKING: Artifact.RETRIEVAL,
    Label.GENERATION: Artifact.GENERATION,
}
"""The first wrong artifact a label implies, for the terminal commands' default ``--artifact``."""
