"""Hidden information never reaches a player before the rules reveal it, end to end:
two matches that differ only in alice's secret winning colour send bob byte-identical
mail until the round that reveals it closes."""

from __future__ import annotations

from datetime import timedelta

from .harness import DAY, START, World


def bob_mailbox(world: World) -> dict[str, bytes]:
    folder = world.config.mail.outbox / "bob@example.test"
    return {p.name: p.read_bytes() for sub in ("new", "cur") for p in (folder / sub).glob("*")}


def play_until(world: World, alice_colour: str, rounds: int) -> None:
    world.tick(START)
    for r in range(rounds):
        opened = START + r * DAY
        alice = f"ROULETTE\nWinning colour: {alice_colour}\nGold: 33\nSilver: 7\nBlack: 0"
        bob = "ROULETTE\nWinning colour: Gold\nGold: 30\nSilver: 10\nBlack: 0"
        if r > 0:
            alice += "\n\nBET\nGold: 25\nSilver: 15"
            bob += "\n\nBET\nSilver: 40"
        world.send("alice", alice, opened + timedelta(hours=1))
        world.tick(opened + timedelta(hours=1))
        world.send("bob", bob, opened + timedelta(hours=2))
        world.tick(opened + timedelta(hours=2))
        # a revision by alice: bob must not notice it either
        world.send(
            "alice",
            alice.replace("Gold: 33", "Gold: 32").replace("Silver: 7", "Silver: 8"),
            opened + timedelta(hours=3),
        )
        world.tick(opened + timedelta(hours=3))
        world.tick(opened + DAY - timedelta(hours=2))  # reminders
        world.tick(opened + DAY)


def test_bob_cannot_tell_alices_winning_colour_before_the_reveal(tmp_path):
    gold = World(tmp_path / "gold", f"sqlite:///{tmp_path / 'gold.db'}")
    black = World(tmp_path / "black", f"sqlite:///{tmp_path / 'black.db'}")
    try:
        # round 0 prepares alice's first roulette; in round 1 bob bets on it; its close reveals it
        play_until(gold, "Gold", 1)
        play_until(black, "Black", 1)
        assert bob_mailbox(gold) == bob_mailbox(black)
        round1 = START + DAY
        for world in (gold, black):
            world.send("bob", "BET\nSilver: 40", round1 + timedelta(hours=2))
            world.tick(round1 + timedelta(hours=2))
            world.tick(round1 + DAY - timedelta(hours=2))
        assert bob_mailbox(gold) == bob_mailbox(black)
        assert len(bob_mailbox(gold)) >= 5  # start prompt, receipts, round-1 prompt, round-1 receipt
        # the close of round 1 reveals the colour: now bob's mail differs
        for world in (gold, black):
            world.tick(round1 + DAY)
        assert bob_mailbox(gold) != bob_mailbox(black)
    finally:
        gold.store.dispose()
        black.store.dispose()
