"""APScheduler wiring for ``referee run``.

Jobs are doorbells, the database is the ledger: a job carries only an instant or an id,
re-checks the database when it fires, and is safe to fire late or twice.
"""
