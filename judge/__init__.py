"""Judging: pure functions over recorded files (criteria, verdict, limits, re-grading). An edit
here re-grades kept evidence, never re-runs it: its folder is the judge hash (gpu2tpu/rooms.py)."""
