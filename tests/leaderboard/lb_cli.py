"""`gpu2tpu` in a process of its own for the leaderboard tests (two real processes on one store):
the stand-in regrader and verified trust, as the `fake_regrader` fixture sets them in-process, and
no installed tasks to load (the tasks table then holds the runs' own task ids).

    python tests/leaderboard/lb_cli.py submit RUN_DIR --metadata FILE --db PATH
"""

from __future__ import annotations

import sys

import lb_runfactory as rf

from gpu2tpu.cli import main
from gpu2tpu.leaderboard import ingest
from gpu2tpu.tasks import finder

ingest.regrade_graded = rf.fake_regrade
ingest.submit.__kwdefaults__ = {"trust": ingest.VERIFIED}
finder.installed_specs = list

if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
