"""The round follower: one per table camera, fed each analysed frame, raising alerts as soon as
their evidence is steady and the round's record when the table clears."""

from __future__ import annotations

from collections import deque
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import NamedTuple

import numpy as np
from numpy.typing import NDArray

from rules import CUTS, CutChoice, bank_shown, find_ruleset
from vision.detections import Detections
from vision.follow.base import (
    DEALING,
    HAND_ZONES,
    PLAYER_ZONES,
    ROUND,
    K,
    Phase,
    Raised,
    Round,
    Steady,
    Streak,
)
from vision.follow.delivery import ARRIVAL, CUT, DeliveryPhase, Track
from vision.follow.dice import DicePhase
from vision.follow.exposure import ExposurePhase, FaceTrack, _follow_faces
from vision.follow.hands import HandsPhase
from vision.follow.judge import Judge, permitted_choices
from vision.follow.records import HandRecord, RoundRecord
from vision.follow.view import View
from vision.labels import ADJUST, CHUNG_BANKER, CHUNG_CO, CONTEXT, MARKERS, OFF, WAGER
from vision.table import Locate, TableConfig

OFF_GONE_LOOKS = 10
"""Looks for markers running (one every `MARKER_EVERY_S`, 0.5 s) that must miss the "Off" button
before its box counts as back in play: 5 s of video. From pixels a look misses or misreads the
button now and then (a hand played on its box can cover it for the whole exposure, rounds
990193 and 990217), and a box comes back between rounds, not within one (NZ 12.11); the round
in progress keeps the box it took before its delivery (`_take`)."""

WAGER_GONE_LOOKS = 10
"""Looks for context markers running that must miss a box's chips before its wager counts as
gone: a hand or the dealer's arm over the chips hides them a moment, and wagers are taken away
at payment, long after the round's context was taken (before its delivery)."""
WAGER_REACH = 300.0
"""Table mm from a box's hand zone's centre within which chips are that box's wager: the
betting box lies 220 mm beyond the hand spot on the standard layout, the next box's hand spot
380 mm or more from it."""

PLAQUE_LOOKS = 4
"""Looks for markers (one every `MARKER_EVERY_S`, 0.5 s) whose plaques are kept as lying where
they were seen: a look finds a plaque about 93% of the time (318 of 342 held-out plaques at the
marker detector's bar), so one look alone would leave a plaque out now and then, and a tile
against it would be measured (`hands._against_a_plaque`), the plaque taken for an object of a
tile's size that no model boxed (`unboxed`: a chung is 80 x 32 mm); four running all miss it
about once in 40,000 times."""


@dataclass(frozen=True)
class Announcement:
    """A round's context as the pit announces it (`edge.messages.Announce`): who banks, the
    banker's box, the cut and its options. What it leaves unset stays as `table.yaml` has it."""

    bank: str | None = None
    banker: int | None = None
    cut: str | None = None
    cut_options: Mapping[str, str] = field(default_factory=dict)


class Chung(NamedTuple):
    """Where the chung lies and whether its face up says co-banker (NZ 3.3(f))."""

    box: int
    co: bool


class RoundFollower(DicePhase, DeliveryPhase, ExposurePhase, HandsPhase):
    """Follows rounds at one table; one instance per camera."""

    def __init__(
        self,
        table: TableConfig,
        run: str = "live",
        cut: str | None = None,
        cut_options: Mapping[str, str] | None = None,
    ) -> None:
        self.table = table
        self.run = run
        self.locate = Locate(table)
        self.standing = Announcement(cut=cut, cut_options=dict(cut_options or {}))
        """What holds for every round (`paigow replay --cut`); the pit's word holds for one."""
        self.announced: Announcement | None = None
        self.chung: Steady[Chung | None] = Steady(ROUND.steady, None)
        """The chung as last seen steadily on a box: it holds until seen elsewhere."""
        self.adjust: Steady[int] = Steady(ROUND.steady, 0)
        """A player/banker's +4 or -4 as its button shows it (NZ 9.6-9.7): for the round."""
        self.off: Steady[int | None] = Steady(ROUND.steady, None)
        """The box an "Off" button lies on: it holds until the button is seen on another box,
        or not seen for `OFF_GONE_LOOKS` looks running (NZ 12.11: the box back in play)."""
        self.off_gone = Streak(OFF_GONE_LOOKS)
        self.wagers = Wagers(self.locate)
        """The boxes holding a wager: with the chung, who banks (`rules.bank_shown`)."""
        self.bank: str | None = None
        self.banker_known = "configured"
        self.bank_known = "configured"
        self._take(self.standing)
        self.round: Round | None = None
        self.rounds = 0
        self.image: NDArray[np.uint8] | None = None
        self.plaques = np.zeros((0, 4, 2))
        self.looks: deque[NDArray[np.float64]] = deque(maxlen=PLAQUE_LOOKS)
        """The markers' boxes at each of the last looks that found any."""
        self.stacks_before: deque[list[NDArray[np.float64]]] = deque(maxlen=CUT.still_frames - 1)
        self.faces: list[FaceTrack] = []
        self.start = Streak(ROUND.steady)
        self.midway = Streak(ROUND.steady)
        self.idle = Streak(30)
        self.to_dice = Streak(ROUND.steady)
        self.to_setting = Streak(10)
        self.to_exposure = Streak(2)
        self.to_close = Streak(5)
        self.arrivals = {zone: Streak(ARRIVAL.block_frames) for zone in PLAYER_ZONES}
        self.lone_arrivals = {zone: Streak(ARRIVAL.lone_frames) for zone in PLAYER_ZONES}
        self.carried: list[Track] = []

    def announce(self, announcement: Announcement) -> None:
        """The pit's word for the next round: it holds from the round's start (or at once, if
        the round in progress has not begun its delivery) to its end, and overrides what the
        box would infer; a delivery that contradicts an announced cut is `wrong-cut-order`."""
        self.announced = announcement
        self._retake()

    def _retake(self) -> None:
        """The round in progress takes its context anew while its delivery has not begun."""
        round_ = self.round
        if round_ is None or round_.phase not in (Phase.SHUFFLE, Phase.DICE) or round_.served:
            return
        self._take(self.announced or self.standing)
        round_.live = list(range(len(self.judge.views)))
        if round_.dice:
            round_.required_first = self.judge.first_position(round_.dice, self.adjust.value)

    def _watch_markers(self, t: float, markers: Detections) -> None:
        """The context markers seen this frame: the chung, and a +4 or -4 button."""
        chung = np.array([m in (CHUNG_BANKER, CHUNG_CO) for m in markers.labels], bool)
        self._watch_chung(t, markers[chung])
        self._watch_adjust(t, markers)
        self._watch_off(t, markers)
        if self.wagers.look(markers[np.array([m == WAGER for m in markers.labels], bool)], t):
            self._retake()

    def _watch_off(self, t: float, markers: Detections) -> None:
        """An "Off" button seen on a box: that box's hand is to be set aside unplayed (NZ 12.10,
        MBS 5.6.1, 3.12). Two on the table (only one box is removed): nothing to go by."""
        boxes = {int(zone[1:]) for label, zone in zip(markers.labels, markers.zones, strict=True)
                 if label == OFF and zone in PLAYER_ZONES}  # fmt: skip
        if len(boxes) > 1:
            self.off.lose(t)
            return
        if boxes:
            self.off_gone.update(False, t)
            taken = self.off.see(boxes.pop(), t)
        elif self.off_gone.update(True, t):  # missed for `OFF_GONE_LOOKS` looks: taken away
            taken = self.off.value is not None
            self.off.reset(None)
        else:  # a look that misses the button is no sign it was taken away
            self.off.lose(t)
            return
        if taken:
            self._retake()

    def _watch_adjust(self, t: float, markers: Detections) -> None:
        """A +4 or -4 button seen on the table: the first position moves by it (NZ 9.6-9.7), once
        seen the same `ROUND.steady` frames running, for the round in progress (before its
        delivery begins). It holds for that round only: the next takes it again if it is still
        there."""
        shown = {ADJUST[label] for label in markers.labels if label in ADJUST}
        if self.adjust.see(shown.pop() if len(shown) == 1 else 0, t):  # both: nothing to go by
            self._retake()

    def _watch_chung(self, t: float, markers: Detections) -> None:
        """The chung seen on a box: the banker's box, and a co-bank where its face says so. It
        counts once seen in the same box with the same face `ROUND.steady` frames running; the
        round in progress takes it as an announcement would (before its delivery begins)."""
        on_box = [(label, zone) for label, zone in zip(markers.labels, markers.zones, strict=True)
                  if zone in PLAYER_ZONES]  # fmt: skip
        if len(on_box) != 1:  # none on a box, or two chungs: nothing to go by
            self.chung.lose(t)
            return
        label, zone = on_box[0]
        if self.chung.see(Chung(int(zone[1:]), label == CHUNG_CO), t):
            self._retake()

    def _take(self, said: Announcement) -> None:
        """The round's context: the bank, the banker's box and the cuts the delivery is checked
        against, from what was announced and otherwise from `table.yaml`."""
        table, chung = self.table, self.chung.value
        self.in_force = said
        self.off_box = self.off.value
        shown = bank_shown(find_ruleset(table.rules), table.banker, chung, self.wagers.held,
                           self.wagers.capital)  # fmt: skip
        seen_bank = shown.bank.value if shown.bank is not None else None
        self.bank = said.bank or seen_bank or table.bank
        self.bank_known = "announced" if said.bank else "seen" if seen_bank else "configured"
        banker = said.banker or (chung.box if chung else None) or table.banker
        self.banker_known = "announced" if said.banker else "seen" if chung else "configured"
        if said.cut is not None:  # announced: the one cut the delivery is checked against
            choices: tuple[CutChoice, ...] = (
                CutChoice(said.cut, CUTS[said.cut].options(**said.cut_options)),
            )
            self.cut_known = "announced"
        else:
            default = CutChoice(table.cut, CUTS[table.cut].options(**table.cut_options))
            permitted = permitted_choices(table.rules, self.bank, [table.cut, *table.cuts])
            choices = (default, *(c for c in permitted if c != default))
            self.cut_known = "configured" if len(choices) == 1 else "inferred"
        self.judge = Judge(table.rules, banker, choices)

    def follow(
        self, t: float, detections: Detections, image: NDArray[np.uint8] | None = None
    ) -> list[Raised]:
        """Take one analysed frame (detections in image pixels); return what it raised."""
        self.image = image
        markers = np.array([label in CONTEXT for label in detections.labels], bool)
        if markers.any():
            plaques = np.array([label in MARKERS for label in detections.labels], bool)
            self.looks.append(detections.corners[plaques])
            self.plaques = np.concatenate(self.looks)
            self._watch_markers(t, self.locate.locate(detections[markers]))
            detections = detections[~markers]
        seen = self.locate.locate(detections)
        out: list[Raised] = []
        view = View.of(seen, self.table)
        previous = list(self.stacks_before)
        self.stacks_before.append(view.stack_xy)
        current = self.round
        dealing = current is not None and bool(current.dice) and current.phase in DEALING
        sightings = view.faces_xy + view.unread_while(dealing)
        self.faces = _follow_faces(self.faces, sightings, [xy for xy, _, _ in view.backs_xy], t)
        if current is None:
            self._maybe_start(t, view)
            current = self.round
            if current is None:
                return out
        if self.idle.update(view.tiles == 0 and view.dice == 0, t):
            return self._close(t, out, abandoned=current.phase != Phase.EXPOSURE)
        phase = current.phase
        if phase == Phase.SHUFFLE or (phase == Phase.DICE and not current.dice):
            washing = phase == Phase.SHUFFLE and not view.dice
            self._watch_exposed(t, K.EXPOSED_TILE_STACKING, out, dice_area=washing)
        elif phase in (Phase.DICE, Phase.DELIVERY, Phase.SETTING):  # dice read: dealing is on
            from_stacks = phase != Phase.SETTING and bool(view.backs.get("stack"))
            self._watch_exposed(t, K.EXPOSED_TILE_DEALING, out, quick=from_stacks)
        if phase in (Phase.SHUFFLE, Phase.DICE, Phase.DELIVERY) and current.watch_dice:
            self._watch_dice(t, view, out)
        if phase == Phase.SHUFFLE and self.to_dice.update(view.dice >= 1, t):
            self._enter(Phase.DICE, self.to_dice.since)
        if phase == Phase.DICE:
            self._note_columns(view)
            if any(view.backs.get(z, 0) for z in PLAYER_ZONES):
                self._enter(Phase.DELIVERY, t)
                self._read_set_up()
                phase = Phase.DELIVERY
        if phase in (Phase.DICE, Phase.DELIVERY) and current.places:
            self._note_flight(t, view)
            self._note_standing(t, view, previous)
        if phase == Phase.DELIVERY:
            self._watch_delivery(t, view, out)
            if self.to_setting.update(view.backs.get("stack", 0) == 0 and view.loose == 0, t):
                self._enter(Phase.SETTING, self.to_setting.since)
        if phase in (Phase.DELIVERY, Phase.SETTING):
            self._watch_carried(t, view, out)
            self._count_off_box(t, view, out)
        # A hand turned face up ends the setting, and the delivery too where a stray box kept
        # the follower from seeing it end (a tile exposed while dealing is one face, not two).
        dealt = phase == Phase.SETTING or (phase == Phase.DELIVERY and not view.backs.get("stack"))
        if dealt and self.to_exposure.update(
            max((view.faces.get(z, 0) for z in HAND_ZONES), default=0) >= 2, t
        ):
            self._enter(Phase.EXPOSURE, self.to_exposure.since)
            phase = Phase.EXPOSURE
        if phase == Phase.EXPOSURE:
            self._watch_hands(t, seen, out)
            if self.to_close.update(view.hand_tiles == 0, t):
                return self._close(t, out, abandoned=False)
        return out

    def finish(self, t: float) -> list[Raised]:
        """The video ended: close the round in progress (abandoned unless it was exposed)."""
        if self.round is None:
            return []
        return self._close(t, [], abandoned=self.round.phase != Phase.EXPOSURE)

    def _maybe_start(self, t: float, view: View) -> None:
        washing = view.loose >= ROUND.washing
        if self.start.update(
            view.tiles >= 12 and (view.hand_tiles <= 2 or washing) and view.dice == 0, t
        ):
            self._open(self.start.since, complete=True, phase=Phase.SHUFFLE)
            return
        if not self.midway.update((view.dice >= 1 or view.hand_tiles >= 4) and not washing, t):
            return
        hand_faces = sum(view.faces.get(z, 0) for z in HAND_ZONES)
        if hand_faces >= 2:
            phase = Phase.EXPOSURE
        elif view.hand_tiles and view.backs.get("stack", 0) == 0:
            phase = Phase.SETTING
        elif view.hand_tiles:
            phase = Phase.DELIVERY
        else:
            phase = Phase.DICE
        self._open(self.midway.since, complete=False, phase=phase)
        round_ = self.round
        assert round_ is not None
        if phase != Phase.DICE:  # its dice and deliveries were missed: nothing to check them by
            round_.watch_dice = False
            round_.served = {int(z[1:]): t for z in PLAYER_ZONES if view.backs.get(z, 0)}

    def _open(self, t: float, *, complete: bool, phase: Phase) -> None:
        self._take(self.announced or self.standing)
        self.rounds += 1
        self.round = Round(self.rounds, t, complete, phase, {phase.value: t})
        self.round.live = list(range(len(self.judge.views)))
        for streak in (
            self.idle,
            self.to_dice,
            self.to_setting,
            self.to_exposure,
            self.to_close,
            *self.arrivals.values(),
            *self.lone_arrivals.values(),
        ):
            streak.count = 0

    def _enter(self, phase: Phase, t: float) -> None:
        assert self.round is not None
        self.round.phase = phase
        self.round.phases.setdefault(phase.value, t)

    def _cut_record(self, round_: Round) -> dict[str, object]:
        """The cut the round was dealt with as far as the camera could tell: of the permitted
        views the delivery never broke, the one whose stacks were seen standing as it says
        (`_stacks_missed`; the table's own cut first among equals), how it is known, and every
        other permitted choice that fits as well, likeliest first."""
        views = self.judge.views
        fitting = round_.live if round_.reference is None else [round_.reference]
        missed = {index: self._stacks_missed(views[index]) for index in fitting}
        fitting = sorted(fitting, key=lambda index: missed[index])  # stable: the table's first
        choices = [c for index in fitting for c in views[index].choices]
        known = self.cut_known
        told_apart = len(fitting) == 1 or (
            missed[fitting[0]] + CUT.told_apart <= missed[fitting[1]]
        )
        if known in ("inferred", "seen") and (not told_apart or not round_.traced):
            known = "undecided"  # cuts fit alike, or no delivery was seen
        if told_apart:  # only the choices no camera above could tell from it
            choices = list(views[fitting[0]].choices)
        return {
            "cut": choices[0].cut,
            "cut_options": choices[0].as_dict(),
            "cut_known": known,
            "cut_alternatives": [str(c) for c in choices[1:]],
            "cut_breached": sorted(round_.cut_breached),
            "set_up": sorted(s + 1 for s in round_.set_up or ()),
        }

    def _judge_set(self, t: float, out: list[Raised]) -> None:
        """The set counted (`HandsPhase`), a stack at the box out of play and a cut breach held
        for that count settled before it and after it."""
        round_ = self.round
        assert round_ is not None
        aside = self._set_aside()  # four, or none: a held stack does not count yet
        self._settle_off_box(bool(aside) and sum(round_.faces_seen.values()) < 32 - aside, t, out)
        super()._judge_set(t, out)
        self._settle_held(t, out)

    def _close(self, t: float, out: list[Raised], *, abandoned: bool) -> list[Raised]:
        round_ = self.round
        assert round_ is not None
        if not abandoned and not round_.closed_checks:
            self._judge_set(t, out)
        self._settle_held(t, out)  # an abandoned round is never counted: nothing explains it
        hands: dict[str, HandRecord] = {}
        settings = {}
        for zone, watch in round_.watches.items():
            if watch.final is None:
                continue
            hand = watch.final
            position = self._position(zone)
            record: dict[str, object] = {"tiles": list(hand.tiles)}
            if hand.setting is not None:
                settings[position] = hand.setting
                record["high"] = [str(x) for x in hand.setting.high.tiles]
                record["low"] = [str(x) for x in hand.setting.low.tiles]
                try:
                    check = self.judge.house_way(hand.setting)
                    record["house_way"] = check.is_house_way
                    record["house_way_setting"] = str(check.expected)
                except ValueError:  # two of a face a set holds once
                    pass
            else:
                record["high"], record["low"] = list(hand.groups[0]), list(hand.groups[1])
            hands[str(position)] = HandRecord.model_validate(record)
        outcomes = {}
        banker = self.judge.banker
        bank = settings.get(banker)
        if bank is not None:
            for position, setting in settings.items():
                if position != banker:
                    try:
                        outcomes[str(position)] = self.judge.outcome(setting, bank)
                    except ValueError:
                        continue
        record_ = RoundRecord(
            round_id=self._round_id(),
            table_id=self.table.table_id,
            rules=self.table.rules,
            banker=banker,
            banker_known=self.banker_known,
            bank=self.bank,
            bank_known=self.bank_known,
            adjust=self.adjust.value if self.judge.ruleset.delivery_adjustment else 0,
            off_box=self.off_box,
            started_s=round(round_.started_s, 3),
            ended_s=None if abandoned else round(t, 3),
            complete=round_.complete and not abandoned,
            phases={k: round(v, 3) for k, v in round_.phases.items()},
            dice=round_.dice,
            dice_flat=round_.dice_flat,
            **self._cut_record(round_),
            required_first_position=round_.required_first,
            first_position=round_.first_seen,
            hands=hands,
            outcomes=outcomes,
            alerts=[a.id for a in round_.alerts],
        )
        out.append(Raised(record_))
        self.round = None
        self.adjust.reset(0)  # a button still there is taken again
        if self.announced is self.in_force:  # the pit's word held for this round
            self.announced = None
        self.start.count = self.midway.count = 0
        return out


class Wagers:
    """The boxes holding a wager, and whether a player-banker's capital lies in the centre
    circle, as the looks for context markers show chips. A place counts once its chips were
    seen `ROUND.steady` looks running, and stops once they were missed `WAGER_GONE_LOOKS` looks
    running. `capital` is None where the table's calibration has no centre circle."""

    def __init__(self, locate: Locate) -> None:
        zones = locate.zones
        self.centres = np.array([zones[z].mean(axis=0) for z in PLAYER_ZONES])
        self.locate = locate
        self.held: frozenset[int] = frozenset()
        self.capital: bool | None = None if locate.table.capital_area is None else False
        places = range(9)  # the boxes 1-8, and 0: the centre circle
        self.seen = {place: Streak(ROUND.steady) for place in places}
        self.missed = {place: Streak(WAGER_GONE_LOOKS) for place in places}

    def look(self, chips: Detections, t: float) -> bool:
        """Take one look's chips (located); whether the boxes holding a wager or the capital
        changed."""
        places = set()
        in_circle = self.locate.in_centre_circle(chips.table_xy)
        for xy, capital in zip(chips.table_xy, in_circle, strict=True):
            distance = np.linalg.norm(self.centres - xy, axis=1)
            if capital:
                places.add(0)
            elif distance.min() <= WAGER_REACH:
                places.add(int(distance.argmin()) + 1)
        held = set(self.held) | ({0} if self.capital else set())
        for place in self.seen:
            if self.seen[place].update(place in places, t):
                held.add(place)
            if self.missed[place].update(place not in places, t):
                held.discard(place)
        capital = None if self.capital is None else 0 in held
        held.discard(0)
        changed = held != self.held or capital != self.capital
        self.capital = capital
        self.held = frozenset(held)
        return changed
