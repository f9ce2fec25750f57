"""The round follower: rounds on one table followed from located detections, frame by frame.

`RoundFollower.follow(t, detections, image)` takes each analysed frame and returns what it
raised: alerts as soon as their evidence is steady (a few frames), and the round's record when
the table clears. The phases are inferred from what lies where, never from a clock, so missed
frames, a round abandoned midway and a camera that starts mid-round are all handled:

    waiting -> shuffle -> dice -> delivery -> setting -> exposure -> (record) -> waiting

One module a phase, each with its thresholds beside it in one settings object: `base` (what
they share, `RoundSettings`), `dice` (`DiceSettings`), `delivery` (`CutSettings`,
`CarriedSettings`), `exposure` (`FaceSettings`), `hands` (`HandSettings`); `view` counts a frame
by zone; `follower` puts the phases together. Every game judgement is asked of
`vision.follow.judge` (and through it `rules/`); `records` are what the follower publishes.
"""

from vision.follow.base import Phase, Raised
from vision.follow.follower import Announcement, RoundFollower

__all__ = ["Announcement", "Phase", "Raised", "RoundFollower"]
