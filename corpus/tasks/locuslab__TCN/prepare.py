"""Stand-in data for locuslab/TCN's adding problem: none is needed.

The adding problem generates its sequences in memory (TCN/adding_problem/utils.py), so the task
runs the upstream code unchanged offline; this script only checks that ROOT is the TCN tree.
Usage: python prepare.py ROOT
"""
import sys
from pathlib import Path


def main(root: Path) -> None:
    script = root / "TCN" / "adding_problem" / "add_test.py"
    if not script.is_file():
        sys.exit(f"{root} is not a locuslab/TCN tree ({script} is missing); materialise the task first")


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit("usage: python prepare.py ROOT (the materialised locuslab/TCN tree)")
    main(Path(sys.argv[1]))
