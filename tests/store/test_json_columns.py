"""The JSON columns' serializer (orjson, with the stdlib's for what orjson refuses) gives
what the stdlib's json would read back the same, and states round-trip through the store."""

from __future__ import annotations

import json

import pytest

from referee.store.db import json_dumps


@pytest.mark.parametrize(
    "value",
    [
        {"players": ["a", "b"], "chips": {"a": 100}, "pot": 0, "ratio": 2.5, "none": None, "yes": True},
        {"text": 'é \u2028 \u0000 "quoted" \\ </script>', "emoji": "\U0001f600"},
        {1: "int keys become strings, as with json.dumps"},
        {"big": 2**70, "neg": -(2**63)},
        [1e300, -0.0, 0.1],
        "plain",
    ],
)
def test_json_dumps_reads_back_as_the_stdlib_would(value):
    assert json.loads(json_dumps(value)) == json.loads(json.dumps(value))


def test_a_state_round_trips_through_the_store(store):
    from datetime import datetime, timezone

    from referee.store.models import Match, Season

    state = {"history": [{"round": 0, "points": {"a": 1.5}}], "text": "Grüße \u2028", "big": 2**64}
    at = datetime(2026, 12, 1, tzinfo=timezone.utc)
    with store.unit_of_work() as session:
        season = Season(key="s", name="S", settings={}, created_at=at)
        session.add(season)
        session.flush()
        session.add(
            Match(season_id=season.id, key="m", game="g", seed=1, options={}, timing={}, starts_at=at, state=state)
        )
    with store.unit_of_work() as session:
        assert session.query(Match).one().state == state
