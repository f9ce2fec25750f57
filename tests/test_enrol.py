"""Enrolment of a table's own set from its opening display (`vision.enrol`), the simulator's
displays (`vision.synth.display`), and reading by the set."""

from __future__ import annotations

import math
from dataclasses import replace

import numpy as np
import pytest

from vision.detections import Detections, polygon_iou
from vision.enrol import (
    DISPLAY_ORDER,
    FACE_NAMES,
    KNOWN_DESIGN,
    PLACE_RULED_OUT,
    RANK_OF_PLACE,
    SET_ALONE,
    SET_WEIGHT,
    KnownSet,
    SeenTile,
    assign_faces,
    best_order,
    clear_of_cut,
    enrol_seen,
    look_distance,
    one_box_per_object,
    orders,
    set_weight,
    sized_alike,
    strangers,
    twins,
)

NAMES = {i: n for i, n in enumerate((*FACE_NAMES, "back", *(f"die-{v}" for v in range(1, 7))))}
WIDTH, LENGTH, GAP = 18.0, 45.0, 5.0


def tile_corners(x: float, y: float, turn: float) -> np.ndarray:
    """A tile's box in image pixels, its long side along `turn` + 90 degrees."""
    half = np.array([[-WIDTH, -LENGTH], [WIDTH, -LENGTH], [WIDTH, LENGTH], [-WIDTH, LENGTH]]) / 2
    c, s = math.cos(turn), math.sin(turn)
    return half @ np.array([[c, s], [-s, c]]) + [x, y]


def laid(per_row: int, turn: float, from_right: bool, from_far: bool) -> np.ndarray:
    """32 boxes as a dealer lays them, row by row, in the order laid."""
    boxes = []
    rows = 32 // per_row
    for k in range(32):
        row, column = divmod(k, per_row)
        column = per_row - 1 - column if from_right else column
        row = rows - 1 - row if from_far else row
        along, across = column * (WIDTH + GAP), row * (LENGTH + 2 * GAP)
        c, s = math.cos(turn), math.sin(turn)
        boxes.append(tile_corners(500 + along * c - across * s, 400 + along * s + across * c, turn))
    return np.array(boxes)


def readings(faces: list[str], right: float, rng: np.random.Generator) -> np.ndarray:
    """Reader probabilities over the 21 faces: the true face likeliest for a share `right` of
    the tiles, some other face for the rest."""
    probs = rng.dirichlet(np.ones(21) * 0.3, len(faces)) * 0.3
    for row, face in enumerate(faces):
        wrong = FACE_NAMES[int(rng.integers(21))] if rng.random() > right else face
        probs[row, FACE_NAMES.index(wrong)] += 0.7
    return probs / probs.sum(1, keepdims=True)


@pytest.mark.parametrize("per_row", [8, 32], ids=["rows", "a line"])
@pytest.mark.parametrize("turn", [0.0, 0.3, math.pi / 2 + 0.1], ids=["square", "turned", "across"])
@pytest.mark.parametrize(
    ("from_right", "from_far"), [(False, False), (True, False), (False, True), (True, True)]
)
def test_the_order_laid_is_found_whichever_corner_it_starts_from(
    per_row: int, turn: float, from_right: bool, from_far: bool
) -> None:
    boxes = laid(per_row, turn, from_right, from_far)
    shuffled = np.random.default_rng(1).permutation(32)
    found = [shuffled[o].tolist() for o in orders(boxes[shuffled])]
    assert list(range(32)) in found


@pytest.mark.parametrize("right", [1.0, 0.7, 0.5])
def test_a_reader_that_reads_half_the_faces_still_places_every_tile(right: float) -> None:
    rng = np.random.default_rng(7)
    faces = list(DISPLAY_ORDER)
    faces[22], faces[23] = faces[23], faces[22]  # 3-6 laid before 4-5: either order is right
    boxes = laid(8, 0.2, True, False)
    probs = readings(faces, right, rng)
    probs[22, FACE_NAMES.index("3-6")] += 1.0  # the mixed pair's order is told by reading
    order = best_order(boxes, probs / probs.sum(1, keepdims=True))
    assert order is not None
    assert assign_faces(order, probs / probs.sum(1, keepdims=True)) == faces


def test_tiles_in_no_order_of_rank_are_read_not_placed() -> None:
    rng = np.random.default_rng(3)
    faces = list(rng.permutation(DISPLAY_ORDER))
    assert best_order(laid(8, 0.0, False, False), readings(faces, 0.9, rng)) is None


def surely(faces: list[str]) -> np.ndarray:
    """A reader sure of each tile's face: every other face all but ruled out."""
    probs = np.full((len(faces), 21), 0.0005 / 20)
    for row, face in enumerate(faces):
        probs[row, FACE_NAMES.index(face)] = 0.9995
    return probs


def out_of_rank(count: int) -> list[str]:
    """The display order with its last `count` tiles moved along, each to a place of another
    rank."""
    rest = DISPLAY_ORDER[32 - count :]
    moved = list(DISPLAY_ORDER[: 32 - count]) + list(rest[5:] + rest[:5])
    assert all(moved[p] not in RANK_OF_PLACE[p] for p in range(32 - count, 32))
    return moved


@pytest.mark.parametrize(
    ("read", "placed"),
    [
        (list(DISPLAY_ORDER), True),
        (out_of_rank(8), True),  # a quarter read surely as other faces: a design not known
        (out_of_rank(24), False),  # a quarter fits by chance, the rest are ruled out
    ],
    ids=["read as laid", "a quarter misread", "three quarters out of place"],
)
def test_an_order_whose_places_the_reader_mostly_rules_out_is_not_the_layout(
    read: list[str], placed: bool
) -> None:
    order = best_order(laid(8, 0.0, False, False), surely(read))
    assert (order is not None) == placed


def seen(
    faces: list[str],
    *,
    dice: int = 3,
    like: dict[int, str] | None = None,
    body: dict[int, tuple[int, int, int]] | None = None,
    read_as: dict[int, tuple[str, float]] | None = None,
    die_as: dict[int, tuple[float, float]] | None = None,
    face_down: dict[int, float] | None = None,
) -> Detections | tuple:  # type: ignore[type-arg]
    """What a reader would make of a display of `faces` (read right, but a tile in `read_as`
    read as that face, leaving its own face that chance): detections, class probabilities,
    embeddings (each face its own direction, a tile in `like` looking like another face's) and
    crops (a black body, or `body`'s colour); a die in `die_as` boxed at that share of the
    others' side and read that sure; a tile in `face_down` read as a back that sure."""
    rng = np.random.default_rng(5)
    boxes = laid(8, 0.0, False, False)[: len(faces)]
    die_boxes = [tile_corners(900 + 40 * k, 300, 0.0) / [1, 2.5] for k in range(dice)]
    for k, (share, _) in (die_as or {}).items():
        centre = die_boxes[k].mean(axis=0)
        die_boxes[k] = centre + (die_boxes[k] - centre) * share
    corners = np.concatenate([boxes, np.array(die_boxes).reshape(-1, 4, 2)])
    labels = ("tile",) * len(faces) + ("die",) * dice
    probs = np.zeros((len(labels), len(NAMES)), np.float32)
    directions = np.linalg.qr(rng.normal(size=(64, 64)))[0][:21]
    vectors = np.zeros((len(labels), 2, 64), np.float32)
    crops = []
    for row, face in enumerate(faces):
        probs[row, FACE_NAMES.index(face)] = 0.9
        probs[row, : len(FACE_NAMES)] += 0.1 / 21
        if read_as and row in read_as:  # the rest of its chance on the face it is
            other, chance = read_as[row]
            probs[row, : len(FACE_NAMES)] = 0.0
            probs[row, FACE_NAMES.index(other)] = 1 - chance
            probs[row, FACE_NAMES.index(face)] = chance
        if face_down and row in face_down:
            probs[row] *= 1 - face_down[row]
            probs[row, len(FACE_NAMES)] = face_down[row]  # the `back` column
        looks = (like or {}).get(row, face)
        vector = directions[FACE_NAMES.index(looks)] + rng.normal(0, 0.05, 64)
        vectors[row] = vector / np.linalg.norm(vector)
        crop = np.full((64, 64, 3), (body or {}).get(row, (25, 22, 22)), np.uint8)
        crop[20:26, 28:34] = 235  # a pip
        crops.append(crop)
    for row in range(len(faces), len(labels)):
        sure = (die_as or {}).get(row - len(faces), (1.0, 1.0))[1]
        probs[row, 22 : 22 + 6] = (1 - sure) / 5
        probs[row, 22 + (row - len(faces)) % 6] = sure
        crops.append(np.full((64, 64, 3), 230, np.uint8))
    return Detections(corners, np.ones(len(labels)), labels), probs, vectors, crops


def enrolled(faces: list[str], looks: np.ndarray | None = None, **kwargs: object):  # type: ignore[no-untyped-def]
    found, probs, vectors, crops = seen(faces, **kwargs)  # type: ignore[misc, arg-type]
    if looks is not None:  # the dice's rows too, as the set-look model gives them
        looks = np.concatenate([looks, np.zeros((len(found) - len(looks), looks.shape[1]))])
    return enrol_seen(found, probs, vectors, NAMES, crops, looks)


def set_looks(count: int, away: dict[int, float] | None = None) -> np.ndarray:
    """Set looks (unit vectors) of `count` tiles of one set, a few hundredths apart; a tile in
    `away` turned that far (1 - cosine) from the set's centre towards another set's."""
    rng = np.random.default_rng(9)
    centre, other = np.eye(16)[0], np.eye(16)[1]
    looks = centre + rng.normal(0, 0.03, (count, 16))
    for row, far in (away or {}).items():
        looks[row] = (1 - far) * centre + np.sqrt(1 - (1 - far) ** 2) * other
    return (looks / np.linalg.norm(looks, axis=1, keepdims=True)).astype(np.float32)


@pytest.mark.parametrize(
    ("fourth", "dice"),
    [
        ((0.75, 0.37), ("die-1", "die-2", "die-3")),  # 997018: a phantom beside a die
        ((0.75, 0.99), ("die-1", "die-2", "die-3", "die-4")),  # a smaller die, read surely
        ((1.0, 0.37), ("die-1", "die-2", "die-3", "die-4")),  # a die of the set, read unsure
    ],
    ids=["small and unsure: no die", "small but read: a die", "unsure but full size: a die"],
)
def test_a_fourth_die_box_counts_unless_small_and_unsure_as_in_play(
    fourth: tuple[float, float], dice: tuple[str, ...]
) -> None:
    enrolment = enrolled(list(DISPLAY_ORDER), dice=4, die_as={3: fourth})
    assert enrolment.dice == dice
    assert enrolment.whole is (len(dice) == 3)


@pytest.mark.parametrize(
    ("count", "die_as", "dice"),
    [
        (3, {2: (0.75, 0.37)}, ("die-1", "die-2", "die-3")),  # navy 909001: a die read unsure
        (3, {1: (0.8, 0.3), 2: (0.75, 0.37)}, ("die-1", "die-2", "die-3")),  # cream 909006
        (4, {2: (0.75, 0.30), 3: (0.75, 0.37)}, ("die-1", "die-2", "die-4")),  # one too many
    ],
    ids=["three, one unlike", "three, two unlike", "four, two unlike: the least sure goes"],
)
def test_a_display_keeps_three_dice_however_unlike_some_look(
    count: int, die_as: dict[int, tuple[float, float]], dice: tuple[str, ...]
) -> None:
    """A box small and unsure is dropped only beyond three (a phantom beside the dice), the
    least sure first: a real die of a look the dice reader doubts is never thinned away."""
    enrolment = enrolled(list(DISPLAY_ORDER), dice=count, die_as=die_as)
    assert enrolment.dice == dice
    assert enrolment.whole, enrolment.problems


def test_a_whole_set_laid_in_order_is_accepted_and_named_by_place() -> None:
    enrolment = enrolled(list(DISPLAY_ORDER))
    assert enrolment.whole, enrolment.problems
    assert enrolment.in_order
    assert [t.face for t in sorted(enrolment.tiles, key=lambda t: t.place or 0)] == list(
        DISPLAY_ORDER
    )
    assert enrolment.dice == ("die-1", "die-2", "die-3")
    assert "The set is whole" in enrolment.summary()


@pytest.mark.parametrize(
    ("change", "said"),
    [
        ({"faces": list(DISPLAY_ORDER[:31])}, "31 tiles face up, a set has 32"),
        ({"dice": 2}, "2 dice, a table uses 3"),
        (
            {"like": {9: "6-6"}, "read_as": {9: ("6-6", 0.3)}},
            "place 10 (laid as 5-5) looks like the 6-6",
        ),
        (
            {"like": {25: "3-5"}, "read_as": {25: ("3-5", 0.3)}},
            "place 26 (laid as 2-6) looks like the 3-5",
        ),
        ({"body": {12: (200, 228, 238)}}, "place 13 is unlike the set (body lightness)"),
        ({"looks": set_looks(32, {20: 0.6})}, "place 21 (laid as 1-5) looks unlike the rest"),
        (
            {"read_as": {21: ("2-2", 0.0)}},  # looking like a 1-5: twins cannot tell
            "place 22 (laid as 1-5) reads 2-2, 100% sure, and as a 1-5 0.00%: a 2-2 where",
        ),
    ],
    ids=[
        "a tile missing",
        "a die missing",
        "a civil face twice",
        "a military face twice",
        "another set's tile",
        "another set's tile by its look",
        "a face twice, read so",
    ],
)
def test_a_set_that_is_not_whole_is_refused_with_what_is_wrong(change: dict, said: str) -> None:  # type: ignore[type-arg]
    faces = change.pop("faces", list(DISPLAY_ORDER))
    enrolment = enrolled(faces, **change)
    assert not enrolment.whole
    assert any(said in problem for problem in enrolment.problems), enrolment.problems
    assert "Refused: " in enrolment.summary()


@pytest.mark.parametrize(
    ("down", "said"),
    [
        ({2: 0.99}, f"1 tile face down; place 3 (laid as {DISPLAY_ORDER[2]}) reads as a back, "
                    "99% sure"),
        ({2: 0.95, 30: 0.99}, f"2 tiles face down; place 3 (laid as {DISPLAY_ORDER[2]}) reads "
                              f"as a back, 95% sure; place 31 (laid as {DISPLAY_ORDER[30]}) reads "
                              "as a back, 99% sure"),
        ({2: 0.85}, None),  # under `FACE_DOWN`: a face, read unsure
    ],
    ids=["one", "two", "a back, unsure"],
)  # fmt: skip
def test_a_tile_face_down_is_named_by_its_place_and_the_rest_stays_placed(
    down: dict[int, float], said: str | None
) -> None:
    """A tile read as a back is not enrolled, and the display is refused for it alone, by its
    place: the other tiles stay placed (not read as a set a tile short), and it leaves no gap
    where it lies."""
    enrolment = enrolled(list(DISPLAY_ORDER), face_down=down)
    assert enrolment.problems == (() if said is None else (said,))
    assert enrolment.in_order
    face_down = {} if said is None else down
    assert [t.place for t in enrolment.face_down] == [row + 1 for row in face_down]
    assert len(enrolment.tiles) == 32 - len(face_down)
    assert all(t.face == DISPLAY_ORDER[(t.place or 0) - 1] for t in enrolment.tiles)


@pytest.mark.parametrize(
    ("chance", "whole"),
    [(0.3, True), (PLACE_RULED_OUT, True), (PLACE_RULED_OUT * 0.99, False), (0.0, False)],
)
def test_a_tile_read_as_another_face_is_refused_only_where_its_own_is_ruled_out(
    chance: float, whole: bool
) -> None:
    """A reader may misread a genuine tile of a design it never saw, even surely, yet leave
    its true face some chance: the set is whole, named by place. A tile the reader all but
    rules out as its place's face is another face."""
    enrolment = enrolled(list(DISPLAY_ORDER), read_as={21: ("2-2", chance)})
    assert enrolment.whole is whole, enrolment.problems
    (tile,) = enrolment.disagreements
    assert (tile.place, tile.face, tile.read) == (22, "1-5", "2-2")


@pytest.mark.parametrize(("misread", "whole"), [(2, False), (4, True)])
def test_a_tile_ruled_out_is_judged_only_where_the_reader_reads_the_rest_as_placed(
    misread: int, whole: bool
) -> None:
    """A reader that misreads many tiles of a design it never saw misreads some surely: past
    `KNOWN_DESIGN` of the other tiles read otherwise, a tile ruled out says nothing."""
    others = {row: ("6-6", 0.3) for row in range(2, 2 + misread)}  # misread, unsure
    assert 1 - misread / 31 < KNOWN_DESIGN if whole else 1 - misread / 31 >= KNOWN_DESIGN
    enrolment = enrolled(list(DISPLAY_ORDER), read_as={21: ("2-2", 0.0), **others})
    assert enrolment.whole is whole, enrolment.problems


@pytest.mark.parametrize(("misread", "whole"), [(0, True), (4, False)])
def test_a_tile_read_as_placed_is_no_twin_where_the_reader_knows_the_design(
    misread: int, whole: bool
) -> None:
    """A genuine tile's embedding can lie nearer another face's tile than the set's copies
    lie to each other; a reader that reads the display as placed (`KNOWN_DESIGN`) and reads
    that tile as its place names is taken at its word. One that misreads the design is not."""
    others = {row: ("6-6", 0.3) for row in range(2, 2 + misread)}  # misread, unsure
    enrolment = enrolled(list(DISPLAY_ORDER), like={9: "6-6"}, read_as=others)
    assert enrolment.whole is whole, enrolment.problems
    assert whole or any(
        "place 10 (laid as 5-5) looks like the 6-6" in p for p in enrolment.problems
    )


def doubled_beside_its_copies(doubled_read_as: str) -> tuple[SeenTile, ...]:
    """A display whose 6-6 is doubled at place 26 (laid as the 2-6) where twins names the
    genuine copies, not the doubled tile: the second 6-6 looks less like the first than the
    doubled one does, and the single faces' tiles lean towards one another by turns (10-73
    degrees), so a tile without a copy must look far more like another to stand out among them.
    Every tile but the doubled one reads as its place names."""
    axis = {face: row for row, face in enumerate(FACE_NAMES)}
    singles = [face for face in DISPLAY_ORDER if DISPLAY_ORDER.count(face) == 1]

    def unit(*parts: tuple[int, float]) -> np.ndarray:  # type: ignore[type-arg]
        vector = np.zeros(24, np.float32)
        for row, weight in parts:
            vector[row] += weight
        return vector / np.linalg.norm(vector)

    tiles = []
    for place, face in enumerate(DISPLAY_ORDER, 1):
        read = face
        if place == 2:
            vector = unit((axis["6-6"], 0.8), (21, 0.6))
        elif place == 26:
            vector, read = unit((axis["6-6"], 0.95), (22, math.sqrt(1 - 0.95**2))), doubled_read_as
        elif face in singles:
            k = singles.index(face)
            lean = math.radians(10 + 7 * k)
            vector = unit(
                (axis[face], math.cos(lean)), (axis[singles[(k + 1) % 10]], math.sin(lean))
            )
        else:
            vector = unit((axis[face], 1.0))
        tiles.append(SeenTile(np.zeros((4, 2)), read, 0.9, face, place, np.stack([vector, vector])))
    return tuple(tiles)


@pytest.mark.parametrize(
    ("doubled_read_as", "named"),
    [
        ("2-6", []),  # read as its place names, like every other tile: taken at its word
        ("3-5", [1]),  # read otherwise: the pair is judged, though the copy reads as placed
        # (place 2 is nearer its own copy, 0.8, than the doubled tile, 0.76: no twin)
    ],
    ids=["both-read-as-placed", "the-doubled-tile-read-otherwise"],
)
def test_a_pair_is_taken_at_the_readers_word_only_where_both_tiles_read_as_placed(
    doubled_read_as: str, named: list[int]
) -> None:
    """The twin rule's exception needs both tiles of the pair read as their places name: where
    twins names a genuine copy and the doubled tile beside it reads otherwise (seed 893005), the
    genuine copy's reading alone must not clear the pair."""
    problems = twins(doubled_beside_its_copies(doubled_read_as))
    assert problems == [
        f"place {place} (laid as 6-6) looks like the 2-6 at place 26: a face twice"
        for place in named
    ]


def test_two_faces_a_set_draws_alike_are_no_twins_while_each_tile_is_nearest_its_own_copy() -> None:
    """The charcoal look draws the `6-6` like the `4-6` (0.98-0.996 alike to the embedding) and
    the reader reads its `6-6` as `4-6`: among faces that lie apart those four stand out, but
    each is nearer its own copy than the other face's (seed 908008 was refused so)."""
    axis = {face: row for row, face in enumerate(FACE_NAMES)}

    def unit(*parts: tuple[str, float]) -> np.ndarray:  # type: ignore[type-arg]
        vector = np.zeros(24, np.float32)
        for face, weight in parts:
            vector[axis[face]] += weight
        return vector / np.linalg.norm(vector)

    alike = {"6-6": unit(("6-6", 1.0), ("4-6", 0.85)), "4-6": unit(("4-6", 1.0), ("6-6", 0.85))}

    def seen(place: int, face: str) -> SeenTile:
        look = alike.get(face, unit((face, 1.0)))
        read = "4-6" if face == "6-6" else face
        return SeenTile(np.zeros((4, 2)), read, 0.9, face, place, np.stack([look, look]))

    tiles = tuple(seen(place, face) for place, face in enumerate(DISPLAY_ORDER, 1))
    assert twins(tiles) == []
    doubled = list(tiles)  # a 4-6 laid where the second 6-6 belongs: nearer the 4-6s
    doubled[1] = replace(tiles[1], embedding=np.stack([alike["4-6"]] * 2))
    assert any("place 2 (laid as 6-6) looks like the 4-6" in p for p in twins(tuple(doubled)))


IVORY, BLACK = (200, 228, 238), (25, 22, 22)
"""Body colours (BGR) of a light and a dark set."""


def tile_crop(body: tuple[int, int, int], pips: tuple[int, int, int], crowded: float) -> np.ndarray:  # type: ignore[type-arg]
    """A 64 x 64 tile crop of `body` whose middle (`vision.enrol._middle`) is `crowded` pips."""
    crop = np.full((64, 64, 3), body, np.uint8)
    crop[8 : 8 + round(48 * crowded), :] = pips
    return crop


@pytest.mark.parametrize(
    ("body", "pips", "odd", "refused"),
    [
        (IVORY, BLACK, {1: (IVORY, BLACK, 0.65), 2: (IVORY, BLACK, 0.6)}, []),  # its own pips
        (IVORY, BLACK, {2: (BLACK, IVORY, 0.15)}, [2]),  # a dark body among light ones
        (BLACK, IVORY, {2: (IVORY, BLACK, 0.3)}, [2]),  # a light body, dense dark pips on it
        (IVORY, BLACK, {2: (IVORY, BLACK, 0.65)}, [2]),  # crowded where its copy is not
    ],
    ids=[
        "dense-dark-pips-on-a-light-set",
        "a-dark-tile-in-a-light-set",
        "a-light-tile-in-a-dark-set",
        "a-light-tile-crowded-unlike-its-copy",
    ],
)
def test_dark_pips_crowding_a_light_tile_are_not_another_body(
    body: tuple[int, int, int],
    pips: tuple[int, int, int],
    odd: dict[int, tuple[tuple[int, int, int], tuple[int, int, int], float]],
    refused: list[int],
) -> None:
    """A light set's `6-6` drawn with large dark pips is darker than its set in the middle, as a
    dark tile of another set is; it is told by how much of its middle is still the set's body
    (`BODY_SHARE_LEAST`), only where it is darker (a light tile among dark ones is refused
    however many dark pips it carries), and only where its copy is crowded too
    (`COPY_CROWDED`: another maker's `6-6` with larger pips than the set's is refused)."""
    crops = [tile_crop(*odd[place]) if place in odd else tile_crop(body, pips, 0.1)
             for place in range(1, 33)]  # fmt: skip
    tiles = tuple(
        SeenTile(corners, face, 0.9, face, place, None)
        for place, (corners, face) in enumerate(
            zip(laid(8, 0.0, False, False), DISPLAY_ORDER, strict=True), 1
        )
    )
    assert strangers(tiles, crops) == [
        f"place {place} is unlike the set (body lightness): another set's tile" for place in refused
    ]


def test_a_tile_is_read_by_the_face_it_looks_like_in_the_set() -> None:
    enrolment = enrolled(list(DISPLAY_ORDER))
    known = KnownSet.of(enrolment)
    tile = enrolment.tiles[4].embedding[0]  # type: ignore[index]  # a 4-4 by its place
    probs = np.zeros((2, len(NAMES)), np.float32)
    probs[0, FACE_NAMES.index("1-5")], probs[0, FACE_NAMES.index("4-4")] = 0.6, 0.3
    probs[1, 25] = 1.0  # a die reading 4
    read = known.combine(probs, np.stack([tile, tile]), NAMES, ("tile", "die"))
    assert FACE_NAMES[int(np.argmax(read[0, :21]))] == "4-4"
    assert read[0].sum() == pytest.approx(probs[0].sum())
    assert np.array_equal(read[1], probs[1])  # dice are the classifier's alone


def test_a_known_set_survives_saving(tmp_path) -> None:  # type: ignore[no-untyped-def]
    known = KnownSet.of(enrolled(list(DISPLAY_ORDER)))
    known.save(tmp_path / "set.npz")
    again = KnownSet.load(tmp_path / "set.npz")
    assert again.faces == known.faces and np.array_equal(again.vectors, known.vectors)
    assert len(again.faces) == 64  # every tile as cut and turned half round


FOUR_FOUR_AND_ONE_ONE = np.array([[1, 0, 0]] * 2 + [[0.8, 0.6, 0]] * 2, np.float32)
"""An enrolled `4-4` and `1-1`, each its two views in turn (cosine 0.8 apart)."""


def lying_near(four_four: float, one_one: float) -> np.ndarray:  # type: ignore[type-arg]
    """A tile's embedding at these cosines with `FOUR_FOUR_AND_ONE_ONE`'s 4-4 and 1-1."""
    across = (one_one - four_four * 0.8) / 0.6
    return np.array([[four_four, across, math.sqrt(1 - four_four**2 - across**2)]], np.float32)


@pytest.mark.parametrize(
    ("four_four", "one_one", "read_as", "face"),
    [
        (0.95, 0.90, "1-1", "4-4"),  # the set tells them apart: its nearer face, not the reading
        (0.93, 0.93, "4-4", "4-4"),  # the set cannot: the classifier decides
        (0.93, 0.93, "1-1", "1-1"),
    ],
)
def test_a_tile_goes_to_its_nearest_enrolled_face_unless_two_lie_as_near(
    four_four: float, one_one: float, read_as: str, face: str
) -> None:
    """The set decides where it can (`SET_WEIGHT`): a tile lying nearer an enrolled `4-4`
    (0.95) than an enrolled `1-1` (0.90) is a `4-4` though the classifier reads it `1-1` at 90%,
    since a set's own tiles read a design the classifier never saw better than it does; a tile
    lying as near both is read as the classifier reads it."""
    known = KnownSet(("4-4", "4-4", "1-1", "1-1"), FOUR_FOUR_AND_ONE_ONE)
    tile = lying_near(four_four, one_one)
    probs = np.zeros((1, len(NAMES)), np.float32)
    probs[0, FACE_NAMES.index(read_as)] = 0.9
    probs[0, FACE_NAMES.index("4-4" if read_as == "1-1" else "1-1")] = 0.05
    read = known.combine(probs, tile, NAMES, ("tile",))
    assert FACE_NAMES[int(np.argmax(read[0, :21]))] == face


@pytest.mark.parametrize(("misread", "weight"), [(0, SET_WEIGHT), (6, SET_WEIGHT), (7, SET_ALONE)])
def test_a_set_whose_design_the_reader_does_not_know_reads_play_alone(
    tmp_path, misread: int, weight: float
) -> None:  # type: ignore[no-untyped-def]
    """How much a set weighs in play is set at enrolment by how much of its display the reader
    read as placed (`set_weight`): 26 of 32 (81%) keeps the classifier in, 25 (78%) leaves the
    set alone to read. The weight is kept with the set."""
    others = {row: ("6-6", 0.05) for row in range(2, 2 + misread)}
    enrolment = enrolled(list(DISPLAY_ORDER), read_as=others)
    known = KnownSet.of(enrolment)
    assert known.weight == weight == set_weight(1 - misread / 32)
    known.save(tmp_path / "set.npz")
    assert KnownSet.load(tmp_path / "set.npz").weight == weight
    assert enrolment.whole, enrolment.problems  # the person accepting it is told which
    assert ("the set's own tiles read its faces" in enrolment.summary()) is (weight == SET_ALONE)


def test_a_set_saved_before_sets_kept_their_weight_weighs_the_default(tmp_path) -> None:  # type: ignore[no-untyped-def]
    known = KnownSet(("1-1", "1-1"), E[:2].copy())
    np.savez_compressed(tmp_path / "old.npz", faces=np.array(known.faces), vectors=known.vectors)
    assert KnownSet.load(tmp_path / "old.npz").weight == SET_WEIGHT


@pytest.mark.parametrize(("weight", "face"), [(SET_WEIGHT, "1-1"), (SET_ALONE, "4-4")])
def test_a_set_reading_alone_overrules_even_a_sure_classifier(weight: float, face: str) -> None:
    """A tile the classifier reads `1-1` at 99.9% but that lies a little nearer an enrolled
    `4-4` stays `1-1` where the classifier weighs in, and is the set's `4-4` where the set reads
    alone (`SET_ALONE`: the classifier does not know the design)."""
    known = KnownSet(("4-4", "4-4", "1-1", "1-1"), FOUR_FOUR_AND_ONE_ONE, weight=weight)
    tile = lying_near(0.95, 0.90)
    probs = np.zeros((1, len(NAMES)), np.float32)
    probs[0, FACE_NAMES.index("1-1")], probs[0, FACE_NAMES.index("4-4")] = 0.999, 0.0005
    read = known.combine(probs, tile, NAMES, ("tile",))
    assert FACE_NAMES[int(np.argmax(read[0, :21]))] == face


E = np.eye(4, dtype=np.float32)


@pytest.mark.parametrize(("views", "face"), [("as cut", "1-1"), ("as cut twice", "1-1"),
                                             ("as cut and turned", "4-4")])  # fmt: skip
def test_a_tile_in_play_is_matched_with_the_set_end_to_end(views: str, face: str) -> None:
    """An enrolled `1-1` seen as (e0, e1) and `4-4` as (e2, e3), as cut and turned half round.
    A tile whose crop as cut lies nearest the `1-1`'s (0.86 against 0.51) but which turned half
    round is the `4-4`'s other view is a `4-4`: matched by both its ends (`Reader.look_at(
    both_ways=True)`), not by the one the crop happens to show first. A tile read once (its
    view twice) is matched by that view."""
    known = KnownSet(("1-1", "1-1", "4-4", "4-4"), E.copy())
    cut = (E[0] + 0.6 * E[2]) / np.linalg.norm(E[0] + 0.6 * E[2])
    second = {"as cut twice": cut, "as cut and turned": E[3]}.get(views)
    seen = cut[None] if second is None else np.stack([cut, second])[None]
    probs = np.zeros((1, len(NAMES)), np.float32)
    probs[0, FACE_NAMES.index("1-1")] = probs[0, FACE_NAMES.index("4-4")] = 0.45
    read = known.combine(probs, seen, NAMES, ("tile",))
    assert FACE_NAMES[int(np.argmax(read[0, :21]))] == face


@pytest.mark.parametrize(
    "faces", [("1-1", "4-4"), ("1-1", "1-1", "4-4"), ("1-1",) * 2 + ("4-4",) * 4]
)
def test_a_known_set_holds_each_tiles_two_views_in_turn(faces: tuple[str, ...]) -> None:
    with pytest.raises(ValueError, match="two views"):
        KnownSet(faces, np.ones((4, 3), np.float32))


def test_a_frame_with_nothing_on_it_is_refused_not_a_crash() -> None:
    from vision.detector import Reader
    from vision.enrol import enrol_found

    enrolment = enrol_found(np.zeros((64, 64, 3), np.uint8), Detections.empty(), Reader())
    assert not enrolment.whole and not enrolment.tiles
    assert enrolment.problems == ("0 tiles face up, a set has 32", "0 dice, a table uses 3")


@pytest.mark.parametrize(
    ("odd_view", "others", "column", "at_most"),
    [
        ((0.04, 0.95, 0.01), (0.999, 0.0005, 0.0005), 1, 0.01),  # a back one crop alone sees
        ((0.02, 0.02, 0.96), (0.9999, 0.0, 0.0001), 2, 0.001),  # ruled out by nine views of ten
        ((0.05, 0.95, 0.0), (0.05, 0.95, 0.0), 1, 1.0),  # every view agrees
    ],
    ids=["one-view-back", "ruled-out-by-most", "agreed"],
)
def test_a_class_stays_likely_only_where_most_views_find_it_so(
    odd_view: tuple[float, ...], others: tuple[float, ...], column: int, at_most: float
) -> None:
    """One view of ten lifts a class to no more than `at_most` (the last ruled out at
    `PLACE_RULED_OUT`, 0.001, as a doubled display's misplaced face must stay); views that agree
    keep their reading."""
    from vision.enrol import views_agreed

    views = np.array([[odd_view]] + [[others]] * 9, np.float32)
    agreed = views_agreed(views)
    assert float(agreed.sum()) == pytest.approx(1.0)
    assert float(agreed[0, column]) <= at_most
    assert int(np.argmax(agreed[0])) == int(np.argmax(others))


class OneCropSeesABack:
    """A reader that reads a tile's crop as cut (the first crops it is shown), and that crop
    turned half round, as a back, sure, and every crop cut a little off it as `1-1`: a face with
    small dim pips, read as a back from one place."""

    names = NAMES
    looker = None

    def __init__(self) -> None:
        self.as_cut: list[np.ndarray] | None = None

    def look_at(
        self, crops: list[np.ndarray], embed: bool = True, dice: object = None,
        half_turn_below: float | None = None,
    ) -> tuple[np.ndarray, None]:  # fmt: skip
        if self.as_cut is None:
            self.as_cut = [crop.copy() for crop in crops]
        column = {name: k for k, name in NAMES.items()}
        probs = np.zeros((len(crops), len(NAMES)), np.float32)
        for row, crop in enumerate(crops):
            seen_as_cut = any(np.array_equal(crop, first) or np.array_equal(crop, first[::-1, ::-1])
                              for first in self.as_cut)  # fmt: skip
            probs[row, column["back" if seen_as_cut else "1-1"]] = 0.95
            probs[row, column["2-2"]] = 0.05
        return probs, None


@pytest.mark.parametrize(("views", "face_down"), [(True, False), (False, True)],
                         ids=["read-from-every-view", "read-as-cut-alone"])  # fmt: skip
def test_a_display_tile_is_read_from_every_view_enrolment_cuts(
    views: bool, face_down: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A tile read as a back from its crop as cut but as a face from the other views enrolment
    cuts (`LOOKS`, as cut and turned) lies face up; with its crop as cut alone, it would not."""
    from vision import enrol

    if not views:
        monkeypatch.setattr(enrol, "LOOKS", ((0.0, 0.0),))
    image = np.random.default_rng(3).integers(0, 255, (200, 200, 3), np.uint8)
    tile = np.array([[[80.0, 60.0], [120.0, 60.0], [120.0, 140.0], [80.0, 140.0]]])
    found = Detections(tile, np.ones(1), ("tile",))
    enrolment = enrol.enrol_found(image, found, OneCropSeesABack())  # type: ignore[arg-type]
    assert ("1 tile face down" in enrolment.problems) is face_down
    assert len(enrolment.tiles) == (0 if face_down else 1)


def square(x: float, y: float, side: float = 12.0) -> np.ndarray:
    return np.array([[x, y], [x + side, y], [x + side, y + side], [x, y + side]], np.float64)


@pytest.mark.parametrize(
    ("window", "at", "kept"),
    [
        ((100, 100, 500, 400), (3, 150), False),  # on the cut through the frame
        ((100, 100, 500, 400), (60, 150), True),  # a margin inside it
        ((0, 100, 500, 400), (3, 150), True),  # on the frame's own edge
        ((100, 100, 500, 400), (200, 395), False),  # on the far cut
        ((100, 100, 500, 1080), (200, 1075), True),  # on the frame's far edge
    ],
    ids=["near-cut", "inside", "frame-edge", "far-cut", "far-frame-edge"],
)
def test_the_second_look_leaves_out_boxes_on_its_own_cut(
    window: tuple[int, int, int, int], at: tuple[float, float], kept: bool
) -> None:
    """The closer look's window cuts the frame, and the cut is an edge the detector can box:
    a box within half the margin (here 40 px) of a side that cuts is left out, not one by
    the frame's own edge."""
    box = square(at[0], at[1], 4.0)[None]
    assert clear_of_cut(box, window, (1080, 1920, 3), np.array([40.0, 40.0])).tolist() == [kept]


def scaled(corners: np.ndarray, long: float, short: float) -> np.ndarray:
    """A box made `long` times as long and `short` times as wide about its centre (upright)."""
    centre = corners.mean(axis=0)
    return centre + (corners - centre) * [short, long]


@pytest.mark.parametrize(
    ("odd", "tiles", "dice", "dropped"),
    [
        (("tile", 1.0, 1.5), 32, 3, True),  # a face-down box on the bare cloth
        (("tile", 2.0, 1.0), 32, 3, True),  # across two rows
        (("tile", 0.85, 1.0), 32, 3, False),  # another maker's shorter tile
        (("tile", 1.15, 1.08), 32, 3, False),  # and a longer, wider one
        (("die", 2.0, 2.0), 32, 3, True),  # on the cloth's printed word
        (("die", 1.2, 1.2), 32, 3, False),
        (("tile", 1.0, 1.5), 6, 3, False),  # too few tiles to tell their size
        (("die", 2.0, 2.0), 32, 1, False),  # too few dice
    ],
    ids=["wide", "long", "shorter", "longer-wider", "big-die", "near-die", "few-tiles", "few-dice"],
)
def test_a_box_sized_as_no_tile_or_die_of_the_display_is_left_out(
    odd: tuple[str, float, float], tiles: int, dice: int, dropped: bool
) -> None:
    """A set's tiles are cut alike and a table's dice are one size: a box far off their size
    is none of them, but another maker's tile, a sixth shorter or longer, stays in to be
    refused for what it is."""
    kind, long, short = odd
    shape = tile_corners(900, 900, 0) if kind == "tile" else square(900, 900)
    boxes = [*laid(8, 0, False, False)[:tiles], *(square(100 + 30 * k, 800) for k in range(dice))]
    found = Detections(
        np.array([*boxes, scaled(shape, long, short)]),
        np.arange(len(boxes) + 1) / 100,
        (*["tile"] * tiles, *["die"] * dice, kind),
    )
    kept = sized_alike(found)
    assert len(kept) == len(found) - dropped
    assert (found.confidence[-1] in kept.confidence) != dropped


@pytest.mark.parametrize(
    ("boxes", "kept"),
    [
        ([("die", square(100, 100), 0.9), ("die", square(102, 101), 0.3)], [0.9]),  # twice
        ([("die", square(100, 100), 0.3), ("die", square(112, 100), 0.9)], [0.3, 0.9]),  # touching
        ([("tile", tile_corners(50, 50, 0), 0.8), ("tile", tile_corners(52, 50, 0), 0.6)], [0.8]),
        ([("tile", tile_corners(50, 50, 0), 0.8), ("die", square(48, 48), 0.6)], [0.8, 0.6]),
        (  # across two neighbours' ends: a quarter of each (under OVERLAP), 0.8 inside both
            [
                ("tile", tile_corners(50, 50, 0), 0.9),
                ("tile", tile_corners(73, 50, 0), 0.8),
                ("tile", tile_corners(61.5, 38, math.pi / 2), 0.5),
            ],
            [0.9, 0.8],
        ),
        (  # side by side, boxed a little loose: both kept
            [("tile", tile_corners(50, 50, 0), 0.9), ("tile", tile_corners(66, 50, 0), 0.8)],
            [0.9, 0.8],
        ),
    ],
    ids=["die-twice", "touching-dice", "tile-twice", "die-on-tile", "across-two", "side-by-side"],
)
def test_each_object_of_a_display_is_boxed_once(
    boxes: list[tuple[str, np.ndarray, float]], kept: list[float]
) -> None:
    found = Detections(
        np.array([b for _, b, _ in boxes]), np.array([c for *_, c in boxes]),
        tuple(k for k, *_ in boxes),
    )  # fmt: skip
    assert one_box_per_object(found).confidence.tolist() == kept


@pytest.mark.parametrize(
    ("away", "whole"),
    [
        ({}, True),
        ({5: 0.2}, True),
        ({5: 0.5}, False),
        ({5: 0.5, 6: 0.5}, False),
        ({25: 0.2}, True),  # the 2-6, a face held once: no copy vouches for it
        ({25: 0.3}, False),
    ],
    ids=[
        "one-set",
        "a-little-off",
        "one-foreign",
        "two-foreign",
        "held-once-near",
        "held-once-off",
    ],
)
def test_a_display_is_refused_for_a_tile_whose_look_lies_outside_the_set(
    away: dict[int, float], whole: bool
) -> None:
    enrolment = enrolled(list(DISPLAY_ORDER), looks=set_looks(32, away))
    assert enrolment.whole == whole, enrolment.problems
    assert sum("another set's tile" in p for p in enrolment.problems) == (0 if whole else len(away))


@pytest.mark.parametrize(
    ("away", "named"),
    [
        ({}, []),
        ({5: 0.2}, []),  # a little off its copy: one maker's
        ({5: 0.35}, ["place 5 and place 6 (4-4)"]),  # near the set, far from its copy
        ({4: 0.35, 5: 0.35}, []),  # both copies alike, off the rest (a light set's 4-4s)
        ({25: 0.2}, []),  # a face held once has no copy to be unlike
    ],
    ids=["one-set", "a-little-off", "unlike-its-copy", "copies-alike", "no-copy"],
)
def test_a_display_is_refused_where_a_faces_two_copies_look_unlike(
    away: dict[int, float], named: list[str]
) -> None:
    enrolment = enrolled(list(DISPLAY_ORDER), looks=set_looks(32, away))
    unlike = [p for p in enrolment.problems if "look unlike each other" in p]
    assert [p.split(" look unlike")[0] for p in unlike] == named, enrolment.problems
    assert enrolment.whole == (not named), enrolment.problems


@pytest.mark.parametrize(
    ("far", "distance"),
    [(0.0, 0.0), (0.2, 0.2), (0.6, 0.6), (1.0, 1.0)],
    ids=["the-centre", "near", "far", "across"],
)
def test_a_looks_distance_is_from_the_sets_centre(far: float, distance: float) -> None:
    enrolled_looks = set_looks(32)
    centre = enrolled_looks.mean(0) / np.linalg.norm(enrolled_looks.mean(0))
    other = np.eye(16)[2] - centre * centre[2]
    other /= np.linalg.norm(other)
    look = ((1 - far) * centre + np.sqrt(1 - (1 - far) ** 2) * other)[None, :]
    assert look_distance(enrolled_looks, look)[0] == pytest.approx(distance, abs=1e-5)


def test_each_enrolled_tile_is_judged_against_the_others() -> None:
    """Left out of the centre it is judged against, a foreign tile stands out by its whole
    distance; counted in, it would pull the centre towards itself."""
    looks = set_looks(8, {3: 0.6})
    apart = look_distance(looks, looks, leave_out=True)
    together = look_distance(looks, looks)
    assert apart[3] > 0.55 and together[3] < apart[3]
    assert np.delete(apart, 3).max() < 0.1


def test_a_known_set_keeps_its_looks_and_one_enrolled_without_them_loads(tmp_path) -> None:  # type: ignore[no-untyped-def]
    with_looks = KnownSet.of(enrolled(list(DISPLAY_ORDER), looks=set_looks(32)))
    assert with_looks.looks is not None and with_looks.looks.shape == (32, 16)
    with_looks.save(tmp_path / "set.npz")
    assert np.array_equal(KnownSet.load(tmp_path / "set.npz").looks, with_looks.looks)  # type: ignore[arg-type]
    without = KnownSet.of(enrolled(list(DISPLAY_ORDER)))
    without.save(tmp_path / "old.npz")
    assert KnownSet.load(tmp_path / "old.npz").looks is None
    with pytest.raises(ValueError, match="without looks"):
        KnownSet.load(tmp_path / "old.npz").distance(set_looks(1))


def test_the_harness_boxes_a_display_as_the_box_does() -> None:
    """The enrolment harness moves the true boxes as the detector's move, then refines them as
    `Detector.detect` refines the detector's: what it measures is the box's own path."""
    from vision.detector import REFINERS, Refiner
    from vision.synth.display import render_display
    from vision.training.enrolment import truth_boxes

    rendering = render_display(880000, "classic")[1]
    truth = [lab.corners for lab in rendering.labels if lab.labelled]
    moved = truth_boxes(rendering, np.random.default_rng(1))[0]
    refined = truth_boxes(rendering, np.random.default_rng(1), refiner=Refiner(REFINERS))[0]

    def overlap(found: Detections) -> float:
        pairs = zip(found.corners, truth, strict=True)
        return float(np.median([polygon_iou(a, b) for a, b in pairs]))

    assert overlap(refined) > overlap(moved) + 0.05
