"""MatchJack: six players in two sets, each set at its own table with two automated
players, over 15 hands of a blackjack-flavoured poker.

Rule text: ``seeds/matchjack.txt``; the authoritative reading is the "MatchJack" section
of ``RULINGS.md``; decisions of our own are the numbered "Rulings" of
``docs/games/matchjack.md`` (each names its tests in ``tests/games/test_matchjack*.py``).
The cards, hand ranks and pots are :mod:`referee.games.matchjack.hands`, the bots' rules
:mod:`referee.games.matchjack.bots`, the betting rounds :mod:`referee.games.matchjack.table`,
the mail grammar :mod:`referee.games.matchjack.grammar`, the rule text's numbers and the
rules that read the state (the open steps, leaving the match, the end and its ranking)
:mod:`referee.games.matchjack.rules`, a hand as it is played at the tables
:mod:`referee.games.matchjack.play`, the views :mod:`referee.games.matchjack.views` and the
sample moves and hidden variants :mod:`referee.games.matchjack.samples`. This module is the
match as it runs (the stay step's close, the end of both tables, a forfeit, the moves and
the deadlines) and the game object ``GAME`` that assembles them.

A game of **concurrent steps** (``GameType.concurrent``): ``steps(state)`` lists every open
step, each with its own deadline, and ``apply_timeout(state, key)`` closes the one named.
A hand ``h``:

1. ``h<h>-stay`` (kind ``stay``, simultaneous): every player still in the match, both
   tables at once, chooses ``STAY``, ``FOLD`` or ``FOLD STAYSET`` (revisable, secret until
   the deadline closes the step; a missing choice is a FOLD).
2. Then each table on its own: betting round 1 (``h<h>-<table>-bet1-<turn>``, kind
   ``bet``), the top pile card turned up, one action each (``h<h>-<table>-act-<seat>``, kind
   ``action``; the bots act inside the engine when their turn comes), betting round 2
   (``...-bet2-<turn>``), the showdown. ``<table>`` is ``main`` or ``lost``.
3. A table that has finished while the other plays has the waiting step
   ``h<h>-<table>-done`` (kind ``wait``, no deadline). When both have finished: after hands
   5 and 10 the ``break-<h>`` step (kind ``break``, nobody acts, its deadline ends it),
   then the next hand; after hand 15, or when at most one player is left with chips, the
   end: the match is over at once, its result names the winner and the EC and ranks the six
   (``Result.ranking``). The EC's nomination of the DMO is the season's step, not the
   match's.

Chips are the match's own (``MATCH_CHIPS``), 20 each: accounts are the players,
``pot-main`` and ``pot-lost`` (each table's pot), ``bots`` (where the bots' antes come
from), ``discard`` (split remainders, bots' shares, pots nobody can win), ``bank`` (the
6-chip reward of a correct guess). Garnets are the season's (``"garnets"``, read through
``with_holdings``): ``FOLD STAYSET`` pays 5 to ``LGT``, a correct guess is paid 3 from
``SEASON``.

State (plain JSON data)::

    players      the six player keys, in seat order of the season file
    seed         the match seed
    names        {player: display name} (options["names"], else the keys)
    hand         the open hand 1..15 (once over: the last hand played)
    phase        "stay", "play", "break" or "over"
    chips        {player: chips behind} (not in a pot)
    garnets      {player: garnets as last known} (options["holdings"], with_holdings)
    sets         {player: "Main" | "Lost" | None (eliminated)}: the set of the open hand
    seats        {player: seat number 1..6 at their set's table | None}
    rules        {bot: rule id}: secret until the match is over
    stay         {player: None | "stay" | "fold" | "stayset"}: the open stay step's choices
    tables       {"Main": table, "Lost": table}: the open (or last) hand at each table
    winners      {"Main": seat | None, "Lost": seat | None}: the seat that most recently
                 won at that table (human winners only)
    eliminated   [{"player", "hand", "table", "batch", "told"}] in the order they reached 0
                 (one batch per moment; told: the key of the step whose mail told them); a
                 forfeiter's entry has "forfeit": True and told "forfeit" (ruling 21)
    guesses      {player: [{"hand", "bot", "rule", "right", "paid"}]}: secret to the guesser
    rewards      [{"player", "hand"}]: the correct guesses paid (public: no bot, no rule)
    chips_after  [{player: chips}] after hand 0 (the start), 1, 2 ...
    history      [public record of every finished hand: per table the seats, who stayed,
                 folded or paid to keep their set, the hands shown, the chips won and
                 discarded, and the hand as played (stay results, starting seat, betting
                 rounds, actions without their cards, later folds, the showdown); every
                 player's chips after the hand; the set moves; who left the match at 0
                 chips (eliminated) and who forfeited it in the hand (forfeited)]
    final        None, or once the match is over {"winner", "ec", "how", "hands"}
    transfers    chip and garnet movements, see referee.games.base.transfer
    result       None while the match runs, else the fields of Result

A table (``tables[name]``)::

    name, key       "Main", "main"
    dealt           [player ...] the humans dealt in this hand, in seat order
    seats           {player: seat}
    bots            the table's two bots, in their action order
    hands           {player or bot: [[card, face up?], ...]} in position order
    pile, up        the undealt cards (top first) and the face-up pile card (None before
                    the action phase, or when the pile had nothing)
    spent           face-up pile cards covered by a newer one (a refill shuffles them)
    refills         how many refills so far; refilled: the pile is a refill (its cards
                    were all seen face up at the table)
    contrib         {player or bot: chips put in this hand (antes and bets)}
    stay            None until the stay step closes, then {player: {"choice": "stayed" |
                    "folded" | "stayset", "timeout": bool}} (public)
    refused         [player ...] whose FOLD STAYSET counted as FOLD (told to them only)
    stayed, hall    the stayers and the stay folders, in seat order
    moving          the folders who move to the other set after the hand
    folded          who folded later (betting, or a missed action turn)
    all_in          who has no chips behind in this hand
    starter         the seat that starts (ruling 7), order: the stayers from it round the table
    status          "stay", "bet", "action" or "done"
    rounds          the betting rounds so far (referee.games.matchjack.table)
    turned          the card turned up when the action phase began
    action_order    the humans still in, then the bots; next: who of it acts now (index)
    actions         [action entry ...] of the action phase
    showdown        None, or the showdown: hands, ranks, pots, winners, discarded
    revealed        who showed their cards at the showdown
"""

from __future__ import annotations

from typing import Any

from referee.games.base import (
    HOUSE,
    MATCH_CHIPS,
    MIXED,
    VICTORY_POINTS,
    Applied,
    Engine,
    GameError,
    GameType,
    Move,
    Parsed,
    State,
    Step,
    check_forfeit,
    clone,
    rejected,
    transfer,
)
from referee.games.matchjack import bots as botlib
from referee.games.matchjack import grammar, hands, play, samples, table, views
from referee.games.matchjack.play import (
    advance,
    begin_play,
    booked_bet,
    do_action,
    end_hand,
    leave_table,
    start_hand,
)
from referee.games.matchjack.rules import (
    ACTIONS,
    ALL_BOTS,
    BANK,
    BOT_ANTE,
    BOTS_ACCOUNT,
    BREAKS,
    COLS,
    DISCARD,
    GARNETS,
    GUESS_CHIPS,
    GUESS_GARNETS,
    HANDS,
    KEYS,
    NAME,
    OTHER,
    PILE,
    PLAYERS,
    POTS,
    RULE_IDS,
    SEASON,
    SETS,
    STARTING_CHIPS,
    STAYSET_FEE,
    STEP_HOURS,
    alive_players,
    all_steps,
    ante_for,
    dealt_at,
    eliminate,
    end_match,
    guess_hand,
    guess_problem,
    how_gone,
    is_out,
    mark_told,
    player_step,
    step_table,
    what_now,
)


# the helpers' names before the game was split into modules (tests reach some as engine._...)
from referee.games.matchjack.rules import (
    alive_players as _alive,
    guess_problem as _can_guess,
    dealt_at as _dealt_at,
    eliminate as _eliminate,
    end_match as _end_match,
    forfeiters as _forfeited,
    how_gone as _gone,
    guess_hand as _guess_hand,
    in_hand as _in_hand,
    is_out as _is_out,
    left_record as _left,
    mark_told as _mark_told,
    _order_key,
    _pick,
    player_step as _player_step,
    rank as _rank,
    ranking as _ranking,
    step_table as _step_table,
    all_steps as _steps,
    _table_step,
)
from referee.games.matchjack.play import (
    advance as _advance,
    begin_play as _begin_play,
    booked_bet as _booked_bet,
    _bot_hand,
    do_action as _do_action,
    _draw_top,
    end_hand as _end_hand,
    _index,
    leave_table as _leave_table,
    _new_table,
    public_action as _public_action,
    _showdown,
    _start_action,
    start_hand as _start_hand,
    _start_round,
)
from referee.games.matchjack.samples import (
    _vary_cards,
    _vary_rules,
)

__all__ = [
    "ACTIONS",
    "ALL_BOTS",
    "BANK",
    "BOT_ANTE",
    "BOTS_ACCOUNT",
    "BREAKS",
    "COLS",
    "DISCARD",
    "GAME",
    "GARNETS",
    "GUESS_CHIPS",
    "GUESS_GARNETS",
    "HANDS",
    "KEYS",
    "OTHER",
    "PILE",
    "PLAYERS",
    "POTS",
    "RULE_IDS",
    "SEASON",
    "SETS",
    "STARTING_CHIPS",
    "STAYSET_FEE",
    "STEP_HOURS",
    "VICTORY_POINTS",
    "MatchJack",
    "ante_for",
    "botlib",
    "grammar",
    "hands",
    "table",
    "_advance",
    "_alive",
    "_begin_play",
    "_booked_bet",
    "_bot_hand",
    "_can_guess",
    "_dealt_at",
    "_do_action",
    "_draw_top",
    "_eliminate",
    "_end_hand",
    "_end_match",
    "_forfeited",
    "_gone",
    "_guess_hand",
    "_in_hand",
    "_index",
    "_is_out",
    "_leave_table",
    "_left",
    "_mark_told",
    "_new_table",
    "_order_key",
    "_pick",
    "_player_step",
    "_public_action",
    "_rank",
    "_ranking",
    "_showdown",
    "_start_action",
    "_start_hand",
    "_start_round",
    "_step_table",
    "_steps",
    "_table_step",
    "_vary_cards",
    "_vary_rules",
]


# ---------------------------------------------------------------------- the match


def _close_stay(s: State) -> None:
    """The stay step's deadline (RULINGS): a missing choice is a FOLD; FOLD STAYSET pays 5
    garnets to the LGT from the garnets held now, else it counts as FOLD (ruling 5);
    stayers pay the second ante (all they have when short); a folder at 0 chips leaves
    the match (ruling 12). Then each table plays on."""
    h = s["hand"]
    key = f"h{h}-stay"
    ante = ante_for(h)
    broke: list[str] = []
    for name in SETS:
        t = s["tables"][name]
        record: dict[str, Any] = {}
        for p in t["dealt"]:
            if is_out(s, p):  # forfeited while the step was open (ruling 21): in the hall
                t["hall"].append(p)
                record[p] = {"choice": "forfeited", "timeout": False}
                continue
            choice = s["stay"].get(p)
            timeout = choice is None
            if choice == "stay":
                put = min(ante, s["chips"][p])
                s["chips"][p] -= put
                t["contrib"][p] += put
                transfer(s, p, POTS[name], put, f"second ante, hand {h}", key, currency=MATCH_CHIPS)
                t["stayed"].append(p)
                record[p] = {"choice": "stayed", "timeout": False}
                continue
            t["hall"].append(p)
            if choice == "stayset" and s["garnets"][p] >= STAYSET_FEE:
                s["garnets"][p] -= STAYSET_FEE
                transfer(s, p, HOUSE, STAYSET_FEE, f"FOLD STAYSET, hand {h}", key, currency=GARNETS)
                record[p] = {"choice": "stayset", "timeout": False}
            else:
                if choice == "stayset":
                    t["refused"].append(p)
                t["moving"].append(p)
                record[p] = {"choice": "folded", "timeout": timeout}
            if s["chips"][p] == 0:
                broke.append(p)
        t["stay"] = record
    s["stay"] = {}
    s["phase"] = "play"
    eliminate(s, broke)
    for name in SETS:
        begin_play(s, name)
    for name in SETS:
        advance(s, name)
    _after_tables(s)


def _after_tables(s: State) -> None:
    if s["phase"] == "play" and all(s["tables"][name]["status"] == "done" for name in SETS):
        end_hand(s)


def _forfeit(s: State, p: str) -> None:
    """``p`` forfeits the match (ruling 21), on the engine's private copy: they leave it at
    once as one who reached 0 now (a batch of their own in ``eliminated``, marked
    ``forfeit``), keeping their chips as they stand; what they put in a pot stays there.
    In the stay step their choice is dropped, and at its close they sit in the hall (stay
    choice "forfeited"); at a table where they are still in the hand they leave it as after
    a FOLD (their turn passes; a betting round with one human left is over; an action turn
    still to come is skipped), and the table plays on. In a break, with at most one player
    left in the match, the match ends at once; in a hand, as after any hand, when it ends;
    when nobody is left at all, at once (ruling 21). They are told by no step mail (the
    forfeit's notice tells them), only by the result."""
    eliminate(s, [p])
    s["eliminated"][-1].update(forfeit=True, told="forfeit")
    phase = s["phase"]
    if phase == "stay":
        s["stay"].pop(p, None)
    elif phase == "play":
        name = dealt_at(s, p)
        if name is not None:
            leave_table(s, name, p)
            advance(s, name)
            _after_tables(s)
    elif phase == "break" and len(alive_players(s)) <= 1:
        end_match(s)
    if s["result"] is None and not alive_players(s):  # nobody is left to play: the match ends now
        end_match(s)
    mark_told(s)


# ---------------------------------------------------------------------- the game


class MatchJack(Engine):
    """MatchJack's game object: the match as this module plays it, with its views and samples
    (the wiring every game shares is :class:`referee.games.base.Engine`). MatchJack plays with
    its own chips: the season balances are checked, not used; its result keeps its own
    ranking (``rank``)."""

    name = NAME
    title = "MatchJack"
    wraps_own_mail = True  # its templates wrap their prose and explain their abbreviations
    archive_rounds_per_page = 2  # a hand of two tables is long
    min_players = PLAYERS
    max_players = PLAYERS
    game_type = GameType(
        dynamics=MIXED,
        roles=("player",) * PLAYERS,
        currencies=(MATCH_CHIPS, GARNETS),
        step_kinds=dict(STEP_HOURS),
        options={},
        chance=True,
        names=True,
        concurrent=True,
        reads=(GARNETS,),
        abandon_after=5,  # RULINGS, "Seasons": a timeout costs little, so 5 missed steps forfeit
        ranked=True,  # result(state).ranking: the winner first, the EC last (rank)
        accounts={
            POTS["Main"]: "the Main table's pot",
            POTS["Lost"]: "the Lost table's pot",
            BOTS_ACCOUNT: "the automated players",
            DISCARD: "discarded",
            BANK: "the bank",
        },
        step_titles=(  # rules.py's Step titles; a hand's own transfers name the hand
            (r"h(\d+)-stay", "Hand {0}, stay or fold"),
            (r"h(\d+)-guess", "Hand {0}, guesses"),
            (r"h(\d+)-main-bet(\d+)-(\d+)", "Hand {0}, Main table, betting round {1}, turn {2}"),
            (r"h(\d+)-lost-bet(\d+)-(\d+)", "Hand {0}, Lost table, betting round {1}, turn {2}"),
            (r"h(\d+)-main-act-(\d+)", "Hand {0}, Main table, action of seat {1}"),
            (r"h(\d+)-lost-act-(\d+)", "Hand {0}, Lost table, action of seat {1}"),
            (r"h(\d+)-main-showdown", "Hand {0}, Main table, showdown"),
            (r"h(\d+)-lost-showdown", "Hand {0}, Lost table, showdown"),
            (r"h(\d+)-main-done", "Hand {0}, Main table"),
            (r"h(\d+)-lost-done", "Hand {0}, Lost table"),
            (r"h(\d+)", "Hand {0}"),
            (r"break-(\d+)", "Break after hand {0}"),
        ),
    )
    ranked_by = None  # the result holds its ranking (rank)

    # ----------------------------------------------------------------- steps

    def steps(self, state: State) -> tuple[Step, ...]:
        return all_steps(state)

    def step(self, state: State) -> Step | None:
        found = all_steps(state)
        return found[0] if found else None

    def awaiting(self, state: State) -> tuple[str, ...]:
        """Who still owes a submission in an open step: in the stay step those with no
        choice yet; at a table the player to act."""
        if state["result"] is not None:
            return ()
        if state["phase"] == "stay":
            return tuple(p for p in alive_players(state) if state["stay"].get(p) is None)
        owing = {p for step in all_steps(state) if not step.waiting for p in step.players}
        return tuple(p for p in state["players"] if p in owing)

    def audience(self, state: State, step: Step | None = None) -> tuple[str, ...]:
        """Who is mailed when ``step`` opens (ruling 13; ``None``: the state's first open
        step, or once the match is over, the final result, to all six):

        * the stay step and a break: every player still in the match;
        * a table's step (betting, action, or its waiting step): the humans dealt at that
          table in this hand (stayers and folders), still in the match;
        * and in each, a player who has just left the match (0 chips) when it is the first
          step mail after it (it tells them); nothing after that but the result."""
        if step is None:
            if state["result"] is not None:
                return tuple(state["players"])
            step = self.step(state)
            if step is None:
                return ()
        alive = set(alive_players(state))
        told = {e["player"] for e in state["eliminated"] if e["told"] == step.key}
        if step.kind in ("stay", "break"):
            base = alive
        else:
            name = step_table(step)
            base = set(state["tables"][name]["dealt"]) & alive if name else set()
        members = base | told
        return tuple(p for p in state["players"] if p in members)

    # ----------------------------------------------------------------- mail

    def parse(self, state: State, player: str, text: str) -> Parsed:
        """See :mod:`referee.games.matchjack.grammar`. FOLD is a stay choice while the stay
        step is open, else a betting fold."""
        fold_means = "stay" if state["result"] is None and state["phase"] == "stay" else "bet"
        return grammar.read_mail(text, fold_means=fold_means, bots=ALL_BOTS, rules=RULE_IDS)

    def form(self, state: State, player: str) -> str:
        """The command for the player's open step, filled in with a legal choice, and its
        Step line; "" when they have nothing to send now (a GUESS needs no form)."""
        move = self._default_move(state, player)
        step = player_step(state, player)
        if move is None or step is None:
            return ""
        return f"{grammar.command_text(move)}\nStep: {step.title}\n"

    def quick_answers(self, state: State, player: str) -> list[tuple[str, str]]:
        """The step mail's one-tap answers (referee.games.quick): STAY / FOLD in the stay step,
        the form's command, FOLD and RAISE 2 in a betting turn, the form's command, HIT and
        DRAW 1 in an action turn (those the rules refuse now are left out by the caller)."""
        from referee.games.quick import with_step

        form = self.form(state, player)
        if not form:
            return []
        first = form.split("\n", 1)[0].strip()
        step = player_step(state, player)
        kind = step.kind if step is not None else ""
        if kind == "stay":
            commands = ["STAY", "FOLD", first]
        elif kind == "bet":
            commands = [first, "CALL", "FOLD", "RAISE 2"]
        else:
            commands = [first, "HIT", "DRAW 1"]
        return [(c, with_step(form, c)) for c in dict.fromkeys(commands)]

    def _default_move(self, state: State, player: str) -> Move | None:
        step = player_step(state, player) if player in state["players"] else None
        if step is None:
            return None
        if step.kind == "stay":
            mine = state["stay"].get(player)
            if mine == "stayset" and state["garnets"][player] < STAYSET_FEE:
                mine = None
            return {"stay": mine or "stay"}
        if step.kind == "bet":
            t = state["tables"][dealt_at(state, player)]
            owed = table.to_call(t["rounds"][-1], player)
            return {"bet": "check" if owed == 0 else "call"}
        return {"action": "new"}  # an action turn (the only other step a player acts in)

    # ----------------------------------------------------------------- moves

    def apply_move(self, state: State, player: str, move: Move) -> Applied:
        if state["result"] is not None:
            return rejected(state, "The match is over; no more moves are accepted.")
        if player not in state["players"]:
            return rejected(state, "You are not playing in this match.")
        kind = grammar.play_kind(move)
        if kind is None:
            return rejected(
                state,
                "A move is one command: STAY, FOLD, FOLD STAYSET, a betting command, HIT, SWAP, DRAW, NEW or GUESS.",
            )
        if kind == "guess":
            return self._guess(state, player, move)
        if is_out(state, player):
            return rejected(state, f"{how_gone(state, player)}: you have nothing to send any more.")
        step = player_step(state, player)
        ref = move.get("step")
        if ref is not None and (step is None or ref != grammar.reference(step.title)):
            shown = ref if isinstance(ref, str) else repr(ref)
            if step is not None:
                return rejected(
                    state,
                    f"Your mail answers an earlier step ({shown}), which is over; now it is {step.title}. "
                    f"{self.what_now(state, player)} Send your command again with the line 'Step: {step.title}'.",
                )
            return rejected(
                state, f"Your mail answers an earlier step ({shown}), which is over. {self.what_now(state, player)}"
            )
        expected = {"stay": "stay", "bet": "bet", "action": "action"}[kind]
        if step is None or step.kind != expected:
            return rejected(state, self._wrong_step(state, player, kind, step))
        handler = {"stay": self._stay, "bet": self._bet, "action": self._action}[kind]
        return handler(state, player, move)

    def _wrong_step(self, state: State, player: str, kind: str, step: Step | None) -> str:
        what = {
            "stay": "STAY, FOLD and FOLD STAYSET answer the stay step",
            "bet": "Betting commands (CHECK, CALL, BET, RAISE, ALL IN, FOLD) answer your betting turn",
            "action": "HIT, SWAP, DRAW and NEW answer your action turn",
        }[kind]
        if step is None:
            return f"{what}, and you have no step open now. {self.what_now(state, player)}"
        return f"{what}; now {step.title} is open for you. {self.what_now(state, player)}"

    def _stay(self, state: State, player: str, move: Move) -> Applied:
        choice = move.get("stay")
        if choice not in ("stay", "fold", "stayset"):
            return rejected(state, "Write STAY, FOLD or FOLD STAYSET.")
        if choice == "stayset" and state["garnets"][player] < STAYSET_FEE:
            return rejected(
                state,
                f"FOLD STAYSET costs {STAYSET_FEE} garnets and you hold {state['garnets'][player]}: choose STAY or "
                "FOLD (nothing was recorded; it costs nothing).",
            )
        # the one change, and the rest of the state shared, not copied (a state is never
        # changed in place: every step that changes more works on a copy of its own)
        new = {**state, "stay": {**state["stay"], player: choice}}
        return Applied(new, True)

    def _bet(self, state: State, player: str, move: Move) -> Applied:
        name = dealt_at(state, player)
        assert name is not None
        t = state["tables"][name]
        rnd = t["rounds"][-1]
        action = {k: v for k, v in move.items() if k != "step"}
        try:
            new_round = table.act(rnd, state["chips"], player, action)
        except table.IllegalBet as illegal:
            return rejected(state, illegal.reason)
        new = clone(state)
        booked_bet(new, name, new_round)
        advance(new, name)
        _after_tables(new)
        mark_told(new)
        return Applied(new, True)

    def _action(self, state: State, player: str, move: Move) -> Applied:
        kind = move.get("action")
        name = dealt_at(state, player)
        assert name is not None
        t = state["tables"][name]
        size = len(t["hands"][player])
        if kind not in ACTIONS:
            return rejected(state, "Your action is HIT, SWAP UP, SWAP DOWN, DRAW 1, DRAW 2 or NEW.")
        action: dict[str, Any] = {"action": kind}
        if kind == "swap":
            if move.get("card") not in ("up", "down"):
                return rejected(state, "SWAP UP (your face-up card) or SWAP DOWN (your face-down card).")
            action["card"] = move["card"]
        if kind == "draw":
            position = move.get("position")
            if not isinstance(position, int) or isinstance(position, bool) or not 1 <= position <= size:
                return rejected(state, f"DRAW takes the position of one of your cards, 1 to {size}: DRAW 1 or DRAW 2.")
            action["position"] = position
        new = clone(state)
        nt = new["tables"][name]
        do_action(new, nt, player, action)
        nt["next"] += 1
        advance(new, name)
        _after_tables(new)
        mark_told(new)
        return Applied(new, True)

    def _guess(self, state: State, player: str, move: Move) -> Applied:
        """Ruling 16: GUESS <bot> <rule id>, at any time while the hands run, once per hand; a
        first correct guess on a bot pays 3 garnets (from the season) and 6 chips (from the
        bank). Whether it was right is told to the guesser only (their view)."""
        g = move.get("guess")
        bot = g.get("bot") if isinstance(g, dict) else None
        rule = g.get("rule") if isinstance(g, dict) else None
        by_bot = {b.lower(): b for b in ALL_BOTS}
        by_rule = {r.lower(): r for r in RULE_IDS}
        if not isinstance(bot, str) or bot.lower() not in by_bot:
            return rejected(state, f"GUESS names a bot: {', '.join(ALL_BOTS)}.")
        if not isinstance(rule, str) or rule.lower() not in by_rule:
            return rejected(state, f"GUESS names a rule id: {', '.join(RULE_IDS)}.")
        why = guess_problem(state, player)
        if why is not None:
            return rejected(state, why)
        bot, rule = by_bot[bot.lower()], by_rule[rule.lower()]
        new = clone(state)
        hand_no = guess_hand(new)
        right = new["rules"][bot] == rule
        paid = right and not any(x["bot"] == bot and x["paid"] for x in new["guesses"][player])
        new["guesses"][player].append({"hand": hand_no, "bot": bot, "rule": rule, "right": right, "paid": paid})
        if paid:
            key = f"h{hand_no}-guess"
            new["garnets"][player] += GUESS_GARNETS
            transfer(new, SEASON, player, GUESS_GARNETS, "a correct guess", key, currency=GARNETS)
            new["chips"][player] += GUESS_CHIPS
            transfer(new, BANK, player, GUESS_CHIPS, "a correct guess", key, currency=MATCH_CHIPS)
            new["rewards"].append({"player": player, "hand": hand_no, "chips": GUESS_CHIPS})
        return Applied(new, True)

    # ----------------------------------------------------------------- deadlines

    def apply_timeout(self, state: State, key: str | None = None) -> State:
        """Close the timed open step ``key`` (None: the only one) at its deadline (RULINGS):
        the stay step folds whoever has not chosen (they move set); a betting turn checks
        when checking is free, else folds; a missed action turn folds (out of the hand, no
        set move); a break ends (the next hand is dealt)."""
        if state["result"] is not None:
            raise GameError("The match is over; there is no step to close.")
        timed = [step for step in all_steps(state) if not step.waiting]
        if key is None:
            if len(timed) != 1:
                raise GameError(f"Several steps are open ({', '.join(s.key for s in timed)}); name the one to close.")
            step = timed[0]
        else:
            found = [s for s in timed if s.key == key]
            if not found:
                raise GameError(f"No timed step {key!r} is open (open: {', '.join(s.key for s in timed) or 'none'}).")
            step = found[0]
        new = clone(state)
        if step.kind == "stay":
            _close_stay(new)
        elif step.kind == "bet":
            name = dealt_at(new, step.players[0])
            assert name is not None
            rnd = new["tables"][name]["rounds"][-1]
            new_round = table.act(rnd, new["chips"], rnd["to_act"], table.default_action(rnd), timeout=True)
            booked_bet(new, name, new_round)
            advance(new, name)
            _after_tables(new)
        elif step.kind == "action":
            p = step.players[0]
            name = dealt_at(new, p)
            assert name is not None
            t = new["tables"][name]
            t["folded"].append(p)
            t["actions"].append(
                {
                    "who": p,
                    "seat": t["seats"][p],
                    "bot": False,
                    "action": "fold",
                    "noop": False,
                    "refill": False,
                    "timeout": True,
                }
            )
            t["next"] += 1
            if new["chips"][p] == 0:
                eliminate(new, [p])
            advance(new, name)
            _after_tables(new)
        else:  # a break
            start_hand(new, new["hand"] + 1)
        mark_told(new)
        return new

    def forfeit(self, state: State, player: str) -> State:
        """``player`` forfeits the match (RULINGS, "Seasons": a loss, with the chips as they
        stand; "a forfeiter ranks as one who reached 0 in that hand"): they leave it at once
        and the others play on (``_forfeit``; ruling 21). A player who has already left the
        match cannot forfeit it."""
        check_forfeit(state, player)
        if is_out(state, player):
            hand = next(e["hand"] for e in state["eliminated"] if e["player"] == player)
            raise GameError(f"{player} has already left the match (in hand {hand}), so cannot forfeit it.")
        new = clone(state)
        _forfeit(new, player)
        return new

    def with_holdings(self, state: State, holdings: dict[str, dict[str, int]]) -> State:
        """A copy whose known garnets are the given live balances ({"garnets": {player: n}},
        whole numbers, not negative, for every player)."""
        got = holdings.get(GARNETS) if isinstance(holdings, dict) else None
        if not isinstance(got, dict):
            raise GameError(f"The holdings must give the {GARNETS} of every player.")
        for p in state["players"]:
            n = got.get(p)
            if not isinstance(n, int) or isinstance(n, bool) or n < 0:
                raise GameError(f"The {GARNETS} of {p} must be a whole number, not negative; got {n!r}.")
        new = clone(state)
        new["garnets"] = {p: got[p] for p in state["players"]}
        return new

    # ----------------------------------------------------------------- views

    def what_now(self, state: State, player: str) -> str:
        return what_now(state, player)


GAME = MatchJack(play=play, views=views, samples=samples)
