"""Season files: the players, the matches and their games, the season's frame (main and
death matches, nomination); read and checked by :func:`load_season` / :func:`parse_season`
before anything is stored, each problem naming the TOML line it comes from."""

from __future__ import annotations

import re
import secrets
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from referee.config.common import (
    _KEY,
    _EMAIL,
    ConfigError,
    parse_duration,
    parse_instant,
    check_timezone,
    _table,
    _str,
    EMAIL_MAX,
    _name,
    _bool,
    _unknown,
    read_toml,
)

# ---------------------------------------------------------------------------- season files


def game_options(game: Any) -> list[str]:
    """The option names a game's engine reads, as its ``game_type`` declares them."""
    game_type = getattr(game, "game_type", None)
    return sorted(game_type.options if game_type is not None else ())


def check_options(game: Any, value: Any, where: str) -> dict[str, Any]:
    """A match's (or a game table's) ``options``: a table of the names the game knows."""
    if not isinstance(value, dict):
        raise ConfigError(f"{where}: must be a table such as {{ name = value }}, got {value!r}")
    if "chips" in value:
        raise ConfigError(
            f"{where}: options may not set chips: chips come from the season's starting_chips "
            "(each player brings their season balance into a match)"
        )
    allowed = game_options(game)
    for name in value:
        if name not in allowed:
            known = f"allowed: {', '.join(allowed)}" if allowed else f"{game.title} has no options"
            raise ConfigError(f"{where}: unknown option {name!r} ({known})")
    return dict(value)


@dataclass
class PlayerSpec:
    key: str
    name: str
    # None: the player has no address and is never mailed; such a player may sit only at
    # silent seats (``GameType.silent_roles``: seats that never act, such as Betting
    # Minority's participants)
    email: str | None
    timezone: str


@dataclass
class MatchSpec:
    key: str
    game: str
    players: list[str]
    starts_at: datetime
    seed: int
    seed_given: bool  # False: drawn at load time; a reload keeps the stored seed
    steps: dict[str, float]  # step kind -> seconds
    reminders: list[float]  # seconds before a deadline
    options: dict[str, Any]
    kind: str | None = None  # "main": a main match of the season frame; None: a match on its own
    death_match: str | None = None  # the death-match game that follows this main match (else the rotation)
    live: bool = False  # players = "live": the season's live players, taken at the start
    abandon_after: int = 0  # missed steps in a row after which a player forfeits (0: off)


@dataclass
class FrameSpec:
    """The season frame (RULINGS, "Seasons"): what follows a main match."""

    seed: int  # the season's lots (a nomination's timeout, Betting Minority's participants)
    seed_given: bool
    death_matches: list[str]  # the rotation of death-match games, in the order they are created
    gap: float  # seconds from the end of a nomination to the start of its death match
    nomination: float  # seconds for the EC's nomination (and for a nominee's CoL answer)
    cols: bool  # may a nominated player use a CoL?
    silent: list[str]  # Betting Minority's silent participants, in the file's order
    # death-match games: {game: {"steps": {kind: seconds}, "reminders": [seconds], "options": {}}}
    timing: dict[str, dict[str, Any]]

    def settings(self) -> dict[str, Any]:
        """As stored in the season's settings (``Season.settings["frame"]``)."""
        return {
            "seed": self.seed,
            "death_matches": list(self.death_matches),
            "gap": self.gap,
            "nomination": self.nomination,
            "cols": self.cols,
            "silent": list(self.silent),
            "timing": self.timing,
        }


@dataclass
class SeasonSpec:
    key: str
    name: str
    starting_chips: int
    players: list[PlayerSpec]
    matches: list[MatchSpec]
    # garnets granted once per player into the season ledger (a season currency MatchJack reads)
    starting_garnets: int = 0
    frame: FrameSpec | None = None


def seat_role(game: Any, seat: int) -> str | None:
    """The role of seat ``seat`` (0-based) of ``game``: ``game_type.roles`` in seat order,
    the last role for every seat beyond them; None for a game that declares no roles."""
    game_type = getattr(game, "game_type", None)
    roles = game_type.roles if game_type is not None else ()
    return roles[min(seat, len(roles) - 1)] if roles else None


def silent_roles(game: Any) -> tuple[str, ...]:
    """The roles of ``game`` whose seats never act (``GameType.silent_roles``)."""
    game_type = getattr(game, "game_type", None)
    return tuple(game_type.silent_roles) if game_type is not None else ()


def _check_silent_seat(game: Any, seat: int, player: str, where: str) -> None:
    """A player without an address is never mailed, so they may sit only where nobody ever
    acts: at a seat whose role is one of the game's silent roles."""
    role = seat_role(game, seat)
    silent = silent_roles(game)
    if role is not None and role in silent:
        return
    why = f"({', '.join(silent)})" if silent else f"and {game.title} has none"
    seat_is = f"seat {seat + 1} is a {role!r} seat" if role is not None else f"seat {seat + 1} has no role"
    raise ConfigError(
        f"{where}: player {player!r} has no email address, so they can only sit at a silent seat {why}, "
        f"but {seat_is}: give them an email address or another seat"
    )


def load_season(path: Path) -> SeasonSpec:
    path = Path(path)
    data = read_toml(path)
    try:
        text = path.read_text(encoding="utf-8")
        lines, players = match_lines(text), table_lines(text, "players")
    except (OSError, UnicodeDecodeError):
        lines, players = [], []
    return parse_season(data, str(path), lines=lines, player_lines=players)


_MATCHES_HEADER = re.compile(r"^\s*\[\[\s*matches\s*\]\]\s*(?:#.*)?$")


def match_lines(text: str) -> list[int]:
    """The line number (1-based) of each ``[[matches]]`` header of a season file, in order,
    so that a problem found in the i-th match names its line. A header inside a multi-line
    string is not told apart (the numbers are for people, never for reading the file)."""
    return table_lines(text, "matches")


def table_lines(text: str, table: str) -> list[int]:
    """The line number (1-based) of each ``[[<table>]]`` header, as :func:`match_lines`."""
    header = re.compile(rf"^\s*\[\[\s*{re.escape(table)}\s*\]\]\s*(?:#.*)?$")
    return [n for n, line in enumerate(text.splitlines(), 1) if header.match(line)]


def check_start(game: Any, spec: MatchSpec, names: dict[str, str], chips: int, garnets: int, where: str) -> None:
    """The match starts as the season file has it: the game builds its first state from the
    match's seed, seats and options, as the match book will at the start time (with the
    season's starting balances for the balances it will read then). A problem the game finds
    (a DMO who is not a seat, too few players ...) is refused now, with its reason, instead
    of failing at the start."""
    from referee.games.base import SEASON_CHIPS, GameError

    game_type = getattr(game, "game_type", None)
    if game_type is None or not callable(getattr(game, "initial_state", None)):
        return  # a stand-in of a game (in tests) that builds no state: nothing to try
    options = dict(spec.options)
    if SEASON_CHIPS in game_type.currencies:
        options["chips"] = {p: chips for p in spec.players}
    if game_type.names:
        options["names"] = {p: names[p] for p in spec.players}
    if game_type.reads:
        options["holdings"] = {money: {p: garnets for p in spec.players} for money in game_type.reads}
    try:
        game.initial_state(spec.seed, list(spec.players), options)
    except GameError as exc:
        raise ConfigError(f"{where}: {exc}") from None
    except (ValueError, KeyError, TypeError) as exc:
        raise ConfigError(f"{where}: {game.title} cannot start with these options: {exc}") from None


SEASON_KEYS = frozenset({"id", "name", "starting_chips", "starting_garnets", "start", "reminders", "phase_length"})
# the season frame (RULINGS, "Seasons"): what follows each main match
FRAME_KEYS = frozenset({"seed", "death_matches", "death_match_gap", "nomination_length", "cols", "silent_participants"})
MATCH_KEYS = frozenset(
    {
        "id",
        "game",
        "players",
        "start",
        "seed",
        "steps",
        "phase_length",
        "reminders",
        "options",
        "kind",
        "death_match",
        "abandon_after",
    }
)
MAIN = "main"


def parse_seed(value: Any, where: str) -> tuple[int, bool]:
    """A seed from a season file: (the seed, whether the file gave it); one drawn if not."""
    if value is None:
        return secrets.randbits(62), False
    if not isinstance(value, int) or isinstance(value, bool) or not 0 <= value < 2**63:
        raise ConfigError(f"{where}: seed must be a whole number from 0 to 2^63-1, got {value!r}")
    return value, True


def death_game(game: Any) -> bool:
    """Can ``game`` be a death match? (``GameType.death_match``: its first two seats are the
    EC's and the DMO's; any further seats are silent participants.)"""
    return bool(getattr(getattr(game, "game_type", None), "death_match", False))


def _match_frame(m: dict[str, Any], game: Any, gname: str, where: str) -> tuple[str | None, str | None, bool]:
    """A match's place in the season frame: (kind, its death-match game, live seats)."""
    from referee.games import playable

    PLAYABLE = playable()
    kind = m.get("kind")
    if kind is not None and kind != MAIN:
        raise ConfigError(f'{where}: kind must be "main" (a main match of the season), got {kind!r}')
    live = m.get("players") == "live"
    if kind == MAIN and not getattr(game.game_type, "ranked", False):
        raise ConfigError(f"{where}: {game.title} cannot be a main match: its result ranks no EC (RULINGS)")
    if live and kind != MAIN:
        raise ConfigError(f'{where}: players = "live" is for main matches (kind = "main")')
    following = m.get("death_match")
    if following is not None:
        if kind != MAIN:
            raise ConfigError(f'{where}: death_match is for main matches (kind = "main")')
        if following not in PLAYABLE or not death_game(PLAYABLE[following]):
            deaths = ", ".join(sorted(n for n, g in PLAYABLE.items() if death_game(g)))
            raise ConfigError(f"{where}: death_match {following!r} is no death-match game (they are: {deaths})")
    return kind, following, live


def parse_frame(
    season: dict[str, Any],
    games: dict[str, Any],
    players: list[PlayerSpec],
    matches: list[MatchSpec],
    where: str,
) -> FrameSpec:
    """The season frame of ``[season]`` (RULINGS, "Seasons"), checked against the matches."""
    from referee.games import playable

    PLAYABLE = playable()
    swhere = f"{where} [season]"
    seed, seed_given = parse_seed(season.get("seed"), swhere)
    deaths = season.get("death_matches", [])
    if isinstance(deaths, str):
        deaths = [deaths]
    known = ", ".join(sorted(n for n, g in PLAYABLE.items() if death_game(g)))
    if not isinstance(deaths, list):
        raise ConfigError(f"{swhere}: death_matches must be a list of death-match games (they are: {known})")
    for name in deaths:
        if name not in PLAYABLE or not death_game(PLAYABLE[name]):
            raise ConfigError(f"{swhere}: death_matches: {name!r} is no death-match game (they are: {known})")
    gap_value = season.get("death_match_gap", 0)
    gap = 0.0 if gap_value in (0, "0", "0s") else parse_duration(gap_value, f"{swhere} death_match_gap").total_seconds()
    nomination = parse_duration(season.get("nomination_length", "24h"), f"{swhere} nomination_length")
    if nomination.total_seconds() <= 0:
        raise ConfigError(f"{swhere}: nomination_length must be longer than 0")
    cols = _bool(season, "cols", swhere, True)
    silent = season.get("silent_participants", [])
    if not isinstance(silent, list) or not all(isinstance(x, str) for x in silent):
        raise ConfigError(f"{swhere}: silent_participants must be a list of player ids")
    by_key = {p.key: p for p in players}
    for key in silent:
        if key not in by_key:
            raise ConfigError(f"{swhere}: silent participant {key!r} is not among the season's [[players]]")
        if by_key[key].email is not None:
            raise ConfigError(
                f"{swhere}: silent participant {key!r} has an email address: a silent participant is no "
                "season player (give them none)"
            )
    if len(set(silent)) != len(silent):
        raise ConfigError(f"{swhere}: a silent participant is listed twice")
    mains = [ms for ms in matches if ms.kind == MAIN]
    for ms in mains:
        if ms.death_match is None and not deaths:
            raise ConfigError(
                f"{where} match {ms.key!r}: a main match needs the death match that follows it: "
                "set death_match in the match, or death_matches in [season]"
            )
    following = {ms.death_match for ms in mains if ms.death_match} | (set(deaths) if mains else set())
    timing: dict[str, dict[str, Any]] = {}
    for name in sorted(following):
        game = PLAYABLE[name]
        gtable = games.get(name, {})
        gwhere = f"{where} [games.{name}]"
        steps, reminders = game_timing(game, name, gtable, season, None, where=where, mwhere=gwhere)
        timing[name] = {
            "steps": steps,
            "reminders": reminders,
            "options": dict(gtable.get("options", {})),
            "abandon_after": abandon_after(game, gtable, None, gwhere),
        }
        need = _silent_needed(game, players, silent, len(mains))
        if need > len(silent):
            raise ConfigError(
                f"{swhere}: {game.title} may follow a main match when only "
                f"{need and (game.max_players - 2 - need)} other live players are left, so it may need "
                f"{need} silent participants, but silent_participants lists {len(silent)}: list more "
                "players without an address there"
            )
    return FrameSpec(
        seed=seed,
        seed_given=seed_given,
        death_matches=list(deaths),
        gap=gap,
        nomination=nomination.total_seconds(),
        cols=cols,
        silent=list(silent),
        timing=timing,
    )


def _silent_needed(game: Any, players: list[PlayerSpec], silent: list[str], mains: int) -> int:
    """The silent participants a death match of ``game`` may need: its seats beyond the EC's
    and the DMO's, less the other live players left when the last main match's death match
    is created (every death match before it eliminates one player)."""
    seats = game.max_players - 2
    if seats <= 0:
        return 0
    season_players = sum(1 for p in players if p.email is not None)
    others = max(0, season_players - (mains - 1) - 2)
    return max(0, seats - others)


def abandon_after(game: Any, gtable: dict[str, Any], m: dict[str, Any] | None, where: str) -> int:
    """The abandonment rule of a match (RULINGS, "Seasons"): after this many missed steps in a
    row a player forfeits it; 0 is off. The match's ``abandon_after``, else the game table's,
    else the game's default (``GameType.abandon_after``: 5 in Indian Poker, Rewind Hold'em
    and MatchJack, off in Stationary Roulette and Betting Minority)."""
    default = getattr(getattr(game, "game_type", None), "abandon_after", 0)
    value = (m or {}).get("abandon_after", gtable.get("abandon_after", default))
    if not isinstance(value, int) or isinstance(value, bool) or not 0 <= value <= 1000:
        raise ConfigError(f"{where}: abandon_after must be a whole number of missed steps (0: off), got {value!r}")
    return value


def game_timing(
    game: Any,
    gname: str,
    gtable: dict[str, Any],
    season: dict[str, Any],
    m: dict[str, Any] | None,
    *,
    where: str,
    mwhere: str,
) -> tuple[dict[str, float], list[float]]:
    """A match's step lengths (seconds per step kind) and reminders (seconds before a
    deadline), later layers winning: the game's defaults, ``[season] phase_length``, the
    game's ``phase_length``, the game's ``steps``, the match's ``phase_length``, the match's
    ``steps`` (``m``: the match's table; None for a match the referee creates, a death match)."""
    swhere = f"{where} [season]"
    m = m or {}
    steps: dict[str, float] = {kind: hours * 3600 for kind, hours in game.step_kinds.items()}
    game_type = getattr(game, "game_type", None)
    derived = dict(game_type.derived_steps) if game_type is not None else {}
    explicit: set[str] = set()  # derived kinds a steps table sets itself
    layers = (
        (season.get("phase_length"), f"{swhere} phase_length", None, ""),
        (
            gtable.get("phase_length"),
            f"{where} [games.{gname}] phase_length",
            gtable.get("steps", {}),
            f"{where} [games.{gname}.steps]",
        ),
        (m.get("phase_length"), f"{mwhere} phase_length", m.get("steps", {}), f"{mwhere} steps"),
    )
    for phase, pwhere, table, twhere in layers:
        if phase is not None:
            length = parse_duration(phase, pwhere).total_seconds()
            steps = {kind: length for kind in steps}
            explicit.clear()  # a phase length is every plain kind's; derived kinds follow them
        if table is None:
            continue
        if not isinstance(table, dict):
            raise ConfigError(f"{twhere}: must be a table of step kind = duration")
        for kind, value in table.items():
            if kind not in steps:
                raise ConfigError(f"{twhere}: {gname} has no step kind {kind!r} (it has: {', '.join(sorted(steps))})")
            steps[kind] = parse_duration(value, f"{twhere} {kind}").total_seconds()
            explicit.add(kind)
    for kind, (base, fraction) in derived.items():
        if kind not in explicit:  # e.g. an extension lasts 2/3 of a turn, however long a turn is
            steps[kind] = round(steps[base] * fraction)

    reminders_raw = m.get("reminders", gtable.get("reminders", season.get("reminders", ["2h"])))
    if not isinstance(reminders_raw, list):
        raise ConfigError(f'{mwhere}: reminders must be a list of durations such as ["2h", "30m"]')
    reminders = sorted({parse_duration(r, f"{mwhere} reminders").total_seconds() for r in reminders_raw}, reverse=True)
    return steps, reminders


def parse_season(
    data: dict[str, Any], where: str, *, lines: list[int] | None = None, player_lines: list[int] | None = None
) -> SeasonSpec:
    """A season file's content (``data``, read from ``where``) checked and read; ``lines``: the
    line of each ``[[matches]]`` header (:func:`match_lines`), named in a match's problems;
    ``player_lines`` likewise of each ``[[players]]`` header."""
    from referee.games import GAMES, playable  # the engines are loaded by the commands that read seasons

    _unknown(data, {"season", "games", "players", "matches"}, where)
    PLAYABLE = playable()
    season = _table(data, "season", where)
    swhere = f"{where} [season]"
    _unknown(season, SEASON_KEYS | FRAME_KEYS, swhere)
    key = _str(season, "id", swhere)
    if not _KEY.match(key):
        raise ConfigError(f"{swhere}: id {key!r} may use only letters, digits, '.', '_' and '-'")
    chips = season.get("starting_chips", 100)
    if not isinstance(chips, int) or isinstance(chips, bool) or chips < 0:
        raise ConfigError(f"{swhere}: starting_chips must be a whole number >= 0, got {chips!r}")
    garnets = season.get("starting_garnets", 0)
    if not isinstance(garnets, int) or isinstance(garnets, bool) or garnets < 0:
        raise ConfigError(f"{swhere}: starting_garnets must be a whole number >= 0, got {garnets!r}")
    season_start = parse_instant(season["start"], f"{swhere} start") if "start" in season else None

    games = _table(data, "games", where)
    for gname, gtable in games.items():
        if gname not in PLAYABLE:
            raise ConfigError(f"{where} [games.{gname}]: unknown game (known: {', '.join(sorted(PLAYABLE))})")
        if not isinstance(gtable, dict):
            raise ConfigError(f"{where} [games.{gname}] must be a table")
        _unknown(gtable, {"steps", "reminders", "phase_length", "options", "abandon_after"}, f"{where} [games.{gname}]")
        if "options" in gtable:
            check_options(GAMES[gname], gtable["options"], f"{where} [games.{gname}] options")
        # checked here whether or not a match of the file names the game (a death match may)
        game_timing(GAMES[gname], gname, gtable, season, None, where=where, mwhere=f"{where} [games.{gname}]")
        abandon_after(GAMES[gname], gtable, None, f"{where} [games.{gname}]")

    raw_players = data.get("players", [])
    if not isinstance(raw_players, list) or not raw_players:
        raise ConfigError(f"{where}: at least one [[players]] entry is required")
    from referee.games import accounts  # here: reading the service file imports no game

    reserved = accounts()  # the house, the season, the games' pots and banks
    players: list[PlayerSpec] = []
    seen_keys: set[str] = set()
    seen_emails: set[str] = set()
    for i, p in enumerate(raw_players, 1):
        at = f":{player_lines[i - 1]}" if player_lines and i <= len(player_lines) else ""  # its header's line
        pwhere = f"{where}{at} [[players]] #{i}"
        if not isinstance(p, dict):
            raise ConfigError(f"{pwhere}: must be a table")
        _unknown(p, {"id", "name", "email", "timezone"}, pwhere)
        pkey = _str(p, "id", pwhere)
        if not _KEY.match(pkey):
            raise ConfigError(f"{pwhere}: id {pkey!r} must use letters, digits, '.', '_', '-' (at most 64)")
        if pkey in reserved:
            raise ConfigError(
                f"{pwhere}: id {pkey!r} is an account of the ledger ({reserved[pkey]}); "
                f"a player's id may be none of {', '.join(sorted(reserved))}"
            )
        pwhere = f"{where}{at} player {pkey!r}"
        if pkey in seen_keys:
            raise ConfigError(f"{pwhere}: the id is used twice")
        # no email: a player without an address, who may sit only at silent seats (checked
        # with the matches below); the addresses that are given are unique
        email = _str(p, "email", pwhere).lower() if "email" in p else None
        if email is not None:
            if not _EMAIL.match(email):
                raise ConfigError(f"{pwhere}: {email!r} is not an email address")
            if len(email) > EMAIL_MAX:
                raise ConfigError(f"{pwhere}: the email address is {len(email)} characters long; at most {EMAIL_MAX}")
            if email in seen_emails:
                raise ConfigError(f"{pwhere}: email {email!r} is used by another player")
            seen_emails.add(email)
        seen_keys.add(pkey)
        players.append(
            PlayerSpec(
                key=pkey,
                name=_name(p, "name", pwhere, pkey),
                email=email,
                timezone=check_timezone(p.get("timezone", "UTC"), f"{pwhere} timezone"),
            )
        )

    addressless = {ps.key for ps in players if ps.email is None}
    names = {ps.key: ps.name for ps in players}
    raw_matches = data.get("matches", [])
    if not isinstance(raw_matches, list):
        raise ConfigError(f"{where}: matches must be a list of [[matches]] tables")
    matches: list[MatchSpec] = []
    match_keys: set[str] = set()
    for i, m in enumerate(raw_matches, 1):
        at = f":{lines[i - 1]}" if lines and i <= len(lines) else ""  # the TOML line of its header
        mwhere = f"{where}{at} [[matches]] #{i}"
        if not isinstance(m, dict):
            raise ConfigError(f"{mwhere}: must be a table")
        _unknown(m, MATCH_KEYS, mwhere)
        mkey = _str(m, "id", mwhere)
        if not _KEY.match(mkey):
            raise ConfigError(f"{mwhere}: id {mkey!r} may use only letters, digits, '.', '_' and '-'")
        mwhere = f"{where}{at} match {mkey!r}"
        if mkey in match_keys:
            raise ConfigError(f"{mwhere}: the id is used twice")
        match_keys.add(mkey)
        gname = _str(m, "game", mwhere)
        if gname not in PLAYABLE:
            known = ", ".join(sorted(PLAYABLE))
            if gname in GAMES:
                raise ConfigError(f"{mwhere}: {gname} is the season's own step, opened by the referee (games: {known})")
            raise ConfigError(f"{mwhere}: unknown game {gname!r} (known: {known})")
        game = GAMES[gname]
        kind, death_game, live = _match_frame(m, game, gname, mwhere)
        mplayers = list(m.get("players") or []) if not live else []
        if not live and (not isinstance(m.get("players"), list) or not all(isinstance(x, str) for x in mplayers)):
            raise ConfigError(f'{mwhere}: players must be a list of player ids, or "live" (the live players)')
        for pk in mplayers:
            if pk not in seen_keys:
                raise ConfigError(f"{mwhere}: player {pk!r} is not among the season's [[players]]")
        if len(set(mplayers)) != len(mplayers):
            raise ConfigError(f"{mwhere}: a player is listed twice")
        for seat, pk in enumerate(mplayers):
            if pk in addressless:
                _check_silent_seat(game, seat, pk, mwhere)
        if not live and not game.min_players <= len(mplayers) <= game.max_players:
            need = (
                str(game.min_players)
                if game.min_players == game.max_players
                else f"{game.min_players} to {game.max_players}"
            )
            raise ConfigError(f"{mwhere}: {game.title} needs {need} players, got {len(mplayers)}")
        if "start" in m:
            start = parse_instant(m["start"], f"{mwhere} start")
        elif season_start is not None:
            start = season_start
        else:
            raise ConfigError(f"{mwhere}: missing 'start' (or set start in [season])")
        seed, seed_given = parse_seed(m.get("seed"), mwhere)

        gtable = games.get(gname, {})
        steps, reminders = game_timing(game, gname, gtable, season, m, where=where, mwhere=mwhere)
        abandon = abandon_after(game, gtable, m, mwhere)
        options = dict(gtable.get("options", {}))
        if "options" in m:
            options.update(check_options(game, m["options"], f"{mwhere} options"))
        matches.append(
            MatchSpec(
                key=mkey,
                game=gname,
                players=list(mplayers),
                starts_at=start,
                seed=seed,
                seed_given=seed_given,
                steps=steps,
                reminders=reminders,
                options=options,
                kind=kind,
                death_match=death_game,
                live=live,
                abandon_after=abandon,
            )
        )
        if not live:  # live seats are known at the start only: checked then
            check_start(game, matches[-1], names, chips, garnets, mwhere)

    frame = parse_frame(season, games, players, matches, where)
    return SeasonSpec(
        key=key,
        name=_name(season, "name", swhere, key),
        starting_chips=chips,
        players=players,
        matches=matches,
        starting_garnets=garnets,
        frame=frame,
    )
