"""Betting Minority's mail: a player's reply read into a move (MARKER, SEND ... TO ..., BET,
RAISE or CALL, and the Step line; participants named as ruling 4 says), and the form and the
commands written back (forms, receipts).
"""

from __future__ import annotations

from referee.games.base import Move, NoMoves, Parsed, ParseError, State, plural
from referee.games.betting_minority.play import form_title, nothing_to_send, step
from referee.games.betting_minority.rules import (
    BET_COMMANDS,
    MIN_BET,
    ROOMS,
    call_amount,
    format_placement,
    normal_name,
    opponent,
    short_ids,
    step_reference,
    total,
)
from referee.games.lines import MAX_LINE_CHARS as MAX_LINE_CHARS
from referee.games.lines import mail_lines

# ---------------------------------------------------------------------- the mail grammar

_FILLERS = frozenset({"on", "in", "and", "chip", "chips", "room", "rooms", "&"})
_ROOM_NAMES = {room.lower(): room for room in ROOMS}


def _room(word: str) -> str | None:
    return _ROOM_NAMES.get(word.lower().strip(".,;:!?"))


def _read_rooms(words: list[str], line: str) -> dict[str, int]:
    """``Uno 3 Dos 2`` (also ``Uno: 3, Dos: 2``, ``3 on Uno and 2 on Dos``) -> {room: n}."""
    tokens: list[str] = []
    for word in words:
        for part in word.replace(",", " ").replace(":", " ").replace("=", " ").replace(";", " ").split():
            part = part.strip(".!?")
            if part and part.lower() not in _FILLERS:
                tokens.append(part)
    rooms: dict[str, int] = {}
    pending_room: str | None = None
    pending_n: int | None = None
    for token in tokens:
        room = _room(token)
        if room is not None:
            if pending_room is not None:
                raise ParseError(f"Give a number of chips after {pending_room}", line)
            if room in rooms:
                raise ParseError(f"{room} is named twice; name each room once", line)
            if pending_n is not None:
                rooms[room], pending_n = pending_n, None
            else:
                pending_room = room
            continue
        if token.isdecimal() and len(token) <= 6:
            n = int(token)
            if pending_room is not None:
                rooms[pending_room], pending_room = n, None
            elif pending_n is None:
                pending_n = n
            else:
                raise ParseError("Two numbers in a row: write each room with its chips, as in Uno 3 Dos 2", line)
            continue
        if any(c.isdigit() for c in token) and not any(c.isalpha() for c in token):  # 1_0, 1.5, -3
            raise ParseError(
                f"{token!r} is not a whole number of chips: write the number in digits only, as in RAISE Uno 10",
                line,
            )
        raise ParseError(
            f"{token!r} is neither a room (Uno, Dos, Tres) nor a whole number of chips; write it as in BET Uno 3 Dos 2",
            line,
        )
    if pending_room is not None:
        raise ParseError(f"Give a number of chips after {pending_room}", line)
    if pending_n is not None:
        raise ParseError(f"Name the room for the {plural(pending_n, 'chip')}", line)
    if not rooms:
        raise ParseError("Name the rooms and the chips on each, as in BET Uno 3 Dos 2", line)
    return rooms


def read_mail(state: State, text: str) -> Parsed:
    """One command per mail, and the ``Step:`` line of the form when it is kept:

    * ``MARKER ME`` / ``MARKER OPPONENT`` (the DMO, before round 1);
    * ``SEND <participant> TO <room>`` (a name, season id or short id; Uno, Dos or Tres);
    * ``BET``, ``RAISE`` or ``CALL`` followed by one or two rooms with their chips:
      ``RAISE Uno 3 Dos 2``.

    Words are read without regard to case; bullets and ``*emphasis*`` around words are
    dropped (:func:`referee.games.lines.clean_line`: ``1_0`` is no number, never ``1 0``); quoted
    lines (``>``) and other lines are read as not part of the move (the receipt lists
    them). Two commands, a malformed one or an unknown participant is a ParseError; no
    command at all is :class:`NoMoves`."""
    ignored: list[str] = []
    found: tuple[Move, str] | None = None
    reference: tuple[str, str] | None = None
    for written, line, words in mail_lines(text, ignored):
        head = words[0].lower().rstrip(".,;:!?")
        if head == "step" and (words[0].endswith(":") or (len(words) > 1 and words[1].startswith(":"))):
            ref = step_reference(line.split(":", 1)[1])
            if reference is not None and reference[0] != ref:
                raise ParseError(f"Your mail names two steps, {reference[1]!r} and {line!r}; keep only one", line)
            reference = (ref, line)
            continue
        move: Move | None = None
        if head == "marker":
            rest = [w.lower().strip(".,;:!?") for w in words[1:]]
            if rest in (["me"], ["myself"], ["keep"]):
                move = {"action": "marker", "to": "me"}
            elif rest in (["opponent"], ["ec"], ["give"], ["them"]):
                move = {"action": "marker", "to": "opponent"}
            else:
                raise ParseError("Write MARKER ME (you keep the starting marker) or MARKER OPPONENT", line)
        elif head == "send":
            lowered = [w.lower() for w in words]
            if "to" not in lowered[1:]:
                raise ParseError("Write SEND <participant> TO <room>, as in SEND P3 TO Uno", line)
            at = len(lowered) - 1 - lowered[::-1].index("to")
            room_words = [w for w in words[at + 1 :] if w.lower() not in ("room", "the")]
            room = _room(room_words[0]) if len(room_words) == 1 else None
            if room is None:
                raise ParseError("Name one room after TO: Uno, Dos or Tres", line)
            who = find_participant(state, " ".join(words[1:at]), line)
            move = {"action": "send", "participant": who, "room": room}
        elif head in BET_COMMANDS:
            move = {"action": head, "rooms": _read_rooms(words[1:], line)}
        if move is None:
            ignored.append(written)
            continue
        if found is not None:
            raise ParseError(f"Your mail has two commands, {found[1]!r} and {line!r}; send one command per mail", line)
        found = (move, line)
    if found is None:
        raise NoMoves("I found no command (MARKER, SEND ... TO ..., BET, RAISE or CALL) in your mail", None)
    move = found[0]
    if reference is not None:
        move["step"] = reference[0]
    return Parsed([move], ignored)


def find_participant(state: State, written: str, line: str) -> str:
    """The participant a mail names (ruling 4): by short id (``P3``), season id or name,
    without regard to case or accents; a name may also be given by its first words
    (``Ann`` for ``Ann Lee``) when no name is exactly that; a short id wins over a season
    id, and that over a name. No match, or more than one,
    is a :class:`ParseError` that lists the candidates."""
    wanted = normal_name(written)
    if not wanted:
        raise ParseError("Name the participant to send (a name or a short id such as P3)", line)
    names, short = state["names"], short_ids(state["participants"])
    tiers = (  # the first kind of match that finds anyone decides: a short id, a season id, a name, its first words
        lambda p: normal_name(short[p]) == wanted,
        lambda p: normal_name(p) == wanted,
        lambda p: normal_name(names.get(p, p)) == wanted,
        lambda p: (normal_name(names.get(p, p)) + " ").startswith(wanted + " "),
    )
    exact: list[str] = []
    for matches in tiers:
        exact = [p for p in state["participants"] if matches(p)]
        if exact:
            break
    if len(exact) == 1:
        return exact[0]
    if not exact:
        listed = ", ".join(f"{short[p]} {names.get(p, p)}" for p in state["participants"])
        raise ParseError(f"No participant is called {written!r}. The participants are: {listed}", line)
    listed = ", ".join(f"{short[p]} {names.get(p, p)}" for p in exact)
    raise ParseError(
        f"{written!r} could be any of {len(exact)} participants: {listed}. Write the short id (such as "
        f"{short[exact[0]]}) or the whole name",
        line,
    )


# ---------------------------------------------------------------------- the game's mail


def parse(state: State, player: str, text: str) -> Parsed:
    """The mail's command (:func:`read_mail`); a participant's mail is never read: a
    participant has nothing to send (:func:`nothing_to_send`), whatever they wrote."""
    if player in state["participants"]:
        raise ParseError(nothing_to_send(state))
    return read_mail(state, text)


def form(state: State, player: str) -> str:
    """The command for the open step, filled in with a legal choice, and its Step line."""
    move = default_move(state, player)
    if move is None:
        return ""
    return f"{command_text(state, move)}\nStep: {form_title(state)}\n"


def default_move(state: State, player: str) -> Move | None:
    """The form's command: a legal choice for ``player`` in the open step (None: nothing to send)."""
    now = step(state)
    if now is None or player not in now.players:
        return None
    phase = state["phase"]
    if phase == "marker":
        return {"action": "marker", "to": "me"}
    if phase == "send":
        if state["send"]["sent"][player] is not None:
            return None
        first = next(p for p in state["participants"] if state["positions"][p] is None)
        return {"action": "send", "participant": first, "room": ROOMS[0]}
    b = state["betting"]
    opp = opponent(state, player)
    theirs = total(b["placements"][opp])
    if theirs == 0:
        return {"action": "bet", "rooms": {ROOMS[0]: MIN_BET}}
    amount = call_amount(state["chips"][player], state["chips"][opp], theirs)
    return {"action": "call", "rooms": {ROOMS[0]: amount}}


def command_text(state: State, move: Move) -> str:
    """A move written in the mail grammar (the form, and the receipts)."""
    action = move["action"]
    if action == "marker":
        return f"MARKER {'ME' if move['to'] == 'me' else 'OPPONENT'}"
    if action == "send":
        short = short_ids(state["participants"])[move["participant"]]
        return f"SEND {short} TO {move['room']}"
    return f"{action.upper()} {format_placement(move['rooms'])}"
