"""Thread id -> session id mapping: always a valid session, deterministic, and distinct for distinct threads."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from zaxy_agents.checkpoints.sessions import is_thread_session, thread_session
from zaxy_agents.errors import InvalidRequestError
from zaxy_agents.eventloom.validation import SESSION_ID_PATTERN

thread_ids = st.text(min_size=0, max_size=300)


@given(thread_ids)
def test_every_thread_id_maps_to_a_valid_session(thread_id: str) -> None:
    session = thread_session(thread_id)
    assert SESSION_ID_PATTERN.fullmatch(session) and set(session) != {"."}
    assert session == thread_session(thread_id)
    assert is_thread_session(session)


@given(thread_ids, thread_ids)
def test_distinct_threads_get_distinct_sessions(a: str, b: str) -> None:
    if a != b:
        assert thread_session(a) != thread_session(b)


@pytest.mark.parametrize(
    ("thread_id", "session"),
    [
        ("3f2a9c0d-1e4b-4c1a-9d7e-000000000001", "langgraph.3f2a9c0d-1e4b-4c1a-9d7e-000000000001"),
        ("user_42", "langgraph.user_42"),
        ("a.b", "langgraph.a-b.2e7336dc8eba87ef472d"),
        ("user/42: chat", "langgraph.user-42-chat.88f708e8bc78aef55e07"),
    ],
)
def test_documented_examples(thread_id: str, session: str) -> None:
    assert thread_session(thread_id) == session  # docs/langgraph.md shows these


def test_plain_and_hashed_forms_never_collide() -> None:
    plain = thread_session("a-b")
    hashed = thread_session("a.b")
    assert plain == "langgraph.a-b" and hashed.startswith("langgraph.a-b.") and plain != hashed


def test_the_empty_thread_id_has_its_own_session() -> None:
    # LangGraph's savers accept thread_id="" (InMemorySaver and SqliteSaver store it like any other).
    assert thread_session("") == "langgraph.t.e3b0c44298fc1c149afb"


def test_bad_thread_ids_are_refused() -> None:
    with pytest.raises(InvalidRequestError):
        thread_session(None)  # type: ignore[arg-type]
