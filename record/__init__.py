"""Recording: everything that produces evidence (the probe, runners, the reference bundle's runs,
the kernel view, the static scan, the run directory's format). An edit here re-runs the runs it
recorded: its folder is in the recorder hash (gpu2tpu/rooms.py)."""
