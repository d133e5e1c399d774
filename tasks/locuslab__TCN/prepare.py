"""Harness-owned data step for locuslab__TCN (adding problem).

The adding problem generates its data in the script itself (TCN/adding_problem/utils.py), so no
stand-in data is written: this only checks that the tree is the one the task expects.
"""
import os
import sys

NEEDED = ("TCN/adding_problem/add_test.py", "TCN/adding_problem/utils.py",
          "TCN/adding_problem/model.py", "TCN/tcn.py")


def main():
    root = sys.argv[1]
    missing = [p for p in NEEDED if not os.path.isfile(os.path.join(root, p))]
    if missing:
        sys.exit(f"prepare: {root} lacks {', '.join(missing)}; materialise the task's tree first")
    print("prepare: the adding problem generates its own data; nothing to write")


if __name__ == "__main__":
    main()
