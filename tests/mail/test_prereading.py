"""A reply read ahead by a worker of the press (referee.pipeline.prereading) is read exactly
as the judge reads it itself: for every mail of the inbound corpus (real clients, hostile
mails), the body a worker sends back, and the reply read against the mail it answers, are
those the judge would have made."""

from __future__ import annotations

import importlib.util
import pickle
import sys
import tomllib
from pathlib import Path

import pytest

from referee.mail.parse import parse_body, parse_headers
from referee.mail.reply import read_against
from referee.match.press import Job, _make_chunk
from referee.pipeline.prereading import FirstReading, first_reading

CORPUS = Path(__file__).resolve().parents[1] / "corpus"


def _make_corpus():
    spec = importlib.util.spec_from_file_location("make_corpus_for_prereading", CORPUS / "make_corpus.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault(spec.name, module)  # its dataclasses look their module up there
    assert spec.loader is not None
    spec.loader.exec_module(module)
    return module


MAKE = _make_corpus()
ROUNDS = {m["file"]: m["round"] for m in tomllib.loads((CORPUS / "index.toml").read_text())["mail"]}
# the stored mails, and those too large to store (made by make_corpus.py): bounds cut them
MAILS = {p.name: p.read_bytes() for p in CORPUS.glob("*.eml")} | {
    case.file: case.raw for case in MAKE.build() if case.raw is not None and len(case.raw) > MAKE.STORED_LIMIT
}


@pytest.mark.parametrize("name", sorted(MAILS))
def test_a_worker_reads_each_corpus_mail_as_the_judge_does(name):
    raw = MAILS[name]
    rnd = ROUNDS.get(name, 0)
    sent, form = MAKE.original("alice", rnd), MAKE.FORM0 if rnd == 0 else MAKE.FORM1
    here = parse_body(raw, head=parse_headers(raw))  # what the judge reads, with the headers it parsed
    expected = read_against(here.shown, sent, form, linked=True) if here.shown.strip() else None
    # the job as a worker runs it (its chunk), and its answer as it travels back
    (answer,) = pickle.loads(pickle.dumps(_make_chunk([Job(first_reading, (raw, 7, sent, form))])))
    assert isinstance(answer, FirstReading) and answer.outbox_id == 7
    assert answer.body == here  # every reading, in the same order (the copy made them all)
    assert answer.body.written == here.written and answer.body.truncated == here.truncated
    assert answer.against == expected
