"""Reading a reply against the mail it answers (``referee.mail.reply.read_against``): linear
in both mails, measured by doubling them.

Shapes (each doubled from 32 KB to 1 MB of reply):

* ``quoted-edit``: our mail quoted with ``> `` and one form line edited inside it;
* ``rewrapped``: the quote re-wrapped at 50 columns under ``> > ``;
* ``unquoted``: Outlook's copy without quote marks under a header block, a move above;
* ``one-word-lines``: our mail made of one repeated word per line, the reply the same
  (the worst case for the search of a line's place: every line is a candidate);
* ``foreign``: a reply of as many lines that are not ours at all.

For each size the CPU time of one reading is printed with the ratio per doubling: a linear
path stays near 2, a quadratic one goes to 4. The last rows compare, on a usual round mail
(about 3 KB) and its reply, the reading against the sent mail with the rest of what the
service does to a reply's body (``parse_body``): the issue's budget is 1.5x the inbound
time per mail.

    .venv/bin/python bench/bench_reply.py [--max-kb 1024] [--repeat 3]

Prints figures, asserts nothing, exits 0.
"""

from __future__ import annotations

import argparse
import sys
import textwrap
from pathlib import Path
from typing import Callable

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:  # run from a checkout without installing
    sys.path.insert(0, str(ROOT))

from referee.mail.parse import parse_body, shown_text  # noqa: E402
from referee.mail.reply import read_against  # noqa: E402

from bench_parse import cpu  # noqa: E402  (bench/ is the script's folder)

KB = 1000
FORM = "ROULETTE\nWinning colour: Gold\nGold: 30\nSilver: 10\nBlack: 0\n\nBET\nGold: 20\nSilver: 20\nBlack: 0\n"
PARAGRAPH = (
    "Roulette prepared by Alice in round 3, bet on by Bob:\n"
    "  Winning colour: Black. Points placed: Gold 29, Silver 11, Black 0.\n"
    "  Bob's bet: Gold 0, Silver 40, Black 0.\n"
    "  Points: none (Black wins). Alice takes 40 - 0 (bet on Black) = 40 chips from Bob.\n\n"
)


def sent_of(size: int) -> str:
    head = "Dear Bob,\n\nThis is the referee of your Stationary Roulette match demo-1 against Alice.\n\n"
    body = PARAGRAPH * max(1, (size - 600) // len(PARAGRAPH))
    return head + body + FORM + "\n-- \nThe referee (an automated service)\n"


def quoted(text: str, prefix: str = "> ") -> str:
    return "\n".join(prefix + line if line else prefix.rstrip() for line in text.split("\n"))


def shapes() -> dict[str, Callable[[int], tuple[str, str]]]:
    def quoted_edit(n: int) -> tuple[str, str]:
        sent = sent_of(n)
        return "On Thu, Referee wrote:\n" + quoted(sent).replace("> Gold: 20", "> Gold: 25"), sent

    def rewrapped(n: int) -> tuple[str, str]:
        sent = sent_of(n)
        wrapped = "\n".join("\n".join(textwrap.wrap(x, 50)) if x.strip() else "" for x in sent.split("\n"))
        return "BET\nGold: 40\n\n" + quoted(wrapped, "> > "), sent

    def unquoted(n: int) -> tuple[str, str]:
        sent = sent_of(n)
        return "BET\nGold: 40\n\nFrom: Referee\nSent: Thursday\nTo: Bob\nSubject: Round 5\n\n" + sent, sent

    def one_word_lines(n: int) -> tuple[str, str]:
        sent = "Dear Bob,\n" + "gold\n" * (n // 5) + FORM
        return quoted(sent), sent

    def foreign(n: int) -> tuple[str, str]:
        sent = sent_of(n)
        return "".join(f"line {k} of something else entirely\n" for k in range(n // 36)), sent

    return {
        "quoted-edit": quoted_edit,
        "rewrapped": rewrapped,
        "unquoted": unquoted,
        "one-word-lines": one_word_lines,
        "foreign": foreign,
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--max-kb", type=int, default=1024)
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    sizes = []
    n = 32 * KB
    while n <= args.max_kb * KB:
        sizes.append(n)
        n *= 2
    print(f"{'shape':16}" + "".join(f"{s // KB:>10} KB" for s in sizes) + "   ratios")
    for name, make in shapes().items():
        times = []
        for size in sizes:
            reply, sent = make(size)
            times.append(cpu(lambda reply=reply, sent=sent: read_against(reply, sent, FORM), args.repeat))
        ratios = " ".join(f"{b / a:.1f}" if a > 0 else "-" for a, b in zip(times, times[1:], strict=False))
        print(f"{name:16}" + "".join(f"{t * 1000:>10.1f} ms" for t in times) + f"   {ratios}")
    # a usual mail: the reading against the sent mail beside parse_body of the same reply
    sent = sent_of(3 * KB)
    reply = "On Thu, Referee wrote:\n" + quoted(sent).replace("> Gold: 20", "> Gold: 25")
    raw = (
        "From: bob@x.test\r\nTo: referee@x.test\r\nSubject: Re: round\r\nMessage-ID: <a@x.test>\r\n\r\n" + reply
    ).encode()
    sent_raw = ("From: referee@x.test\r\nTo: bob@x.test\r\nSubject: round\r\n\r\n" + sent).encode()
    loops = 500
    body = cpu(lambda: [parse_body(raw) for _ in range(loops)], args.repeat) / loops
    against = cpu(lambda: [read_against(reply, shown_text(sent_raw), FORM) for _ in range(loops)], args.repeat)
    against /= loops
    move = "BET\nGold: 40\n\nBob"
    fresh = cpu(lambda: [read_against(move, shown_text(sent_raw), FORM) for _ in range(loops)], args.repeat) / loops
    print(
        f"\na usual reply ({len(raw)} bytes): parse_body {body * 1e6:.0f} us; "
        f"reading it against our mail (with the text of ours) {against * 1e6:.0f} us, {against / body:.2f}x"
    )
    print(f"a fresh move that quotes nothing: {fresh * 1e6:.0f} us (most of it the text of our mail)")


if __name__ == "__main__":
    main()
