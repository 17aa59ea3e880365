"""``scripts/simulate_review.py LABELS --logs FILE --cv --json`` (issue 34): the interface other tools
read, on the smallest labelled file."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from tests.helpers import REPO, SHARED_DATA

LABELS = SHARED_DATA / "labels" / "qrecc_audit_labels.jsonl"
LOGS = SHARED_DATA / "logs" / "qrecc_infocqr_dev2k.jsonl"
FIGURES = {"queue_precision_third", "fa_high", "fa_medium", "fab_recall_medium", "reach", "flagged", "items"}


@pytest.mark.skipif(not LABELS.exists(), reason="the shared labelled data is not here")
def test_the_cross_validated_measure_prints_its_documented_shape() -> None:
    done = subprocess.run(
        [
            sys.executable,
            str(REPO / "scripts" / "simulate_review.py"),
            str(LABELS),
            "--logs",
            str(LOGS),
            "--cv",
            "--json",
        ],
        capture_output=True,
        text=True,
        cwd=REPO,
        check=False,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    got = json.loads(done.stdout)
    assert set(got) == {"files", "pooled"}
    (name,) = got["files"]
    assert name == "qrecc_audit_labels.jsonl"
    # "fitted" is the ceiling: the estimates fitted on the conversations they rank
    assert set(got["files"][name]) == {"on", "off", "cold", "fitted"}
    assert set(got["pooled"]) == {"on", "off", "fitted"}
    for fig in (*got["files"][name].values(), *got["pooled"].values()):
        assert set(fig) == FIGURES
        assert fig["items"] == 40  # every labelled item of the file has its rewrite in the log
    on, off = got["files"][name]["on"], got["files"][name]["off"]
    assert on["flagged"] == off["flagged"] > 0  # the same items, graded two ways
    # learning never raises a grade: no more false alarms at medium+ than today's grades
    assert on["fa_medium"] <= off["fa_medium"]
    # on this file the fitted steps rank every one of the budget's 9 items right (27 flagged, 13 of
    # them with an error label), where cross-validated learning and today's grades find 6
    fitted = got["files"][name]["fitted"]
    assert (fitted["flagged"], fitted["queue_precision_third"]) == (27, 1.0)
