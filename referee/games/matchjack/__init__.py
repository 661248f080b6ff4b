"""MatchJack: six players at two tables, with automated players.

Rule text: ``seeds/matchjack.txt``; the authoritative reading is the "MatchJack" section
of ``RULINGS.md``; our own decisions are the numbered "Rulings" of
``docs/games/matchjack.md``. Registered in ``referee.games.GAMES`` as ``matchjack``; its
parts, each pure and tested:

* :mod:`referee.games.matchjack.hands`: the cards, a hand's worth and its rank at the
  showdown, and the pots (side pots for all-in players, split pots, discarded remainders
  and shares won by automated players).
* :mod:`referee.games.matchjack.bots`: the published catalogue of the automated players'
  action rules, and the draw of a distinct secret rule per bot from the match seed.
* :mod:`referee.games.matchjack.table`: a betting round among several seats (standard
  no-limit: CHECK, CALL, BET n, RAISE n, RAISE TO n, ALL IN, FOLD).
* :mod:`referee.games.matchjack.grammar`: the mail grammar (the commands, the GUESS line,
  the Step line) and the commands written back in forms.
* :mod:`referee.games.matchjack.rules`: the rule text's numbers and the rules that read the
  state: who is still in the match and where, the open steps, what a player may do now,
  leaving the match, the end of the match and its ranking.
* :mod:`referee.games.matchjack.play`: a hand as it is played at the tables (the deal and the
  antes, the betting rounds, the action phase and the bots' actions, the showdown, the end
  of the hand), and the start of the match.
* :mod:`referee.games.matchjack.views`: what a player and the public see, the standings.
* :mod:`referee.games.matchjack.samples`: sample moves and hidden variants, for tests and
  automated players.
* :mod:`referee.games.matchjack.engine`: the game (``GAME``), a game of concurrent steps:
  the stay step of both tables at once, then each table's betting and action turns on its
  own (a table that has finished waits for the other), breaks after hands 5 and 10; the match
  ends with the last hand, its result ranking the six (the winner first, the EC last: the EC's
  nomination of the DMO is the season's step).
"""
