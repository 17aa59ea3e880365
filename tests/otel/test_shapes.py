"""Where a trace holds the conversation (issue 33, part 2): rendered condense prompts parsed back into
the history and the follow-up, the user's own template, and LangChain's serialised messages."""

from __future__ import annotations

import pytest

from monitor.otel.messages import history_of, message_of
from monitor.otel.shapes import CONDENSE_TEMPLATES, conversation, parse_condense, template_pattern
from monitor.settings import Settings

LLAMAINDEX_RENDERED = (
    "Given a conversation (between Human and Assistant) and a follow up message from Human, rewrite the "
    "message to be a standalone question that captures all relevant context from the conversation.\n\n"
    "<Chat History>\nuser: Which plan has SSO?\nassistant: Enterprise has SSO.\nIt also has SCIM.\n\n"
    "<Follow Up Message>\nAnd audit logs?\n\n<Standalone question>\n"
)
LANGCHAIN_RENDERED = (
    "Given the following conversation and a follow up question, rephrase the follow up question to be a "
    "standalone question, in its original language.\n\nChat History:\nHuman: Which plan has SSO?\n"
    "Assistant: Enterprise has SSO.\nFollow Up Input: And audit logs?\nStandalone question:"
)
# LlamaIndex's condense-plus-context prompt, indented as its source writes it
INDENTED_RENDERED = (
    "\n  Given the following conversation between a user and an AI assistant and a follow up question "
    "from user,\n  rephrase the follow up question to be a standalone question.\n\n  Chat History:\n"
    "  user: Which plan has SSO?\nassistant: Enterprise has SSO.\n  Follow Up Input: And audit logs?\n"
    "  Standalone question:"
)


@pytest.mark.parametrize(
    ("text", "last_answer"),
    [
        (LLAMAINDEX_RENDERED, "Enterprise has SSO.\nIt also has SCIM."),  # a line without a role continues
        (LANGCHAIN_RENDERED, "Enterprise has SSO."),
        (INDENTED_RENDERED, "Enterprise has SSO."),
    ],
)
def test_a_rendered_condense_prompt_gives_back_its_history_and_follow_up(text: str, last_answer: str) -> None:
    assert parse_condense(text) == (
        [("user", "Which plan has SSO?"), ("assistant", last_answer)],
        "And audit logs?",
    )


def test_a_prompt_that_is_not_a_condense_template_gives_nothing() -> None:
    assert (
        parse_condense("Answer from the context.\n\nContext: Enterprise has SSO.\nQuery: And SCIM?") is None
    )
    # the follow-up slot empty: nothing to rewrite
    assert parse_condense("Chat History:\nuser: hi\nFollow Up Input: \nStandalone question:") is None


def test_the_users_own_template_is_read_after_the_built_in_ones() -> None:
    mine = "History so far:\n{chat_history}\n---\nNew message: {question}\nSearch query:"
    rendered = "History so far:\nuser: Which plan has SSO?\n---\nNew message: And audit logs?\nSearch query:"
    assert parse_condense(rendered) is None
    assert parse_condense(rendered, (*CONDENSE_TEMPLATES, mine)) == (
        [("user", "Which plan has SSO?")],
        "And audit logs?",
    )
    with pytest.raises(ValueError, match=r"needs \{chat_history\} and \{question\}"):
        template_pattern("Rewrite {question} please")
    # other placeholders match any text
    assert template_pattern("{context}\n{chat_history}\nQ: {question}").search("ctx\nuser: a\nQ: b")


def test_settings_refuse_a_condense_template_without_its_placeholders() -> None:
    with pytest.raises(ValueError, match="otel_condense_templates"):
        Settings(otel_condense_templates=["Rewrite: {question}"])
    rules = Settings(otel_condense_templates=["H:\n{chat_history}\nQ: {question}"]).trace_rules
    assert rules.condense_templates == (*CONDENSE_TEMPLATES, "H:\n{chat_history}\nQ: {question}")


def test_langchain_messages_as_openinference_serialises_them() -> None:
    human = {"type": "human", "data": {"content": "Which plan has SSO?", "type": "human", "id": None}}
    ai = {"type": "ai", "data": {"content": "Enterprise.", "type": "ai"}}
    assert message_of(human) == ("user", "Which plan has SSO?")
    assert history_of([human, ai]) == [("user", "Which plan has SSO?"), ("assistant", "Enterprise.")]


def _span(span_id: str, attributes: dict[str, object]) -> dict[str, object]:
    return {"span_id": span_id, "attributes": attributes}


def test_template_variables_up_the_chain_win_over_the_models_last_message() -> None:
    """LangChain's v0.1 quickstart prompt puts its instruction after the user's message: the last user
    message of the model call is the instruction, the chain's input holds the user's."""
    llm = _span(
        "b",
        {
            "llm.input_messages.0.message.role": "user",
            "llm.input_messages.0.message.content": "Which plan has SSO?",
            "llm.input_messages.1.message.role": "assistant",
            "llm.input_messages.1.message.content": "Enterprise.",
            "llm.input_messages.2.message.role": "user",
            "llm.input_messages.2.message.content": "And audit logs?",
            "llm.input_messages.3.message.role": "user",
            "llm.input_messages.3.message.content": "Given the above conversation, generate a search query",
        },
    )
    chain = _span(
        "a",
        {
            "input.value": '{"input": "And audit logs?", "chat_history": [["human", "Which plan has SSO?"], '
            '["ai", "Enterprise."]]}'
        },
    )
    got = conversation(llm, [chain])
    assert got is not None
    assert (got.latest, got.history, got.shape, got.span_id) == (
        "And audit logs?",
        [("user", "Which plan has SSO?"), ("assistant", "Enterprise.")],
        "variables",
        "a",
    )
    # without the chain, the messages are all there is, and the instruction is read as the latest
    alone = conversation(llm, [])
    assert alone is not None and alone.shape == "messages"
    assert alone.latest == "Given the above conversation, generate a search query"


def test_a_turn_holding_the_templates_separator_stays_in_the_history() -> None:
    mine = "History:\n{chat_history}\nQ: {question}"
    rendered = (
        "History:\nuser: What is RPO?\nassistant: Q: what is RPO? A: recovery point objective.\nQ: And RTO?"
    )
    assert parse_condense(rendered, (mine,)) == (
        [("user", "What is RPO?"), ("assistant", "Q: what is RPO? A: recovery point objective.")],
        "And RTO?",
    )


@pytest.mark.parametrize(
    "template", ["{chat_history}{question}", "{chat_history}\n{question}", "{question} {chat_history}"]
)
def test_a_template_with_nothing_between_its_placeholders_is_refused(template: str) -> None:
    """It would match every prompt: each answer call would become a rewrite."""
    with pytest.raises(ValueError, match="needs text between"):
        template_pattern(template)
