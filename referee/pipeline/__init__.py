"""The stages of the service, each one job: ingest (transport -> stored rows), judging,
the clock, delivery (outbox -> transport). :mod:`referee.service` strings them together."""

BATCH = 200  # mails or matches per transaction, in every stage
