"""TTL: expiry, refresh on read (coalesced into the log), omit_expired, the sweeper, restart."""

from __future__ import annotations

import time as real_time

import pytest

from zaxy_agents.errors import InvalidRequestError
from zaxy_agents.itemstore import service as item_service
from zaxy_agents.langgraph import ZaxyStore


class Clock:
    def __init__(self) -> None:
        self.now = real_time.time()

    def time(self) -> float:
        return self.now

    def advance(self, minutes: float) -> None:
        self.now += minutes * 60


@pytest.fixture
def clock(monkeypatch: pytest.MonkeyPatch) -> Clock:
    fake = Clock()
    monkeypatch.setattr(item_service, "time", fake)
    return fake


def events(store: ZaxyStore, kind: str) -> list:
    return [e for e in store.fabric.replay(store.session) if e.type == kind]


def test_supports_ttl_and_records_expiry(store: ZaxyStore, clock: Clock) -> None:
    assert store.supports_ttl
    store.put(("t",), "k", {"v": 1}, ttl=5)
    put = events(store, "store.item.put")[0]
    assert put.payload["ttl_minutes"] == 5.0 and put.payload["expires_at"].endswith("Z")


def test_omit_expired_hides_items_until_swept(eventloom, clock: Clock) -> None:
    with ZaxyStore.from_path(eventloom, ttl={"omit_expired": True}) as store:
        store.put(("t",), "short", {"v": 1}, ttl=1)
        store.put(("t",), "long", {"v": 2}, ttl=10)
        store.put(("t",), "forever", {"v": 3})
        clock.advance(2)
        assert store.get(("t",), "short") is None
        assert [i.key for i in store.search(("t",))] == ["long", "forever"]
        assert store.sweep_ttl() == 1
        deleted = events(store, "store.item.deleted")[0]  # erased by the sweep with the put (see test_erase_surfaces)
        assert deleted.erased and deleted.payload == {}
        assert events(store, "eventloom.erased")[0].payload["reason"] == "ttl_expired"
        clock.advance(20)
        assert store.list_namespaces() == [("t",)]
        store.delete(("t",), "forever")
        assert store.list_namespaces() == []  # only expired items left: the namespace is hidden


def test_without_omit_expired_items_stay_visible_until_the_sweep(store: ZaxyStore, clock: Clock) -> None:
    store.put(("t",), "k", {"v": 1}, ttl=1)
    clock.advance(2)
    assert store.get(("t",), "k", refresh_ttl=False) is not None  # as SqliteStore/PostgresStore before a sweep
    assert store.sweep_ttl() == 1
    assert store.get(("t",), "k") is None
    assert store.sweep_ttl() == 0


def test_reads_refresh_ttl_and_touches_are_coalesced(eventloom, clock: Clock) -> None:
    with ZaxyStore.from_path(eventloom, ttl={"omit_expired": True}) as store:
        store.put(("t",), "k", {"v": 1}, ttl=10)
        for _ in range(9):
            clock.advance(0.55)
            assert store.get(("t",), "k") is not None
        # Refreshed by every read in memory, persisted only when it moved by >= 10% of the TTL (1 minute).
        assert len(events(store, "store.item.touched")) == 4
        clock.advance(9.9)
        assert store.search(("t",))[0].key == "k"  # the last read refreshed it
        clock.advance(9.9)
        assert store.get(("t",), "k", refresh_ttl=False) is not None
        clock.advance(0.2)
        assert store.get(("t",), "k") is None


def test_refresh_on_read_false_and_default_ttl(eventloom, clock: Clock) -> None:
    config = {"default_ttl": 1, "refresh_on_read": False, "omit_expired": True}
    with ZaxyStore.from_path(eventloom, ttl=config) as store:
        store.put(("t",), "k", {"v": 1})
        clock.advance(0.9)
        assert store.get(("t",), "k") is not None
        clock.advance(0.2)
        assert store.get(("t",), "k") is None
        assert store.get(("t",), "k", refresh_ttl=True) is None
        assert events(store, "store.item.touched") == []


def test_expiry_survives_restart(eventloom, clock: Clock) -> None:
    with ZaxyStore.from_path(eventloom, ttl={"omit_expired": True}) as store:
        store.put(("t",), "k", {"v": 1}, ttl=10)
        clock.advance(5)
        store.get(("t",), "k")  # refresh to now+10, persisted (moved by 5 minutes)
    with ZaxyStore.from_path(eventloom, ttl={"omit_expired": True}) as store:
        clock.advance(9)
        assert store.get(("t",), "k", refresh_ttl=False) is not None
        clock.advance(2)
        assert store.get(("t",), "k") is None


def test_background_sweeper(eventloom) -> None:
    with ZaxyStore.from_path(eventloom, ttl={"sweep_interval_minutes": 0.001}) as store:
        store.put(("t",), "k", {"v": 1}, ttl=0.0001)
        deadline = real_time.monotonic() + 10
        while store.get(("t",), "k", refresh_ttl=False) is not None and real_time.monotonic() < deadline:
            real_time.sleep(0.02)
        assert store.get(("t",), "k") is None
        assert store.stop_ttl_sweeper(timeout=5)
        store.start_ttl_sweeper(0.5)  # restartable
        store.put(("t",), "k2", {"v": 1}, ttl=0.0001)
        assert store.stop_ttl_sweeper(timeout=5)
        real_time.sleep(0.05)
        assert store.get(("t",), "k2", refresh_ttl=False) is not None  # stopped: nothing sweeps it any more


def test_bad_ttl_values_are_refused(store: ZaxyStore) -> None:
    with pytest.raises(InvalidRequestError):
        store.put(("t",), "k", {"v": 1}, ttl=-1)
    with pytest.raises(InvalidRequestError):
        ZaxyStore(store.fabric, ttl={"default_tll": 5})
