"""Stand-in data for vwxyzjn/cleanrl's PPO on CartPole: none is needed.

CartPole-v1 is simulated by gymnasium in the training process itself (no download, no files), so
this harness-owned step writes nothing; it exists so that every upstream task has the same steps.
"""

from __future__ import annotations

import task_kit

if __name__ == "__main__":
    task_kit.prepare_main(lambda root: None, "vwxyzjn/cleanrl")
