"""Stand-in Cora for Diego999/pyGAT: data/cora/cora.content (absent from the snapshot) and a
cora.cites that matches it (the snapshot's real citations name papers the stand-in does not have).

The loader's format: cora.content has one line per paper, `<paper id> <0/1 word attributes...>
<class label>` (tab separated); cora.cites one `<cited id> <citing id>` pair per line. 1500 papers
(the loader's fixed splits reach index 1499; the dense GAT's attention is N x N per head), 64 word
attributes, 7 classes; words and most citations follow the class, so attention over neighbours
helps. Deterministic (numpy seed 0).
"""

from __future__ import annotations

from pathlib import Path

from task_kit import prepare_main, write_cora


def write(root: Path) -> None:
    write_cora(root / "data" / "cora", papers=1500, words=64, edges=3500)


if __name__ == "__main__":
    prepare_main(write, "Diego999/pyGAT")
