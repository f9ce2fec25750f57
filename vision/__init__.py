"""Vision stages over one detections container (synthetic table, detector, tracking).

Empty until the synthetic-table and detector issues land; the crossing into `rules/` types
will happen in one place here.
"""
