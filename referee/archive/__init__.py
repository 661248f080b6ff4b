"""The archive: what readers see of a season after the fact, and why they can trust it.

* ``chain``: the hash chain of each match's event log (tamper evidence).
* ``rounds``: the closed rounds or hands of a match, from its public view, with the
  instants that closed them.
* ``verify``: ``referee archive verify`` and ``referee replay``: recompute the chains from
  the database and from a built site, and rebuild matches from their seeds and events.
* ``model``, ``charts``, ``site``, ``serve``: the static site (pages, inline SVG charts,
  incremental builds, a local server); ``atom`` and ``texts``: the feeds and the round
  texts they and the public mbox share; ``mbox``: ``referee archive mbox``.
"""
