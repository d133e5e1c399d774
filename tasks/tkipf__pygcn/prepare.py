"""Stand-in Cora data for tkipf/pygcn: data/cora/cora.content and data/cora/cora.cites.

The format is the one the project's loader reads: cora.content has one line per paper,
`<paper id> <0/1 word attributes...> <class label>` (tab separated); cora.cites has one
`<cited id> <citing id>` pair per line. 1600 papers (the loader's fixed splits reach index 1500),
96 word attributes, 7 classes; words and citations depend on the class, so the task is learnable.
Deterministic (numpy seed 0), stdlib + numpy only.
"""

from __future__ import annotations

from pathlib import Path

import task_kit


def write(root: Path) -> None:
    task_kit.write_cora(root / "data" / "cora", papers=1600, words=96, edges=4000)


if __name__ == "__main__":
    task_kit.prepare_main(write, "tkipf/pygcn")
