"""What one cycle (or one stage of it) did, for the log and ``referee tick``."""

from __future__ import annotations

from dataclasses import asdict, dataclass

__all__ = ["TickReport"]


@dataclass
class TickReport:
    ingested: int = 0
    started: int = 0
    start_failed: int = 0  # matches that could not start (referee status says why)
    accepted: int = 0
    rejected: int = 0
    ignored: int = 0
    failed: int = 0
    closed: int = 0
    reminders: int = 0
    sent: int = 0
    send_errors: int = 0

    def merge(self, other: TickReport) -> None:
        for name, value in asdict(other).items():
            setattr(self, name, getattr(self, name) + value)

    def summary(self) -> str:
        parts = [f"{name} {value}" for name, value in asdict(self).items() if value]
        return ", ".join(parts) or "nothing to do"
