"""``wrong_antecedent``: the checks that read which antecedent the query took, a module each, imported
here so that each registers, in report order: ``list_reference``, ``topic_shift``, ``antecedent_recency``
(``recency``), ``swapped_name``, ``ignored_correction`` (``correction``). ``topics`` holds what two of
them share."""

# isort: off
# (the order of these imports is the order the checks are reported in: keep it)
from monitor.checks.antecedents import list_reference  # noqa: F401
from monitor.checks.antecedents import topic_shift  # noqa: F401
from monitor.checks.antecedents import recency  # noqa: F401
from monitor.checks.antecedents import swapped_name  # noqa: F401
from monitor.checks.antecedents import correction  # noqa: F401

# isort: on
