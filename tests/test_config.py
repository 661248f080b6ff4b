"""Season file details: step-length precedence and refused options."""

from __future__ import annotations

import pytest

from referee.config import ConfigError, parse_season

BASE = {
    "season": {"id": "s", "phase_length": "10h"},
    "players": [{"id": "a", "email": "a@x.test"}, {"id": "b", "email": "b@x.test"}],
}


def match(**extra):
    return {"id": "m", "game": "stationary-roulette", "players": ["a", "b"], "start": "2026-12-01T00:00:00Z", **extra}


@pytest.mark.parametrize(
    "games, m, hours",
    [
        ({}, {}, 10),
        ({"phase_length": "12h"}, {}, 12),
        ({"phase_length": "12h", "steps": {"round": "13h"}}, {}, 13),
        ({"steps": {"round": "13h"}}, {"phase_length": "14h"}, 14),
        ({"steps": {"round": "13h"}}, {"phase_length": "14h", "steps": {"round": "15h"}}, 15),
    ],
    ids=["season", "game-phase", "game-steps", "match-phase-beats-game-steps", "match-steps"],
)
def test_later_layers_win_for_step_lengths(games, m, hours):
    spec = parse_season({**BASE, "games": {"stationary-roulette": games}, "matches": [match(**m)]}, "t")
    assert spec.matches[0].steps == {"round": hours * 3600}


def test_options_may_not_create_chips():
    with pytest.raises(ConfigError, match="options may not set chips"):
        parse_season({**BASE, "matches": [match(options={"chips": {"a": 500}})]}, "t")


def test_chips_are_refused_with_where_they_come_from():
    with pytest.raises(ConfigError) as exc:
        parse_season({**BASE, "matches": [match(options={"chips": {"a": 500}})]}, "t")
    assert "chips come from the season's starting_chips" in str(exc.value)


@pytest.mark.parametrize(
    "games, m, where",
    [
        ({}, {"options": {"colours": 4}}, "t match 'm' options"),
        ({"options": {"colours": 4}}, {}, "t [games.stationary-roulette] options"),
    ],
    ids=["match", "game-table"],
)
def test_unknown_options_are_refused_with_the_allowed_list(games, m, where):
    data = {**BASE, "games": {"stationary-roulette": games}, "matches": [match(**m)]}
    with pytest.raises(ConfigError) as exc:
        parse_season(data, "t")
    assert str(exc.value) == f"{where}: unknown option 'colours' (Stationary Roulette has no options)"


def test_options_must_be_a_table():
    with pytest.raises(ConfigError, match="options: must be a table"):
        parse_season({**BASE, "matches": [match(options=3)]}, "t")


def test_a_game_that_declares_options_lists_them(monkeypatch):
    from referee.games import GAMES

    import dataclasses

    game = GAMES["stationary-roulette"]
    monkeypatch.setattr(game, "game_type", dataclasses.replace(game.game_type, options={"speed": "", "bonus": ""}))
    with pytest.raises(ConfigError, match=r"unknown option 'colours' \(allowed: bonus, speed\)"):
        parse_season({**BASE, "matches": [match(options={"colours": 4})]}, "t")
    spec = parse_season({**BASE, "matches": [match(options={"speed": 2})]}, "t")
    assert spec.matches[0].options == {"speed": 2}


class _Extended:
    """A game whose extension lasts 2/3 of a turn (as Betting Minority's does)."""

    from referee.games.base import SEQUENTIAL, GameType

    name, title, min_players, max_players = "extended", "Extended", 2, 2
    game_type = GameType(
        dynamics=SEQUENTIAL,
        roles=("player", "player"),
        currencies=("stack",),
        step_kinds={"turn": 24.0, "extension": 16.0},
        derived_steps={"extension": ("turn", 2 / 3)},
    )
    step_kinds = game_type.step_kinds


@pytest.mark.parametrize(
    "season_phase, games, m, turn, extension",
    [
        (None, {}, {}, 24, 16),
        ("12h", {}, {}, 12, 8),
        (None, {"steps": {"turn": "9h"}}, {}, 9, 6),
        (None, {"steps": {"turn": "9h", "extension": "1h"}}, {}, 9, 1),
        (None, {"steps": {"extension": "1h"}}, {"phase_length": "30h"}, 30, 20),
        (None, {}, {"steps": {"extension": "5h"}}, 24, 5),
    ],
    ids=["defaults", "season-phase", "turn-set", "both-set", "later-phase-resets", "match-sets-extension"],
)
def test_a_derived_step_kind_follows_its_base_unless_set(monkeypatch, season_phase, games, m, turn, extension):
    from referee.games import GAMES

    monkeypatch.setitem(GAMES, "extended", _Extended())
    season = {"id": "s"} if season_phase is None else {"id": "s", "phase_length": season_phase}
    data = {**BASE, "season": season, "games": {"extended": games}, "matches": [match(game="extended", **m)]}
    assert parse_season(data, "t").matches[0].steps == {"turn": turn * 3600, "extension": extension * 3600}


def test_a_derived_step_kind_must_follow_a_kind_of_the_game():
    from referee.games.base import SEQUENTIAL, GameType

    with pytest.raises(ValueError, match="must follow a plain step kind"):
        GameType(
            SEQUENTIAL,
            ("player",),
            ("stack",),
            {"turn": 1.0, "extension": 1.0},
            derived_steps={"extension": ("bet", 0.5)},
        )


class _Quiet:
    """A game whose seats beyond the first two are silent (as Betting Minority's participants are)."""

    from referee.games.base import SEQUENTIAL, GameType

    name, title, min_players, max_players = "quiet", "Quiet", 2, 5
    game_type = GameType(
        dynamics=SEQUENTIAL,
        roles=("player", "player", "listener"),
        currencies=("stack",),
        step_kinds={"turn": 24.0},
        silent_roles=("listener",),
    )
    step_kinds = game_type.step_kinds


@pytest.mark.parametrize(
    "seats, refused",
    [
        (["a", "b", "c", "d"], None),  # seats 3 and 4: the last role, a listener's
        (["a", "c", "b"], "seat 2 is a 'player' seat"),
        (["c", "a"], "seat 1 is a 'player' seat"),
    ],
    ids=["silent-seats", "second-seat", "first-seat"],
)
def test_a_player_without_an_email_sits_only_at_silent_seats(monkeypatch, seats, refused):
    from referee.games import GAMES

    monkeypatch.setitem(GAMES, "quiet", _Quiet())
    players = [*BASE["players"], {"id": "c"}, {"id": "d"}]
    data = {**BASE, "players": players, "matches": [match(game="quiet", players=seats)]}
    if refused is None:
        assert [p.email for p in parse_season(data, "t").players] == ["a@x.test", "b@x.test", None, None]
        return
    with pytest.raises(ConfigError) as exc:
        parse_season(data, "t")
    assert str(exc.value) == (
        "t match 'm': player 'c' has no email address, so they can only sit at a silent seat (listener), "
        f"but {refused}: give them an email address or another seat"
    )


def test_a_player_without_an_email_is_refused_by_a_game_that_declares_no_roles(monkeypatch):
    from referee.games import GAMES

    class Bare:
        name, title, min_players, max_players, step_kinds = "bare", "Bare", 2, 2, {"turn": 1.0}

    monkeypatch.setitem(GAMES, "bare", Bare())
    data = {**BASE, "players": [*BASE["players"], {"id": "c"}], "matches": [match(game="bare", players=["a", "c"])]}
    with pytest.raises(
        ConfigError, match=r"so they can only sit at a silent seat and Bare has none, but seat 2 has no"
    ):
        parse_season(data, "t")


SEASON_FILE = """\
[season]
id = "s"
name = "S"

[[players]]
id = "alice"
name = "Alice"
email = "alice@x.test"

[[players]]
id = "bob"
name = "Bob"
email = "bob@x.test"

[[matches]]
id = "sr1"
game = "stationary-roulette"
players = ["alice", "bob"]
start = "2027-01-01T18:00:00Z"

[[matches]]  # the duel
id = "ip1"
game = "indian-poker"
players = ["alice", "bob"]
start = "2027-01-02T18:00:00Z"
options = { dmo = "lenna" }
"""


def test_an_option_the_game_refuses_is_refused_at_load_with_the_line_of_its_match(tmp_path):
    """A DMO who is not a seat of the match passed the check and failed at the start time
    (issue 21): the game now tries the match's first state as the file has it, and the error
    names the file, the line of the match's ``[[matches]]`` header and the game's reason."""
    from referee.config import load_season

    path = tmp_path / "season.toml"
    path.write_text(SEASON_FILE)
    with pytest.raises(ConfigError) as caught:
        load_season(path)
    assert str(caught.value) == (
        f"{path}:21 match 'ip1': The DMO must be one of the players (alice, bob); got 'lenna'."
    )
    path.write_text(SEASON_FILE.replace('dmo = "lenna"', 'dmo = "bob"'))
    assert [m.key for m in load_season(path).matches] == ["sr1", "ip1"]


def test_a_name_or_address_too_long_for_its_column_is_refused_at_its_toml_line(tmp_path):
    """issue 23: a 200+ character name broke `season load` on PostgreSQL with a raw
    StringDataRightTruncation; it is refused when the file is read, naming the line."""
    from referee.config import ConfigError, load_season

    base = (
        '[season]\nid = "s"\nname = "{season}"\n'
        '[[players]]\nid = "a"\nname = "{name}"\nemail = "{email}"\n'
        '[[players]]\nid = "b"\nname = "B"\nemail = "b@x.test"\n'
        '[[matches]]\nid = "m1"\ngame = "stationary-roulette"\nplayers = ["a", "b"]\n'
        'start = "2027-01-01T00:00:00Z"\n'
    )
    path = tmp_path / "season.toml"
    for values, found in (
        ({"season": "S", "name": "N" * 201, "email": "a@x.test"}, ":4 player 'a': 'name' is 201 characters long"),
        ({"season": "S" * 201, "name": "A", "email": "a@x.test"}, "[season]: 'name' is 201 characters long"),
        ({"season": "S", "name": "A", "email": "a" * 315 + "@x.test"}, ":4 player 'a': the email address is 322"),
    ):
        path.write_text(base.format(**values))
        with pytest.raises(ConfigError) as refused:
            load_season(path)
        assert found in str(refused.value), str(refused.value)
    path.write_text(base.format(season="S" * 200, name="N" * 200, email="a@x.test"))
    assert load_season(path).players[0].name == "N" * 200  # as long as the column holds


@pytest.mark.parametrize(
    "key, says",
    [
        ("LGT", "the LGT (the house)"),
        ("SEASON", "the season"),
        ("pot", "the pot"),
        ("pot-main", "the Main table's pot"),
    ],
)
def test_a_player_id_that_is_an_account_of_the_ledger_is_refused_at_its_line(tmp_path, key, says):
    """The ledger books a pot, a bank, the house by the same account names as the players:
    a player with such an id would share their balance. The names come from the games'
    ``GameType.accounts``, so a new game's accounts are refused as well."""
    from referee.config import load_season

    path = tmp_path / "season.toml"
    path.write_text(
        '[season]\nid = "s"\n'
        '[[players]]\nid = "a"\nemail = "a@x.test"\n'
        f'[[players]]\nid = "{key}"\nemail = "b@x.test"\n'
        '[[matches]]\nid = "m1"\ngame = "stationary-roulette"\nplayers = ["a", "b"]\n'
        'start = "2027-01-01T00:00:00Z"\n'
    )
    with pytest.raises(ConfigError) as refused:
        load_season(path)
    assert f"{path}:6 [[players]] #2: id {key!r} is an account of the ledger ({says}" in str(refused.value)
    assert "pot-lost" in str(refused.value) and "table" in str(refused.value)  # the whole list


def test_a_new_games_accounts_are_reserved_too(monkeypatch):
    from dataclasses import replace

    from referee.games import GAMES, accounts

    roulette = GAMES["stationary-roulette"]

    class Toy:
        name, title, min_players, max_players = "toy", "Toy", 2, 2
        game_type = replace(roulette.game_type, accounts={"kitty": "the kitty"})

    monkeypatch.setitem(GAMES, "toy", Toy())
    assert accounts()["kitty"] == "the kitty"
    data = {**BASE, "players": [*BASE["players"], {"id": "kitty", "email": "k@x.test"}], "matches": [match()]}
    with pytest.raises(ConfigError, match=r"id 'kitty' is an account of the ledger \(the kitty\)"):
        parse_season(data, "t")


def test_a_game_type_refuses_titles_that_name_missing_groups_and_the_season_s_accounts():
    from dataclasses import replace

    from referee.games import GAMES

    roulette = GAMES["stationary-roulette"].game_type
    with pytest.raises(ValueError, match=r"'Round \{0\}, turn \{1\}' names a group the pattern"):
        replace(roulette, step_titles=((r"round-(\d+)", "Round {0}, turn {1}"),))
    with pytest.raises(ValueError, match="cannot be LGT or SEASON"):
        replace(roulette, accounts={"SEASON": "the pot"})
    assert replace(roulette, step_titles=((r"turn-(\d+)-(\d+)", "Turn {1} of hand {0}"),)).step_titles
