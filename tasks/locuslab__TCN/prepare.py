"""Harness-owned data step for locuslab__TCN (adding problem).

The adding problem generates its data in the script itself (TCN/adding_problem/utils.py), so no
stand-in data is written: this only checks that the tree is the one the task expects.
"""

from __future__ import annotations

import sys
from pathlib import Path

import task_kit

NEEDED = ("TCN/adding_problem/add_test.py", "TCN/adding_problem/utils.py",
          "TCN/adding_problem/model.py", "TCN/tcn.py")


def check(root: Path) -> None:
    missing = [p for p in NEEDED if not (root / p).is_file()]
    if missing:
        sys.exit(f"prepare: {root} lacks {', '.join(missing)}; materialise the task's tree first")
    print("prepare: the adding problem generates its own data; nothing to write")


if __name__ == "__main__":
    task_kit.prepare_main(check, "locuslab/TCN")
