"""rules/*.yaml loading: typed models, content hash, and file:line errors."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from monitor.bundled import bundled_dir
from monitor.checks.rules import load_rules, validate_rules
from monitor.errors import RulesError
from monitor.text import match_key


@pytest.fixture()
def rules_copy(tmp_path: Path) -> Path:
    for name in ("aliases.yaml", "neutral.yaml", "qualifiers.yaml"):
        shutil.copy(bundled_dir("rules") / name, tmp_path / name)
    return tmp_path


def test_repo_rules_load_and_validate():
    rules = load_rules()
    assert validate_rules() == []
    assert len(rules.hash) == 16
    assert {k.kind for k in rules.kinds} >= {
        "plan_tier",
        "product_version",
        "environment",
        "tenancy",
        "region",
        "os_platform",
        "year_date",
        "age_demographic",
        "diet",
        "place",
    }
    assert "information" in rules.neutral_words


def test_hash_ignores_comments_but_not_content(rules_copy: Path):
    base = load_rules(rules_copy).hash
    p = rules_copy / "neutral.yaml"
    p.write_text(p.read_text() + "\n# a comment changes nothing\n")
    assert load_rules(rules_copy).hash == base
    p.write_text(p.read_text().replace("words: [information,", "words: [tidbit, information,", 1))
    assert load_rules(rules_copy).hash != base


def test_unknown_key_reports_file_and_line(rules_copy: Path):
    (rules_copy / "aliases.yaml").write_text(
        "version: 1\ngroups:\n  - name: a\n    members: [x, y]\n    colour: red\n"
    )
    with pytest.raises(RulesError) as exc:
        load_rules(rules_copy)
    assert str(exc.value) == f"{rules_copy}/aliases.yaml:5: groups.0.colour: Extra inputs are not permitted"


def test_a_duplicate_key_is_an_error_not_a_silent_replacement(rules_copy: Path):
    # YAML would keep the second "groups:" and drop the first list without a word
    (rules_copy / "aliases.yaml").write_text(
        "version: 1\ngroups:\n  - name: a\n    members: [x, y]\ngroups:\n  - name: b\n    members: [u, v]\n"
    )
    with pytest.raises(RulesError) as exc:
        load_rules(rules_copy)
    assert str(exc.value) == (
        f"{rules_copy}/aliases.yaml:5: duplicate key 'groups' (first at line 2); merge the two"
    )
    (rules_copy / "aliases.yaml").write_text(
        "version: 1\ngroups:\n  - name: a\n    name: b\n    members: [x, y]\n"
    )
    with pytest.raises(RulesError, match=r"aliases.yaml:4: duplicate key 'name' \(first at line 3\)"):
        load_rules(rules_copy)


def test_bad_regex_reports_its_line(rules_copy: Path):
    (rules_copy / "qualifiers.yaml").write_text(
        "version: 1\n"
        "kinds:\n"
        "  - kind: plan\n"
        "    constrains: true\n"
        "    patterns:\n"
        "      - 'ok'\n"
        "      - '(unclosed'\n"
    )
    errors = validate_rules(rules_copy)
    assert len(errors) == 1
    assert errors[0].startswith(
        f"{rules_copy}/qualifiers.yaml:6: kinds.0.patterns: invalid regex '(unclosed'"
    )


def test_yaml_boolean_word_is_caught_with_line(rules_copy: Path):
    (rules_copy / "neutral.yaml").write_text(
        "version: 2\nfillers:\n  - source: Biber et al. (1999), 14.3\n    words:\n      - okay\n      - yes\n"
    )
    with pytest.raises(
        RulesError, match=r"neutral.yaml:6: fillers.0.words.1: Input should be a valid string"
    ):
        load_rules(rules_copy)


def test_invalid_yaml_and_missing_file(rules_copy: Path):
    (rules_copy / "aliases.yaml").write_text("version: 1\ngroups: [\n")
    (rules_copy / "neutral.yaml").unlink()
    errors = validate_rules(rules_copy)
    assert errors[0].startswith(f"{rules_copy}/aliases.yaml:3: invalid YAML")
    assert errors[1].startswith(f"{rules_copy}/neutral.yaml:0: cannot read")


def test_unclosed_bracket_names_where_the_construct_began(rules_copy: Path):
    # PyYAML notices the missing "]" on line 5; the bracket to close is on line 4.
    (rules_copy / "aliases.yaml").write_text(
        "version: 1\ngroups:\n  - name: a\n    members: [Dublin, eu-west-1\n  - name: b\n    members: [x]\n"
    )
    assert validate_rules(rules_copy) == [
        f"{rules_copy}/aliases.yaml:5: invalid YAML: expected ',' or ']', but got ':' "
        "(while parsing a flow sequence that starts at line 4)"
    ]


def test_duplicate_alias_member_across_groups(rules_copy: Path):
    (rules_copy / "aliases.yaml").write_text(
        "version: 1\ngroups:\n  - name: a\n    members: [Dublin, eu-west-1]\n"
        "  - name: b\n    members: [dublin, Ireland]\n"
    )
    with pytest.raises(
        RulesError,
        match=r"aliases.yaml:6: groups.1.members.0: member 'dublin' of group 'b' is already in group 'a'",
    ):
        load_rules(rules_copy)


def test_match_key():
    assert match_key("  Single-Tenant  Hosting ") == "single tenant hosting"


def test_exclude_words_must_be_single_lower_case_words(rules_copy: Path):
    (rules_copy / "qualifiers.yaml").write_text(
        "version: 1\n"
        "kinds:\n"
        "  - kind: place\n"
        "    constrains: true\n"
        "    patterns:\n"
        "      - '\\bin (?P<value>[A-Z]\\w+)'\n"
        "    exclude: [january, Super Bowl]\n"
    )
    errors = validate_rules(rules_copy)
    assert len(errors) == 1
    assert errors[0].startswith(f"{rules_copy}/qualifiers.yaml:7: kinds.0.exclude: ")
    assert "exclude word 'Super Bowl' must be one lower-case word" in errors[0]


def test_a_group_name_used_twice_is_reported_at_its_second_use(rules_copy: Path):
    (rules_copy / "aliases.yaml").write_text(
        "version: 1\n"
        "groups:\n"
        "  - name: eu-west\n"
        "    members: [Dublin, eu-west-1]\n"
        "  - name: eu-west\n"
        "    members: [Frankfurt, eu-central-1]\n"
    )
    with pytest.raises(RulesError) as exc:
        load_rules(rules_copy)
    assert str(exc.value) == f"{rules_copy}/aliases.yaml:5: groups.1.name: group name 'eu-west' is used twice"


def test_every_problem_of_a_file_is_reported_at_once(rules_copy: Path):
    (rules_copy / "neutral.yaml").write_text(
        "version: 2\nneutral:\n  - source: Quirk et al. (1985), 9.10\n    words: [5]\nsurprise: 1\n"
    )
    errors = validate_rules(rules_copy)
    assert errors == [
        f"{rules_copy}/neutral.yaml:4: neutral.0.words.0: Input should be a valid string",
        f"{rules_copy}/neutral.yaml:5: surprise: Extra inputs are not permitted",
    ]


def test_every_word_list_names_a_source_that_is_not_a_labelled_file(rules_copy: Path) -> None:
    """Tuning discipline (issue 13): each neutral/framing/filler group carries a general source, and a
    source that cites a labelled data file is refused at load time."""
    from monitor.checks.rules import LABEL_SOURCE_RE

    rules = load_rules()
    groups = [g for name in ("neutral", "framing", "fillers") for g in getattr(rules.neutral, name)]
    assert groups and all(len(g.source) >= 10 and not LABEL_SOURCE_RE.search(g.source) for g in groups)
    assert sum(len(g.words) for g in groups) == len(rules.neutral.words("neutral")) + len(
        rules.neutral.words("framing")
    ) + len(rules.neutral.words("fillers"))
    p = rules_copy / "neutral.yaml"
    p.write_text(
        p.read_text().replace("Inserts of spoken English", "Seen in cast_audit_labels.jsonl; inserts", 1)
    )
    with pytest.raises(
        RulesError,
        match=r"neutral.yaml:69: fillers\.0\.source: a source must name a general reference, never a",
    ):
        load_rules(rules_copy)
    for source, refused in (
        ("words the reviewers marked benign in the hand-labelled audit", True),
        ("terms seen in cast_audit.json and the llm_word annotations", True),
        ("Universal Dependencies v2 POS labels", False),
        ("Collins COBUILD English Usage, the informal usage label", False),
    ):
        assert bool(LABEL_SOURCE_RE.search(source)) is refused, source
    p.write_text("version: 2\nneutral:\n  - information\n")
    with pytest.raises(RulesError, match=r"neutral.yaml:3: neutral.0: Input should be a valid dictionary"):
        load_rules(rules_copy)
