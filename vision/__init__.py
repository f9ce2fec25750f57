"""Perception on the table box, and the definitions it owns.

Here: the detector, box refiners and reader over one `Detections` container (`detector`,
`refine`, `crops`, `detections`), looking again only where the frame changed (`reuse`), the
table's calibration and layout (`table`, `layout`), the classes (`labels`), the start-up
self-check, and `replay` (a video through perception and the follower).

Beside it: `vision.follow`, the round follower, the one place that asks `rules/`;
`vision.synth`, the simulator; `vision.training`, training and measurement (the `[train]`
extra). Nothing a box runs imports the last two (`tests/test_structure.py`).
"""
