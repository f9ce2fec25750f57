"""A simulated shift for demos, reports and load: round records and alerts as a perfect table box
would publish them, made from the round simulator's ground truth (`vision.synth.round`) without
rendering video. Each table plays its rounds with a share of injected irregularities. Alerts
carry a made-up spread of confidence (mostly over 0.9, a few lower, as from pixels), so that the
review UI's least-sure-first order has something to show; it is not a measurement."""

from __future__ import annotations

import uuid
from typing import Any

import numpy as np

from room.store import Store
from rules import CATALOGUE, Irregularity
from vision.synth.round import INJECTABLE, ground_truth, plan_round

RULES = ("nz-1998", "act-2005", "rws-2018", "mbs-2020")
ROUND_S = 26.0


def _words(found: dict[str, Any], required_first: int | None) -> tuple[str, str, str, int | None]:
    """An injected irregularity as the round follower words it (`vision/follow`): expected,
    observed, the operator's sentence, and the position it concerns."""
    kind = found["kind"]
    if kind == "house-way-violation":
        p = found["position"]
        return (found["expected"], found["observed"],
                f"Box {p}'s hand was set {found['observed']}; the house way is "
                f"{found['expected']}.", p)  # fmt: skip
    if kind == "wrong-first-position":
        got, due = found["delivered_first_to"], found["required"]
        return (f"position {due} first", f"position {got} first",
                f"The first group went to box {got}; the dice and the banker call for box "
                f"{due}.", got)  # fmt: skip
    if kind == "wrong-cut-order":
        a, b = found["groups_swapped"]
        return (f"group {a} and group {b} each from its own stacks",
                f"groups {a} and {b} dealt from each other's stacks",
                f"Groups {a} and {b} were dealt from each other's stacks, out of the cut's "
                "order.", None)  # fmt: skip
    if kind == "hands-swapped":
        a, b = found["positions"]
        return (f"position {a}'s tiles stay at {a}", f"tiles carried between {a} and {b}",
                f"Box {a}'s and box {b}'s hands were exchanged after delivery.", a)  # fmt: skip
    if kind == "off-box-played":
        p = found["position"]
        return (f"box {p}'s hand set aside unplayed", f"box {p}'s hand exposed",
                f"Box {p} is marked Off, yet its hand was exposed and played; it should have "
                "been set aside in the burnt box.", p)  # fmt: skip
    if kind == "wrong-hand-size":
        (p, n), (q, m) = sorted(found["sizes"].items())
        return ("4 tiles a position", f"box {p}: {n} tiles, box {q}: {m} tiles",
                f"Box {p} holds {n} tiles and box {q} {m}; a hand is 4.", p)  # fmt: skip
    if kind == "missing-tile":
        gone = found["tile"]
        return ("32 tiles", f"31 tiles; missing {gone} x1",
                f"Only 31 of the 32 tiles were seen this round; missing {gone}.", None)  # fmt: skip
    if kind == "foreign-tile":
        tile, replaced = found["tile"], found["replaced"]
        return (f"at most the set's {tile}", f"one {tile} too many",
                f"A {tile} too many was seen this round, for a {replaced}.", None)  # fmt: skip
    if kind in ("exposed-tile-stacking", "exposed-tile-dealing"):
        done = "stacked" if kind.endswith("stacking") else "dealt"
        shown = found["tile"]
        return ("every tile face down", f"{shown} face up",
                f"A tile ({shown}) lay face up while the tiles were {done}.", None)  # fmt: skip
    if kind == "dice-not-flat":
        return ("every die flat", f"die {found['die'] + 1} not flat",
                f"Die {found['die'] + 1} came to rest not lying flat.", None)  # fmt: skip
    if kind == "wrong-dice-count":
        n = len(found["dice"])
        return ("3 dice", f"{n} dice", f"{n} dice were thrown; the game uses 3.", None)
    raise ValueError(f"no words for {kind}")


def shift_messages(
    table_id: str, rules: str, rounds: int, seed: int, irregular: float = 0.15
) -> list[dict[str, Any]]:
    """The envelopes one table publishes over `rounds` rounds, in order, numbered from 1."""
    rng = np.random.default_rng([seed, 0x5F])
    sure = np.random.default_rng([seed, 0xC0])  # apart, so the rounds stay the seed's
    messages: list[dict[str, Any]] = []
    for index in range(rounds):
        kind = INJECTABLE[int(rng.integers(len(INJECTABLE)))] if rng.random() < irregular else None
        plan = plan_round(
            int(rng.integers(1 << 30)), rules, [kind.value] if kind else [], context=True
        )  # cuts as the book has them chosen (MBS 3.9: at random)
        truth = ground_truth(plan)
        round_id = f"{table_id}:sim:{index + 1}"
        alert_ids = []
        for found in truth["irregularities"]:
            irregularity = Irregularity(found["kind"])
            alert_id = str(uuid.UUID(int=int(rng.integers(1 << 62))))
            alert_ids.append(alert_id)
            expected, observed, summary, position = _words(found, truth["required_first_position"])
            body = {
                "id": alert_id,
                "kind": irregularity.value,
                "severity": CATALOGUE[irregularity].severity.value,
                "table_id": table_id,
                "round_id": round_id,
                "position": position,
                "rules": rules,
                "clause": CATALOGUE[irregularity].clause(rules),
                "summary": summary,
                "expected": expected,
                "observed": observed,
                "confidence": round(1.0 - float(sure.beta(1.0, 12.0)), 2),
                "evidence_time_s": 10.0,
                "raised_time_s": 10.4,
                "evidence_image": None,
            }
            messages.append({"kind": "alert", "message_id": alert_id, "body": body})
        hands = {
            p: {
                k: h[k]
                for k in ("tiles", "high", "low", "house_way", "house_way_setting")
                if k in h
            }
            for p, h in truth["hands"].items()
            if not h.get("set_aside")  # the box out of play's hand is burnt, not played
        }
        record = {
            "round_id": round_id,
            "table_id": table_id,
            "rules": rules,
            "banker": plan.banker,
            "off_box": plan.off_box,
            "started_s": index * ROUND_S,
            "ended_s": (index + 1) * ROUND_S,
            "complete": True,
            "phases": {},
            "dice": list(plan.dice),
            "dice_flat": plan.tilt == 0.0,
            "cut": plan.cut,
            "cut_options": plan.cut_options,
            "required_first_position": truth["required_first_position"],
            "first_position": plan.first_position,
            "hands": hands,
            "outcomes": truth["outcomes"],
            "alerts": alert_ids,
        }
        messages.append({"kind": "round", "message_id": str(uuid.uuid4()), "body": record})
    for seq, message in enumerate(messages, start=1):
        message.update({"seq": seq, "table_id": table_id, "produced_at": 0.0})
    return messages


def simulate_shift(store: Store, tables: int, rounds: int, start: float, seed: int = 1) -> int:
    """Store a shift of `tables` tables x `rounds` rounds, arriving from `start` on; returns how
    many messages were stored."""
    stored = 0
    for k in range(tables):
        table_id = f"pgt-{k + 1:02d}"
        messages = shift_messages(table_id, RULES[k % len(RULES)], rounds, seed * 1000 + k)
        per_round = max(len(messages) // max(rounds, 1), 1)
        for i in range(0, len(messages), per_round):
            batch = messages[i : i + per_round]
            at = start + (i // per_round) * ROUND_S * 2 + k
            stored += sum(1 for r in store.ingest_many(batch, at=at) if getattr(r, "stored", False))
    return stored
