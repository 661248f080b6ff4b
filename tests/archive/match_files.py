"""A match's pages as one text: its own page (the summary), then its rounds, ledger, event
log and sealed moves, which a long match has on pages of their own (``rounds-<n>.html``...)."""

from __future__ import annotations

import re
from pathlib import Path

from referee.archive.pages import PARTS, Paths


def match_html(site: Path, season: str, match: str) -> str:
    folder = (site / Paths.match(season, match)).parent
    order = {kind: i for i, kind in enumerate(PARTS)}

    def key(path: Path) -> tuple[int, int]:
        kind, number = re.fullmatch(r"([a-z]+)-(\d+)\.html", path.name).groups()
        return order[kind], int(number)

    parts = sorted((p for p in folder.glob("*-*.html")), key=key)
    return "".join(p.read_text(encoding="utf-8") for p in [folder / "index.html", *parts])
