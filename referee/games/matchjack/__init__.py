"""MatchJack (issue 10, in progress): six players at two tables, with automated players.

Rule text: ``seeds/matchjack.txt``; the authoritative reading is the "MatchJack" section
of ``RULINGS.md``. The game is not registered yet (``referee.games.GAMES``): its parts
land one at a time, each pure and tested:

* :mod:`referee.games.matchjack.hands`: the cards, a hand's worth and its rank at the
  showdown, and the pots (side pots for all-in players, split pots, discarded remainders
  and shares won by automated players).
* :mod:`referee.games.matchjack.bots`: the published catalogue of the automated players'
  action rules, and the draw of a distinct secret rule per bot from the match seed.
"""
