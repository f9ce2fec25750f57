"""A synthetic Pai Gow table: labelled frames for the detector and whole rounds on video.

Rendering is OpenCV and numpy only: the table is a textured plane seen through a pinhole camera
with lens distortion; tiles and dice are boxes whose visible faces are textured quads; arms,
chips, cards, the dice cup and the chung are occluders and distractors.
"""
