"""Plant known bugs in the critical paths, one at a time, and check the tests catch each.

A test that cannot fail is found when it is written: each bug below was once survived by the
suite, or guards a path where a silent failure costs a casino money or evidence (rule clauses,
deal order, set integrity, the outbox's acknowledgement, ingest's idempotency, CSRF, roles, the
dice test's statistics, the follower's stack check). The tree is copied once to a scratch
folder; each bug is applied there, the tests named for it run, and the bug is taken out again.

    python3 scripts/planted_bugs.py            # every bug; exit 1 if any survives
    python3 scripts/planted_bugs.py --list     # what is planted where
    python3 scripts/planted_bugs.py NAME...    # only these
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


@dataclass(frozen=True)
class Bug:
    name: str
    path: str
    original: str
    planted: str
    tests: tuple[str, ...]
    """pytest arguments that must fail with the bug in place."""


BUGS = (
    Bug(
        "csrf-check-off",
        "room/web.py",
        'if not secrets.compare_digest(token, str(request.session.get("csrf", ""))):',
        "if False:",
        ("tests/test_room.py", "-k", "form_token or without_its_token"),
    ),
    Bug(
        "viewers-may-act",
        "room/web.py",
        'CAN_ACT = ("reviewer", "admin")',
        'CAN_ACT = ("viewer", "reviewer", "admin")',
        ("tests/test_room.py", "-k", "viewer_cannot_acknowledge"),
    ),
    Bug(
        "chi-square-dof-bins",
        "room/report.py",
        "dof = len(bins) - 1",
        "dof = len(bins)",
        ("tests/test_room.py", "-k", "pearson"),
    ),
    Bug(
        "chi-square-dof-plus-three",
        "room/report.py",
        "dof = len(bins) - 1",
        "dof = len(bins) + 3",
        ("tests/test_room.py", "-k", "pearson"),
    ),
    Bug(
        "chi-square-pooling-half",
        "room/report.py",
        "if expected >= 5:",
        "if expected >= 0.5:",
        ("tests/test_room.py", "-k", "pearson"),
    ),
    Bug(
        "tie-reading-weakest-low",
        "rules/houseway.py",
        "self.best(TIE_READING, lambda s: (*s.low.strength, *s.high.strength))",
        "self.best(TIE_READING, lambda s: tuple(-v for v in (*s.low.strength, *s.high.strength)))",
        ("tests/test_house_way.py", "-k", "tie"),
    ),
    Bug(
        "first-position-ignores-plus-minus-4",
        "rules/deal.py",
        "return (banker - 1 + total + adjust - 1) % POSITIONS + 1",
        "return (banker - 1 + total - 1) % POSITIONS + 1",
        ("tests/test_deal.py",),
    ),
    Bug(
        "foreign-tile-one-copy-late",
        "rules/integrity.py",
        "for t, n in seen.items() if n > FULL_SET[t]))",
        "for t, n in seen.items() if n > FULL_SET[t] + 1))",
        ("tests/test_integrity_and_catalogue.py",),
    ),
    Bug(
        "outbox-keeps-acknowledged",
        "edge/outbox.py",
        """        self._transaction(("DELETE FROM outbox WHERE seq = ?", (seq,)))

    def refuse""",
        """        self._transaction()

    def refuse""",
        ("tests/test_edge.py", "-k", "forgets_only_what_was_acknowledged"),
    ),
    Bug(
        "courier-stalls-on-a-full-disk",
        "edge/comms.py",
        """                self.unsettled.pop(0)
        except OutboxError as error:""",
        """                self.unsettled.pop(0)
        except KeyError as error:""",
        ("tests/test_edge.py", "-k", "outlives_a_full_disk"),
    ),
    Bug(
        "login-throttle-blind-to-addresses",
        "room/web.py",
        "by_address = store.failed_logins(window, address=address)",
        "by_address = 0",
        ("tests/test_room.py", "-k", "guessing_many_names"),
    ),
    Bug(
        "ingest-takes-a-repeat-for-new",
        "room/store.py",
        """                if p.message_id in known:
                    results[p.index] = Ingested(False)""",
        """                if p.message_id in known:
                    results[p.index] = Ingested(True)""",
        ("tests/test_room.py", "-k", "idempotent or once"),
    ),
    Bug(
        "stack-place-widened",
        "vision/follow/delivery.py",
        "stack_place: float = 5.0",
        "stack_place: float = 7.0",
        ("tests/test_follow.py", "-k", "standing_only_when and beyond"),
    ),
    Bug(
        "arm-taken-for-an-empty-place",
        "vision/follow/delivery.py",
        "flank_gap: float = 3.5",
        "flank_gap: float = 4.5",
        ("tests/test_follow.py", "-k", "close_standing"),
    ),
    Bug(
        "web-session-outlives-logout",
        "room/web.py",
        "            store.close_session(sid)",
        "            pass",
        ("tests/test_room.py", "-k", "copied"),
    ),
    Bug(
        "ingest-session-dies-with-it",
        "room/ingest.py",
        "clean_start=not self.persistent,",
        "clean_start=True,",
        ("tests/test_ingest_session.py",),
    ),
    Bug(
        "no-stand-in-for-a-down-worker",
        "room/ingest.py",
        "first_live = bool(live) and live[0] == self.client_id",
        "first_live = False",
        ("tests/test_ingest_session.py", "-k", "stays_down"),
    ),
    Bug(
        "player-bank-held-to-the-house-way",
        "rules/context.py",
        "return bank is not Bank.PLAYER",
        "return True",
        ("tests/test_context.py",),
    ),
    Bug(
        "announced-banker-ignored",
        "vision/follow/follower.py",
        "banker = said.banker or (chung.box if chung else None) or table.banker",
        "banker = (chung.box if chung else None) or table.banker",
        ("tests/test_context.py", "-k", "pits_word"),
    ),
    Bug(
        "chung-ignored",
        "vision/follow/follower.py",
        "banker = said.banker or (chung.box if chung else None) or table.banker",
        "banker = said.banker or table.banker",
        ("tests/test_context.py", "-k", "chung"),
    ),
    Bug(
        "chips-on-the-house-box-ignored",
        "rules/context.py",
        "    if house_box in wagered:\n",
        "    if False:\n",
        ("tests/test_context.py", "-k", "who_banks or chips_on"),
    ),
    Bug(
        "chung-off-the-house-box-not-a-player-bank",
        "rules/context.py",
        "    if chung is not None and chung[0] != house_box:\n",
        "    if False:\n",
        ("tests/test_context.py", "-k", "who_banks or read_from_the_chung"),
    ),
    Bug(
        "capital-in-the-centre-circle-ignored",
        "rules/context.py",
        "        if capital:\n",
        "        if False:\n",
        ("tests/test_context.py", "-k", "who_banks or chips_on"),
    ),
    Bug(
        "a-bare-circle-taken-for-a-house-bank-without-wagers",
        "rules/context.py",
        "        if wagered and house_box_agrees:\n",
        "        if house_box_agrees:\n",
        ("tests/test_context.py", "-k", "who_banks or chips_on"),
    ),
    Bug(
        "capital-counted-as-a-box-wager",
        "vision/follow/follower.py",
        "            if capital:\n                places.add(0)\n            elif",
        "            if",
        ("tests/test_context.py", "-k", "chips_on"),
    ),
    Bug(
        "chips-read-by-the-face-reader",
        "vision/detector.py",
        "plaques = [k for k, label in enumerate(labels) if label != WAGER]",
        "plaques = list(range(len(labels)))",
        ("tests/test_markers.py", "-k", "chips"),
    ),
    Bug(
        "wagers-seen-too-late-for-the-round",
        "vision/follow/follower.py",
        "        if self.wagers.look(",
        "        if False and self.wagers.look(",
        ("tests/test_context.py", "-k", "chips_on"),
    ),
    Bug(
        "every-cut-breach-its-own-incident",
        "vision/follow/delivery.py",
        "        if not first or not breaches:\n",
        "        if not breaches:\n",
        ("tests/test_context.py", "-k", "chips_on"),
    ),
    Bug(
        "one-cut-taken-for-granted",
        "vision/follow/delivery.py",
        "            if round_.live:\n                return\n",
        "",
        ("tests/test_follow.py", "-k", "inferred_from_the_delivery"),
    ),
    Bug(
        "plus-minus-4-button-ignored",
        "vision/follow/judge.py",
        "        adjust = adjust if self.ruleset.delivery_adjustment else 0",
        "        adjust = 0",
        ("tests/test_context.py", "-k", "button"),
    ),
    Bug(
        "set-up-not-read",
        "vision/follow/delivery.py",
        "        if shown and self.judge.ruleset.cut_set_up:",
        "        if False:",
        ("tests/test_context.py", "-k", "set_up"),
    ),
    Bug(
        "frame-input-in-bgr",
        "vision/detector.py",
        "    for channel, plane in enumerate(reversed(cv2.split(image))):",
        "    for channel, plane in enumerate(cv2.split(image)):",
        ("tests/test_detector.py", "-k", "opencvs_blob"),
    ),
    Bug(
        "box-decoding-softmax-over-the-anchors",
        "vision/training/quantize.py",
        'stem + "/Softmax", axis=-1',
        'stem + "/Softmax", axis=2',
        ("tests/test_quantize.py", "-k", "to_the_bit"),
    ),
    Bug(
        "tile-box-kept-on-a-plaque",
        "vision/detector.py",
        "            detections = detections[~_on_markers(detections.corners, dice, self.plaques)]",
        "            pass",
        ("tests/test_markers.py", "-k", "dropped_between"),
    ),
    Bug(
        "tile-half-over-a-button-dropped",
        "vision/detector.py",
        "    return (centred & (holding | dice[:, None])).any(-1)  # type: ignore[no-any-return]",
        "    return centred.any(-1)  # type: ignore[no-any-return]",
        ("tests/test_markers.py", "-k", "each_holds"),
    ),
    Bug(
        "stack-a-tile-short-alerted-at-once",
        "vision/follow/delivery.py",
        "        alone = len(breaches) == 1 and breaches[0].one_group_early",
        "        alone = False",
        ("tests/test_follow.py", "-k", "a_tile_short"),
    ),
    Bug(
        "any-stack-gone-a-group-early-held-for-the-count",
        "vision/follow/delivery.py",
        "            one_group = stack in cut.last_alone and (",
        "            one_group = stack in range(8) and (",
        ("tests/test_follow.py", "-k", "gone_early_is_judged"),
    ),
    Bug(
        "a-place-flanked-only-by-stacks-lying-still",
        "vision/follow/delivery.py",
        "                if _flanked(judged_at, in_view, round_.pitch):",
        "                if _flanked(judged_at, standing, round_.pitch):",
        ("tests/test_follow.py", "-k", "rules_that_cut_out"),
    ),
    Bug(
        "the-gap-boxed-long-counted-as-the-stack-standing",
        "vision/follow/delivery.py",
        "seen = [s for s in seen if s.length <= longest]",
        "seen = [s for s in seen if s.length <= 2 * longest]",
        ("tests/test_follow.py", "-k", "longer_than_its_stack"),
    ),
    Bug(
        "a-twin-photograph-told-only-unturned",
        "vision/training/real_dice.py",
        "    return [np.stack(p, 1) for a, b in quarter for p in ((a, b), (1 - a, b))]",
        "    return [np.stack((x, y), 1)]",
        ("tests/test_real_dice.py", "-k", "twin"),
    ),
    Bug(
        "a-die-read-leaning-unsure-leans-whatever-its-box",
        "vision/follow/dice.py",
        "        if flat < DICE.lean_sure",
        "        if flat < DICE.leaning_below",
        ("tests/test_follow.py", "-k", "leans_only"),
    ),
    Bug(
        "one-face-up-taken-for-the-hand",
        "vision/follow/hands.py",
        "            if len(rows) < 2 and backs[zone]:",
        "            if False:",
        ("tests/test_follow.py", "-k", "no_hand_until"),
    ),
    Bug(
        "pushed-stack-judged-at-its-row-place",
        "vision/follow/delivery.py",
        "                    seen = [s for s in still if _pushed(s.xy, place)]",
        "                    seen = []",
        ("tests/test_context.py", "-k", "pushed_stack"),
    ),
    Bug(
        "stack-at-the-rows-end-never-seen-gone",
        "vision/follow/delivery.py",
        "    open_left = not left and all(s in gone for s in range(stack))",
        "    open_left = False",
        ("tests/test_follow.py", "-k", "open_end or rules_that_cut_out"),
    ),
    Bug(
        "block-fit-weighed-on-two-sightings",
        "vision/follow/delivery.py",
        "    fits_together: int = 3",
        "    fits_together: int = 2",
        ("tests/test_follow.py", "-k", "lifted_for_another"),
    ),
    Bug(
        "one-stack-block-traced-to-two-stacks",
        "vision/follow/delivery.py",
        "    one_stack_agree: int = 2",
        "    one_stack_agree: int = 1",
        ("tests/test_follow.py", "-k", "lifted_elsewhere"),
    ),
    Bug(
        "enrolment-blind-to-a-face-of-two-makers",
        "vision/enrol.py",
        "    problems += unlike_copies(seen, rest, copy)",
        "",
        ("tests/test_enrol.py", "-k", "copies"),
    ),
    Bug(
        "enrolment-judges-a-face-held-once-as-a-pair",
        "vision/enrol.py",
        "    return SINGLE_FAR if FULL_SET[Tile.parse(face)] == 1 else LOOK_FAR",
        "    return LOOK_FAR",
        ("tests/test_enrol.py", "-k", "outside"),
    ),
    Bug(
        "box-reads-by-a-set-other-models-enrolled",
        "vision/enrol.py",
        "            np.abs(now - self.made_with).max() <= SAME_MODELS\n",
        "            True\n",
        ("tests/test_enrolment_flow.py", "-k", "other_models"),
    ),
    Bug(
        "box-showing-one-tile-never-served",
        "vision/follow/delivery.py",
        "            if block or (alone and self._in_turn(position, lone.since)):\n",
        "            if block:\n",
        ("tests/test_follow.py", "-k", "one_boxed_tile"),
    ),
    Bug(
        "lone-tile-served-out-of-turn",
        "vision/follow/delivery.py",
        "        return position == last % 8 + 1 and since > at\n",
        "        return True\n",
        ("tests/test_follow.py", "-k", "raise_what_was_injected and alone"),
    ),
    Bug(
        "unboxed-outline-not-made-convex",
        "vision/follow/unboxed.py",
        "        hull = cv2.convexHull(outline)\n",
        "        hull = outline\n",
        ("tests/test_unboxed.py", "-k", "notch"),
    ),
    Bug(
        "stale-enrolment-raises-no-alarm",
        "edge/app.py",
        "        if self.enrolment_stale is not None:\n",
        "        if False:\n",
        ("tests/test_enrolment_flow.py", "-k", "other_models"),
    ),
    Bug(
        "enrolment-blind-to-a-face-twice",
        "vision/enrol.py",
        "        problems += twins(seen) if embedding is not None else []",
        "",
        ("tests/test_enrol.py", "tests/test_enrolment_flow.py", "-k", "not_whole or doubled"),
    ),
    Bug(
        "enrolment-refuses-faces-a-set-draws-alike",
        "vision/enrol.py",
        "            if kind and excess_of[i] <= 0:",
        "            if False:",
        ("tests/test_enrol.py", "-k", "draws_alike"),
    ),
    Bug(
        "chips-at-the-markers-bar",
        "vision/detector.py",
        "        self.chips_least = np.full(len(self.chip_names), chips_confidence)",
        "        self.chips_least = np.full(len(self.chip_names), confidence)",
        ("tests/test_markers.py", "-k", "chips_come_from"),
    ),
    Bug(
        "chips-forgotten-at-the-look-between",
        "vision/detector.py",
        "                self.seen = Detections.concat([self.seen, self.stacks])\n",
        "                pass\n",
        ("tests/test_markers.py", "-k", "once_a_second"),
    ),
    Bug(
        "self-check-counts-chips-no-model-looked-for",
        "vision/selfcheck.py",
        '        if (kind == "plaque" and not markers) or (kind == "chips" and not chips):',
        '        if kind == "plaque" and not markers:',
        ("tests/test_detector.py", "-k", "self_check"),
    ),
    Bug(
        "self-check-passes-a-chips-model-that-misses-the-stacks",
        "vision/selfcheck.py",
        "            and self.chips_found >= 0.7 * self.chips\n",
        "",
        ("tests/test_detector.py", "-k", "self_check"),
    ),
    Bug(
        "enrolment-places-a-scattered-display-by-chance",
        "vision/enrol.py",
        "    return best if fits.mean() >= IN_ORDER and ruled_out.mean() <= ORDER_RULED_OUT"
        " else None",
        "    return best if fits.mean() >= IN_ORDER else None",
        ("tests/test_enrol.py", "-k", "rules_out"),
    ),
    Bug(
        "enrolment-doubts-a-reader-that-knows-the-design",
        "vision/enrol.py",
        "            if known and tile.agrees and other.agrees:\n                continue\n",
        "",
        ("tests/test_enrol.py", "-k", "no_twin"),
    ),
    Bug(
        "enrolment-refuses-a-light-tile-crowded-by-its-dark-pips",
        "vision/enrol.py",
        "    far[crowded, 0] = 0.0\n",
        "",
        ("tests/test_enrol.py", "-k", "crowding"),
    ),
    Bug(
        "enrolment-takes-a-light-tile-in-a-dark-set-for-dense-pips",
        "vision/enrol.py",
        "    crowded = (body_share >= BODY_SHARE_LEAST) & (darker > 0)",
        "    crowded = body_share >= BODY_SHARE_LEAST",
        ("tests/test_enrol.py", "-k", "crowding"),
    ),
    Bug(
        "enrolment-excuses-a-crowded-tile-whose-copy-is-not",
        "vision/enrol.py",
        "        crowded[k] = any(darker[j] >= COPY_CROWDED * darker[k] for j in copies)\n",
        "",
        ("tests/test_enrol.py", "-k", "crowding"),
    ),
    Bug(
        "enrolment-clears-a-twin-on-the-genuine-copys-reading-alone",
        "vision/enrol.py",
        "            if known and tile.agrees and other.agrees:\n",
        "            if known and tile.agrees:\n",
        ("tests/test_enrol.py", "-k", "both_tiles"),
    ),
    Bug(
        "enrolment-blind-to-a-face-read-out-of-its-place",
        "vision/enrol.py",
        "        problems += out_of_place(seen)",
        "",
        ("tests/test_enrol.py", "-k", "not_whole or read_as_another"),
    ),
    Bug(
        "enrolment-accepts-a-refused-set",
        "edge/enrolments.py",
        "        if not record.whole:",
        "        if False:",
        ("tests/test_enrolment_flow.py", "-k", "cannot_be_accepted_later"),
    ),
    Bug(
        "a-tile-read-by-the-set-alone",
        "vision/enrol.py",
        "        weight = self.weight if weight is None else weight",
        "        weight = 1.0",
        ("tests/test_enrol.py", "-k", "read_by_the_face or nearest_enrolled_face"),
    ),
    Bug(
        "the-set-outweighed-by-the-classifier-again",
        "vision/enrol.py",
        "SET_WEIGHT = 0.85",
        "SET_WEIGHT = 0.3",
        ("tests/test_enrol.py", "-k", "nearest_enrolled_face"),
    ),
    Bug(
        "a-set-the-reader-cannot-read-weighs-as-any-other",
        "vision/enrol.py",
        "    return SET_ALONE if agreement < SET_ALONE_BELOW else SET_WEIGHT",
        "    return SET_WEIGHT",
        ("tests/test_enrol.py", "-k", "reads_play_alone"),
    ),
    Bug(
        "the-enrolment-harness-measures-unrefined-boxes",
        "vision/training/enrolment.py",
        "        found = refiner.refine(rendering.image, found)",
        "        found = found",
        ("tests/test_enrol.py", "-k", "harness_boxes"),
    ),
    Bug(
        "a-tile-in-play-matched-with-the-set-by-one-end",
        "vision/enrol.py",
        "            half = embedding[:, 1]",
        "            half = embedding[:, 0]",
        ("tests/test_enrol.py", "-k", "end_to_end"),
    ),
    Bug(
        "an-unsure-tile-read-only-as-cut",
        "vision/detector.py",
        "            unsure = ~is_die & (probs[:, tiles].max(1) < bar)",
        "            unsure = ~is_die & (probs[:, tiles].max(1) < 0.0)",
        ("tests/test_detector.py", "-k", "half_round or whichever"),
    ),
    Bug(
        "a-box-out-of-play-expected-whole",
        "vision/follow/hands.py",
        "        return 0 if zone is None or played else max(4, 2 * round_.off_stacks)",
        "        return 0",
        ("tests/test_follow.py", "-k", "marked_off"),
    ),
    Bug(
        "a-hand-set-aside-not-counted-by-its-stacks",
        "vision/follow/delivery.py",
        "        extra = len(stacks) > BLOCK_STACKS\n",
        "        extra = len(stacks) > BLOCK_STACKS + 1\n",
        ("tests/test_follow.py", "-k", "counted_by_its_stacks"),
    ),
    Bug(
        "enrolment-blind-to-another-sets-look",
        "vision/enrol.py",
        "    problems += outsiders(seen, rest)",
        "",
        ("tests/test_enrol.py", "-k", "not_whole or look_lies_outside"),
    ),
    Bug(
        "a-foreign-look-judged-by-one-frame",
        "vision/follow/hands.py",
        "        return float(np.median(self.set_distances)) if self.set_distances else 0.0",
        "        return float(np.max(self.set_distances)) if self.set_distances else 0.0",
        ("tests/test_follow.py", "-k", "unlike_the_enrolled_set"),
    ),
    Bug(
        "an-unread-foreign-look-let-go",
        "vision/follow/hands.py",
        "        elif len(unread) >= ROUND.steady and np.median(unread) >= LOOK_FAR:",
        "        elif False:",
        ("tests/test_follow.py", "-k", "unlike_the_enrolled_set"),
    ),
    Bug(
        "a-foreign-look-never-judged",
        "vision/follow/hands.py",
        "        self._judge_looks(zone, watch, position, since, t, out)",
        "",
        ("tests/test_follow.py", "-k", "unlike_the_enrolled_set"),
    ),
    Bug(
        "enrolment-counts-a-box-on-the-bare-cloth",
        "vision/enrol.py",
        "    found = sized_alike(one_box_per_object(closer(image, detector)))",
        "    found = one_box_per_object(closer(image, detector))",
        ("tests/test_enrolment_flow.py", "-k", "bare_cloth"),
    ),
    Bug(
        "a-display-box-of-any-width-taken-for-a-tile",
        "vision/enrol.py",
        "TILE_LONG, TILE_SHORT, DIE_SIDE = (0.6, 1.5), (0.8, 1.25), (0.6, 1.5)",
        "TILE_LONG, TILE_SHORT, DIE_SIDE = (0.6, 1.5), (0.0, 9.0), (0.6, 1.5)",
        ("tests/test_enrol.py", "-k", "sized_as_no"),
    ),
    Bug(
        "a-box-across-two-display-tiles-counted",
        "vision/enrol.py",
        "            and covered(found.corners[i], found.corners[tiles]) < COVERED",
        "            and covered(found.corners[i], found.corners[tiles]) < 2",
        ("tests/test_enrol.py", "-k", "boxed_once"),
    ),
    Bug(
        "enrolment-boxes-its-own-cut",
        "vision/enrol.py",
        "        if cuts:\n            clear &= side",
        "        if cuts and False:\n            clear &= side",
        ("tests/test_enrol.py", "-k", "own_cut"),
    ),
    Bug(
        "a-tiles-size-judged-by-its-shortest-frame",
        "vision/follow/hands.py",
        "        return abs(float(np.median(free)) / set_side - 1)",
        "        return abs(float(np.min(free)) / set_side - 1)",
        ("tests/test_follow.py", "-k", "another_size"),
    ),
    Bug(
        "a-foreign-size-never-judged",
        "vision/follow/hands.py",
        "        self._judge_size(zone, watch, position, since, t, out)",
        "",
        ("tests/test_follow.py", "-k", "another_size"),
    ),
    Bug(
        "reuse-judges-each-copy-by-its-own-centre",
        "vision/reuse.py",
        "    taken = inside | ~(same & ~replaced).any(axis=1)\n",
        "    taken = inside\n",
        ("tests/test_reuse.py", "-k", "edge"),
    ),
    Bug(
        "reuse-keeps-a-look-s-miss-of-a-still-tile",
        "vision/reuse.py",
        "        self.lost = _lost_unchanged(before, self.kept, still, pixel)\n",
        "",
        ("tests/test_reuse.py", "-k", "lost_while_still"),
    ),
    Bug(
        "reuse-looks-again-for-a-tile-taken-away",
        "vision/reuse.py",
        "        if not seen and still[_blocks_under(corners, pixel)].all()\n",
        "        if not seen\n",
        ("tests/test_reuse.py", "-k", "lost_while_still"),
    ),
    Bug(
        "reuse-looks-again-for-an-unsure-tile-s-flicker",
        "vision/reuse.py",
        "    tiles = before[_tiles(before) & (before.confidence >= DOUBT)]\n",
        "    tiles = before[_tiles(before)]\n",
        ("tests/test_reuse.py", "-k", "lost_while_still"),
    ),
    Bug(
        "accuracy-counts-a-round-never-followed-as-quiet",
        "vision/training/accuracy.py",
        "    quiet = sum(not o.raised for o in followed)\n",
        "    quiet, followed = sum(not o.raised for o in clean), clean\n",
        ("tests/test_follow.py", "-k", "only_followed"),
    ),
    Bug(
        "a-stack-gone-early-judged-only-once-its-group-arrived",
        "vision/follow/delivery.py",
        "            before = arrivals[last - 2] if arrived else t\n",
        "            before = arrivals[last - 2] if arrived else -np.inf\n",
        ("tests/test_follow.py", "-k", "gone_early_is_judged or gone_before_a_permitted"),
    ),
    Bug(
        "block-sightings-counted-not-weighed",
        "vision/follow/delivery.py",
        "    if len(agreed) < 2 or 2 * sum(sure for _, sure, _ in agreed) <= weight:\n",
        "    if len(agreed) < 2 or 2 * len(agreed) <= len(homes):\n",
        ("tests/test_follow.py", "-k", "weigh_as_much"),
    ),
    Bug(
        "a-plaque-read-only-as-it-lies",
        "vision/detector.py",
        "        if chung.any():\n",
        "        if False:\n",
        ("tests/test_markers.py", "-k", "whichever_way"),
    ),
    Bug(
        "a-box-refined-onto-a-tile-boxed-already",
        "vision/detector.py",
        "        return refined[apart(refined.corners, refined.confidence, judged)]\n",
        "        return refined\n",
        ("tests/test_detector.py", "-k", "refined_onto"),
    ),
    Bug(
        "a-phantom-die-between-dice-counted",
        "vision/follow/dice.py",
        "    dice = _of_the_set([[s for s, _ in die] for die in dice])\n",
        "    dice = [[s for s, _ in die] for die in dice]\n",
        ("tests/test_follow.py", "-k", "pooled"),
    ),
    Bug(
        "a-block-traced-from-one-frame",
        "vision/follow/delivery.py",
        "    if len({seen for seen, _, _ in agreed}) < CUT.trace_frames:\n",
        "    if False:\n",
        ("tests/test_follow.py", "-k", "more_than_one_frame"),
    ),
    Bug(
        "a-phantom-die-in-a-display-counted",
        "vision/enrol.py",
        "        for i in np.flatnonzero(_display_dice(found, probs[:, dice_columns]))\n",
        '        for i in np.flatnonzero([label == "die" for label in found.labels])\n',
        ("tests/test_enrol.py", "-k", "fourth"),
    ),
    Bug(
        "display-dice-thinned-below-three",
        "vision/enrol.py",
        "        is_die[rows[unlike[: len(rows) - SET_DICE]]] = False\n",
        "        is_die[rows[unlike]] = False\n",
        ("tests/test_enrol.py", "-k", "three_dice"),
    ),
    Bug(
        "a-display-tile-read-from-its-crop-as-cut-alone",
        "vision/enrol.py",
        "    probs = views_agreed(np.stack(views))\n",
        "    probs = views[0]\n",
        ("tests/test_enrol.py", "-k", "every_view"),
    ),
    Bug(
        "a-display-tile-read-by-its-views-plain-mean",
        "vision/enrol.py",
        "    agreed = np.exp(np.log(np.maximum(views, VIEW_FLOOR)).mean(axis=0))\n",
        "    agreed = views.mean(axis=0)\n",
        ("tests/test_enrol.py", "-k", "most_views"),
    ),
    Bug(
        "a-face-down-tile-leaves-a-gap-in-the-display",
        "vision/enrol.py",
        "        problems += gaps(seen + face_down)  # a tile face down leaves no gap\n",
        "        problems += gaps(seen)\n",
        ("tests/test_enrol.py", "-k", "face_down_is_named"),
    ),
    Bug(
        "a-display-placed-without-its-face-down-tiles",
        "vision/enrol.py",
        "    order = best_order(found.corners[tiles], faces)\n",
        "    order = best_order(found.corners[tiles][probs[tiles, back] < FACE_DOWN],"
        " faces[probs[tiles, back] < FACE_DOWN])\n",
        ("tests/test_enrol.py", "-k", "face_down_is_named"),
    ),
    Bug(
        "a-hand-tile-missed-for-a-frame-counts-as-gone",
        "vision/follow/hands.py",
        "    missed_frames: int = 1\n",
        "    missed_frames: int = 0\n",
        ("tests/test_follow.py", "-k", "misses_now_and_then"),
    ),
    Bug(
        "any-hand-may-be-set-in-the-bank-area",
        "vision/follow/delivery.py",
        '    if zone == "bank":\n        return banker\n',
        '    if zone == "bank":\n        return None\n',
        ("tests/test_follow.py", "-k", "bank_area"),
    ),
    Bug(
        "the-row-ends-where-the-unpushed-stacks-stand",
        "vision/follow/delivery.py",
        "        if line.at(0, ahead) >= columns[0] - pitch and line.at(last, ahead) <= columns[-1]"
        " + pitch\n",
        "        if columns[0] - pitch <= line.x <= columns[-1] + pitch\n",
        ("tests/test_follow.py", "-k", "pushed_end_stack"),
    ),
    Bug(
        "a-tile-first-seen-in-flight-left-the-box-it-is-over",
        "vision/follow/delivery.py",
        '                origin = ""  # first seen in flight: it left no box we know of\n',
        "                pass\n",
        ("tests/test_follow.py", "-k", "carried_tile"),
    ),
    Bug(
        "a-tile-in-flight-is-where-its-visible-part-is-boxed",
        "vision/follow/delivery.py",
        "(t, _unhidden(xy, corners, length), sure) for",
        "(t, xy, sure) for",
        ("tests/test_follow.py", "-k", "half_hides"),
    ),
    Bug(
        "a-pushed-stack-is-judged-at-its-row-place-before-the-delivery",
        "vision/follow/delivery.py",
        "judged_at = place + np.array([0.0, round_.ahead[stack]])\n                round_.lengths",
        "judged_at = place\n                round_.lengths",
        ("tests/test_context.py", "-k", "judged_where_it_lies_pushed"),
    ),
    Bug(
        "an-unsure-stack-beyond-the-block-set-aside-is-believed-on-sight",
        "vision/follow/delivery.py",
        "if float(np.median(round_.off_extra_sure)) >= OFF_BOX.sure_extra:",
        "if True:",
        ("tests/test_follow.py", "-k", "believed_on_sight_only_when_sure"),
    ),
    Bug(
        "an-unsure-stack-beyond-the-block-set-aside-is-never-settled-by-the-count",
        "vision/follow/delivery.py",
        "if round_.off_held and not round_.off_stacks and short:",
        "if False:",
        ("tests/test_follow.py", "-k", "believed_on_sight_only_when_sure"),
    ),
    Bug(
        "a-carried-tile-pausing-a-frame-over-a-box-is-put-down-there",
        "vision/follow/delivery.py",
        "            if still >= ROUND.steady:\n",
        "            if still >= 1:\n",
        ("tests/test_follow.py", "-k", "pausing_over_a_box"),
    ),
    Bug(
        "a-swap-alert-at-a-box-not-swapped-goes-uncounted",
        "vision/training/accuracy.py",
        "    return sorted(named - set(swapped or ()))\n",
        "    return []\n",
        ("tests/test_follow.py", "-k", "swap_alerts_at_boxes"),
    ),
    Bug(
        "a-foreign-tile-with-a-box-out-of-play-counted-unseeable",
        "vision/training/accuracy.py",
        "    return all(count <= FULL_SET[face] for face, count in shown.items())\n",
        "    return True\n",
        ("tests/test_follow.py", "-k", "foreign_tile_doubled_only"),
    ),
    Bug(
        "a-stack-missed-now-and-then-counts-as-gone",
        "vision/follow/delivery.py",
        "                round_.empty_since.pop(stack, None)  # boxed there, not yet still: not"
        " empty\n",
        "                pass\n",
        ("tests/test_follow.py", "-k", "frames_running"),
    ),
    Bug(
        "a-swap-emptying-a-stack-early-counted-unseeable",
        "vision/training/accuracy.py",
        "    return emptied_by(right) == emptied_by(plan.grid)\n",
        "    return True\n",
        ("tests/test_follow.py", "-k", "flat_to_trace"),
    ),
    Bug(
        "a-tile-box-stretched-by-its-neighbour-measured",
        "vision/follow/hands.py",
        "        pressed[in_hands] = _pressed(self.locate.on_cloth(seen.corners[in_hands]))\n",
        "        pass\n",
        ("tests/test_follow.py", "-k", "another_size"),
    ),
    Bug(
        "a-short-hands-box-never-looked-at",
        "vision/follow/hands.py",
        "        if self.image is None or not searching or not round_.tile_sizes:\n",
        "        if True:\n",
        ("tests/test_follow.py", "-k", "no_model_boxed"),
    ),
    Bug(
        "an-object-of-any-shape-taken-for-a-tile",
        "vision/follow/unboxed.py",
        "            and fill >= UNBOXED.fill\n",
        "            and fill >= 0.0\n",
        ("tests/test_unboxed.py",),
    ),
    Bug(
        "a-tile-against-a-plaque-measured",
        "vision/follow/hands.py",
        "against = [i for i in in_hands if _against_a_plaque(seen.corners[i], self.plaques)]",
        "against: list[int] = []",
        ("tests/test_follow.py", "-k", "another_size"),
    ),
    Bug(
        "a-crop-to-scale-sized-by-its-box",
        "vision/crops.py",
        "width, length = view or ((DIE_VIEW_MM, DIE_VIEW_MM) if die else TILE_VIEW_MM)",
        "width, length = view or ((DIE_VIEW_MM, DIE_VIEW_MM) if die else tuple(\n"
        "        np.linalg.norm(on_cloth[[1, 2]] - on_cloth[[0, 1]], axis=1) * TILE_MARGIN))",
        ("tests/test_detector.py", "-k", "cloths_scale"),
    ),
    Bug(
        "going-on-asks-the-decoding-bins-of-the-file",
        "vision/training/train.py",
        "    built = {k for k in shapes if k.endswith(DECODING_BINS)}",
        "    built: set[str] = set()",
        ("tests/test_train.py", "-k", "holds_every_parameter"),
    ),
    Bug(
        "recolouring-turns-the-red-pips-cyan",
        "vision/training/recolour.py",
        "    lab = cv2.cvtColor(image, cv2.COLOR_RGB2LAB)\n",
        "    return 255 - image  # type: ignore[no-any-return]\n"
        "    lab = cv2.cvtColor(image, cv2.COLOR_RGB2LAB)\n",
        ("tests/test_recolour.py", "-k", "lightness"),
    ),
    Bug(
        "the-small-one-drawn-on-one-dark-family-alone",
        "vision/synth/appearance.py",
        '            one=("large-centre", "small-near-end"),\n'
        '            six_red=("column", "middle-row"),',
        '            one=("large-centre",),\n            six_red=("column", "middle-row"),',
        ("tests/test_appearance.py", "-k", "design_left_out"),
    ),
    Bug(
        "reader-crops-cut-of-faces-off-the-frame",
        "vision/training/train.py",
        "    return bool(inside >= READ_IN_FRAME * area)\n",
        "    return bool(inside >= 0.1 * READ_IN_FRAME * area)\n",
        ("tests/test_train.py", "-k", "over_the_frames_edge"),
    ),
    Bug(
        "the-miner-keeps-the-readers-misreads-as-plain-backs",
        "vision/training/train.py",
        "                if face >= HARD_FACE:\n",
        "                if face > 1.0:\n",
        ("tests/test_train.py", "-k", "mined_as_misreads"),
    ),
    Bug(
        "the-reader-trained-on-crops-cut-to-half",
        "vision/training/train.py",
        "READER_CROP_SCALE = 0.1\n",
        "READER_CROP_SCALE = 0.5\n",
        ("tests/test_train.py", "-k", "crops_away"),
    ),
)


def misplaced(bugs: Sequence[Bug], tree: Path = ROOT) -> list[str]:
    """Each bug whose file no longer holds its original line exactly once: checked before any
    bug is planted, so a refactor that moves a line fails the run at once, not ten minutes in."""
    return [
        f"{bug.name}: {bug.path} no longer holds its line once"
        for bug in bugs
        if (tree / bug.path).read_text().count(bug.original) != 1
    ]


def plant(tree: Path, bug: Bug) -> str:
    """Apply the bug in the copy; return the file's text to restore."""
    path = tree / bug.path
    text = path.read_text()
    if text.count(bug.original) != 1:
        raise SystemExit(f"planted_bugs: {bug.name}: {bug.path} no longer holds its line once")
    path.write_text(text.replace(bug.original, bug.planted))
    return text


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--list", action="store_true", help="say what is planted, run nothing")
    parser.add_argument("names", nargs="*", help="plant only these bugs (default: all)")
    args = parser.parse_args()
    unknown = set(args.names) - {bug.name for bug in BUGS}
    if unknown:
        parser.error(f"no planted bug named {', '.join(sorted(unknown))} (see --list)")
    bugs = [bug for bug in BUGS if not args.names or bug.name in args.names]
    if args.list:
        for bug in bugs:
            print(f"{bug.name:38} {bug.path:28} {' '.join(bug.tests)}")
        return 0
    stale = misplaced(bugs)
    if stale:
        print("\n".join(f"planted_bugs: {line}" for line in stale), file=sys.stderr)
        return 2
    tracked = subprocess.run(
        ["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=True
    ).stdout.split(b"\0")
    survived = []
    with tempfile.TemporaryDirectory(prefix="planted-") as scratch:
        tree = Path(scratch)
        for name in filter(None, tracked):
            source, copy = ROOT / name.decode(), tree / name.decode()
            if source.is_file():
                copy.parent.mkdir(parents=True, exist_ok=True)
                shutil.copy2(source, copy)
        env = {**os.environ, "PYTHONPATH": str(tree)}
        for number, bug in enumerate(bugs, start=1):
            started = time.perf_counter()
            original = plant(tree, bug)
            try:
                run = subprocess.run(
                    [sys.executable, "-m", "pytest", "-x", "-q", "-n", "0", "-p",
                     "no:cacheprovider", *bug.tests],
                    cwd=tree, env=env, capture_output=True, text=True, timeout=600, check=False,
                )  # fmt: skip
            finally:
                (tree / bug.path).write_text(original)
            caught = run.returncode == 1  # tests ran and failed (5: none collected, 2+: broken)
            verdict = "caught" if caught else f"SURVIVED (pytest exit {run.returncode})"
            took = time.perf_counter() - started
            print(f"[{number}/{len(bugs)}] {bug.name}: {verdict} ({took:.0f} s)", flush=True)
            if not caught:
                survived.append(bug.name)
                print(run.stdout[-2000:], file=sys.stderr)
    print(f"planted bugs: {len(bugs) - len(survived)} caught, {len(survived)} survived")
    return 1 if survived else 0


if __name__ == "__main__":
    raise SystemExit(main())
