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


def shift_messages(
    table_id: str, rules: str, rounds: int, seed: int, irregular: float = 0.15
) -> list[dict[str, Any]]:
    """The envelopes one table publishes over `rounds` rounds, in order, numbered from 1."""
    rng = np.random.default_rng([seed, 0x5F])
    sure = np.random.default_rng([seed, 0xC0])  # apart, so the rounds stay the seed's
    messages: list[dict[str, Any]] = []
    for index in range(rounds):
        kind = INJECTABLE[int(rng.integers(len(INJECTABLE)))] if rng.random() < irregular else None
        plan = plan_round(int(rng.integers(1 << 30)), rules, [kind.value] if kind else [])
        truth = ground_truth(plan)
        round_id = f"{table_id}:sim:{index + 1}"
        alert_ids = []
        for found in truth["irregularities"]:
            irregularity = Irregularity(found["kind"])
            alert_id = str(uuid.UUID(int=int(rng.integers(1 << 62))))
            alert_ids.append(alert_id)
            detail = {k: v for k, v in found.items() if k != "kind"}
            body = {
                "id": alert_id,
                "kind": irregularity.value,
                "severity": CATALOGUE[irregularity].severity.value,
                "table_id": table_id,
                "round_id": round_id,
                "position": found.get("position"),
                "rules": rules,
                "clause": CATALOGUE[irregularity].clause(rules),
                "expected": str(found.get("expected", "")) or None,
                "observed": str(found.get("observed", detail)) or None,
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
        }
        record = {
            "round_id": round_id,
            "table_id": table_id,
            "rules": rules,
            "banker": plan.banker,
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
