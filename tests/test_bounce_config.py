"""``[mail] organizer``, ``bounce_limit`` and ``bounce_window``: read, defaulted, mistakes named."""

from __future__ import annotations

from datetime import timedelta

import pytest

from referee.config import ConfigError, load_service_config

HEAD = 'secret = "0123456789abcdef0123"\n[mail]\naddress = "referee@example.org"\n'


def config(tmp_path, extra: str = ""):
    (tmp_path / "referee.toml").write_text(HEAD + extra)
    return load_service_config(tmp_path / "referee.toml")


def test_defaults_no_organizer_three_bounces_in_a_week(tmp_path, monkeypatch):
    monkeypatch.delenv("REFEREE_SECRET", raising=False)
    mail = config(tmp_path).mail
    assert (mail.organizer, mail.bounce_limit, mail.bounce_window) == (None, 3, timedelta(days=7))


def test_the_organizer_and_the_rule_are_read(tmp_path, monkeypatch):
    monkeypatch.delenv("REFEREE_SECRET", raising=False)
    mail = config(tmp_path, 'organizer = "Org@Example.ORG"\nbounce_limit = 5\nbounce_window = "36h"\n').mail
    assert (mail.organizer, mail.bounce_limit, mail.bounce_window) == ("org@example.org", 5, timedelta(hours=36))


@pytest.mark.parametrize(
    "extra, message",
    [
        ('organizer = "not an address"\n', "organizer 'not an address' is not an email address"),
        ('organizer = "referee@example.org"\n', "organizer must not be the referee's own address"),
        ('organizer = "Referee+x@example.org"\n', "organizer must not be the referee's own address"),
        ("bounce_limit = 0\n", "bounce_limit must be a whole number from 1 to 100"),
        ("bounce_limit = true\n", "bounce_limit must be a whole number from 1 to 100"),
        ('bounce_window = "soon"\n', "bounce_window: expected a duration"),
        ('bounce_windows = "7d"\n', "unknown key 'bounce_windows'"),
    ],
)
def test_mistakes_are_named(tmp_path, monkeypatch, extra, message):
    monkeypatch.delenv("REFEREE_SECRET", raising=False)
    with pytest.raises(ConfigError, match=r"\[mail\]") as caught:
        config(tmp_path, extra)
    assert message in str(caught.value)
