"""Parser complexity: the inbound mail parser on hostile input, doubling the input.

For each hostile shape the input is doubled from 64 KB to 1 MB and the CPU time of one
parse is printed per size, with the ratio per doubling: a linear path stays near 2, a
quadratic one goes to 4. The doubling rows run with the bounds lifted
(``parse_headers(raw, header_limit=...)``, ``parse_body(raw, raw_limit=..., text_limit=...)``)
so that they measure the algorithms, not the cut; what is bounded by design (address
headers, MIME parts and depth) shows a ratio near 1. The last column is the time of the
same 1 MB mail through ``parse_headers`` + the guards + ``parse_body`` as the service
calls them, with the default bounds.

The ``roulette-*`` rows time the game's form parser
(``GAMES["stationary-roulette"].parse``) on one long line; the game is another module,
so a failure there is reported and the other rows go on.

    .venv/bin/python bench/bench_parse.py [--max-kb 1024] [--only SUBSTRING] [--repeat 3]

Prints figures, asserts nothing, exits 0.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from typing import Callable

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:  # run from a checkout without installing
    sys.path.insert(0, str(ROOT))

from referee.mail.guards import automated_reason  # noqa: E402
import referee.mail.parse as parse_module  # noqa: E402
from referee.mail.parse import parse_body, parse_headers  # noqa: E402

KB = 1000
UNBOUNDED = 1 << 40
OWN = ("referee@pbem.example.org",)
LOOP = "pbem.example.org"


# The hostile shapes are built by the same helpers as the linearity tests.
from tests.mail.test_parse_linear import _head as head  # noqa: E402
from tests.mail.test_parse_linear import _mail as mail  # noqa: E402
from tests.mail.test_parse_linear import _MULTIPART as MULTIPART  # noqa: E402
from tests.mail.test_parse_linear import _nested as nested  # noqa: E402
from tests.mail.test_parse_linear import _rep as rep  # noqa: E402


# (name, what it stresses, size -> raw mail)
MAIL_SHAPES: list[tuple[str, str, Callable[[int], bytes]]] = [
    (
        "am-schrieb",
        "body line 'Am 1' + ' schrieb' repeated (attribution rule; 24 s at 256 KB before)",
        lambda n: mail(rep(" schrieb", n, "Am 1")),
    ),
    (
        "html-unclosed-a",
        "HTML body of repeated '<a' (HTML to text; 63 s at 160 KB before)",
        lambda n: mail(rep("<a", n), "text/html"),
    ),
    (
        "op-schreef",
        "body line 'Op 1' + ' schreef' repeated (Dutch attribution rule)",
        lambda n: mail(rep(" schreef", n, "Op 1")),
    ),
    (
        "opener-lines",
        "lines 'On 1 x' (each joined with the next two as a possible attribution)",
        lambda n: mail(rep("On 1 x\n", n)),
    ),
    (
        "from-label-lines",
        "lines 'From: x' (each looks for an Outlook header block below)",
        lambda n: mail(rep("From: x\n", n)),
    ),
    ("blank-lines", "an attribution, then blank lines", lambda n: mail(rep("\n", n, "On 1 x wrote:\n"))),
    (
        "flowed",
        "format=flowed paragraph of soft-broken lines (joined by unflow)",
        lambda n: mail(rep("a \n", n), "text/plain; charset=utf-8; format=flowed"),
    ),
    ("html-unclosed-comment", "HTML of repeated '<!--'", lambda n: mail(rep("<!--", n), "text/html")),
    ("html-unclosed-end-tag", "HTML of repeated '</'", lambda n: mail(rep("</", n), "text/html")),
    ("html-unclosed-quotes", "HTML of repeated '<a x=\"'", lambda n: mail(rep('<a x="', n), "text/html")),
    ("html-attribute-equals", "HTML of repeated '<a ='", lambda n: mail(rep("<a =", n), "text/html")),
    ("html-blocks", "HTML of repeated '<div>' (line breaks)", lambda n: mail(rep("<div>", n), "text/html")),
    (
        "encoded-words",
        "Subject of repeated '=?utf-8?q?a?= ' (RFC 2047 decoding)",
        lambda n: head(rep("=?utf-8?q?a?= ", n, "Subject: ")),
    ),
    ("unterminated-encoded-words", "Subject of repeated '=?a?q?'", lambda n: head(rep("=?a?q?", n, "Subject: "))),
    ("thousands-of-headers", "'X-H: v' header lines", lambda n: head(rep("X-H: v\n", n).rstrip("\n"))),
    (
        "content-type-quoted-semicolons",
        "Content-Type: text/plain; a=\" + ';' repeated (parameters)",
        lambda n: mail(b"x", 'text/plain; a="' + rep(";", n)),
    ),
    ("huge-from", "From of '<' repeated (getaddresses; bounded to 8 KiB)", lambda n: head(rep("<", n, "From: "))),
    (
        "references",
        "References of many ids (kept: the first and the last 99)",
        lambda n: head(rep("<a1234@b.example> ", n, "References: ")),
    ),
    ("deep-mime-nesting", "multiparts nested ever deeper (walked to depth 32)", nested),
    (
        "thousands-of-parts",
        "sibling MIME parts (200 looked at)",
        lambda n: rep(b"--b\nContent-Type: text/plain\n\n\n", n, MULTIPART),
    ),
    (
        "near-delimiters",
        "lines that start like the MIME delimiter but are not one",
        lambda n: rep(b"--bx\n--b \tx\n", n, MULTIPART + b"--b\n\n"),
    ),
    (
        "punycode-charset",
        "text/plain; charset=punycode (a quadratic codec, not used)",
        lambda n: mail(rep("a", n, "-"), "text/plain; charset=punycode"),
    ),
]

GAME_SHAPES: list[tuple[str, str, Callable[[int], str]]] = [
    (
        "roulette-x-spaces-y",
        "game form parser: 'x' + spaces + 'y' as a ROULETTE line",
        lambda n: "ROULETTE\nx" + " " * n + "y\n",
    ),
    (
        "roulette-label-spaces",
        "game form parser: 'Gold:' + spaces + 'y' as a ROULETTE line",
        lambda n: "ROULETTE\nGold:" + " " * n + "y\n",
    ),
]


def cpu(work: Callable[[], object], repeat: int) -> float:
    """Best CPU time of *repeat* runs of *work*."""
    best = float("inf")
    for _ in range(repeat):
        start = time.process_time()
        work()
        best = min(best, time.process_time() - start)
    return best


def unbounded(raw: bytes) -> None:
    parse_module._HEADS.forget()  # time the parse, not the memory of header blocks read before
    headers = parse_headers(raw, header_limit=UNBOUNDED)
    automated_reason(headers.message, OWN, LOOP)
    parse_body(raw, raw_limit=UNBOUNDED, text_limit=UNBOUNDED)


def as_served(raw: bytes) -> None:
    parse_module._HEADS.forget()
    headers = parse_headers(raw)
    automated_reason(headers.message, OWN, LOOP)
    parse_body(raw)


def game_parser() -> Callable[[str], object] | str:
    try:
        from referee.games import GAMES

        game = GAMES["stationary-roulette"]
        state = game.initial_state(1, ["alice", "bob"], {})
    except Exception as exc:  # another module, being rewritten
        return f"unavailable: {exc!r}"

    def parse(text: str) -> object:
        try:
            return game.parse(state, "alice", text)
        except Exception as exc:  # a ParseError is an answer too; timing is what counts
            return exc

    return parse


def fmt(seconds: float) -> str:
    if seconds >= 1:
        return f"{seconds:7.2f} s "
    return f"{seconds * 1000:7.1f} ms"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--max-kb", type=int, default=1024, help="largest input, KB (default 1024)")
    parser.add_argument("--only", default="", help="run the shapes whose name contains this")
    parser.add_argument("--repeat", type=int, default=3, help="best of N runs per figure (default 3)")
    args = parser.parse_args(argv)

    sizes = []
    size = 64
    while size <= args.max_kb:
        sizes.append(size)
        size *= 2
    print(f"CPU time of one parse (best of {args.repeat}); ratio = time(2n) / time(n), ~2 is linear, ~4 quadratic")
    print("doubling rows: bounds lifted; last column: the largest mail with the default bounds\n")
    header = (
        f"{'shape':32s}" + "".join(f"{f'{s} KB':>11s}" for s in sizes) + "   ratios per doubling" + f"{'default':>14s}"
    )
    print(header)
    print("-" * len(header))

    game = game_parser()
    rows: list[tuple[str, str, Callable[[int], object], Callable[[object], object], bool]] = []
    for name, _, make in MAIL_SHAPES:
        rows.append((name, "mail", make, unbounded, True))
    for name, _, make_text in GAME_SHAPES:
        rows.append((name, "game", make_text, game if callable(game) else None, False))

    worst = 0.0
    for name, kind, make, work, served in rows:
        if args.only not in name:
            continue
        if work is None:
            print(f"{name:32s} {game}")
            continue
        times = []
        for kb in sizes:
            data = make(kb * KB)
            times.append(cpu(lambda work=work, data=data: work(data), args.repeat))
        ratios = [b / a if a > 0 else float("nan") for a, b in zip(times, times[1:], strict=False)]
        worst = max([worst, *ratios]) if kind == "mail" else worst
        default = ""
        if served:
            data = make(sizes[-1] * KB)
            default = fmt(cpu(lambda data=data: as_served(data), args.repeat))
        print(
            f"{name:32s}"
            + "".join(f"{fmt(t):>11s}" for t in times)
            + "   "
            + " ".join(f"{r:4.1f}" for r in ratios).ljust(20)
            + f"{default:>14s}",
            flush=True,
        )
    print(f"\nworst ratio per doubling over the mail shapes: {worst:.2f}")
    print("\nshapes:")
    for name, what, _ in MAIL_SHAPES + GAME_SHAPES:  # type: ignore[operator]
        if args.only in name:
            print(f"  {name:32s} {what}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
