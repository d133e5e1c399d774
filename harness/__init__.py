"""Observe migrations, run references, judge the five criteria."""
