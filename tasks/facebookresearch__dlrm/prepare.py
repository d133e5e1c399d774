"""Harness-owned data step for facebookresearch__dlrm (--data-generation random).

DLRM's random mode generates its inputs in the script (dlrm_data_pytorch.RandomDataset, seeded by
--numpy-rand-seed), so no stand-in data is written: this only checks the tree is the expected one.
"""
import os
import sys

NEEDED = ("dlrm_s_pytorch.py", "dlrm_data_pytorch.py", "extend_distributed.py",
          "mlperf_logger.py", "tricks/md_embedding_bag.py", "tricks/qr_embedding_bag.py",
          "optim/rwsadagrad.py")


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: python prepare.py ROOT (the materialised facebookresearch/dlrm tree)")
    root = sys.argv[1]
    missing = [p for p in NEEDED if not os.path.isfile(os.path.join(root, p))]
    if missing:
        sys.exit(f"prepare: {root} lacks {', '.join(missing)}; materialise the task's tree first")
    print("prepare: dlrm generates its own random data; nothing to write")


if __name__ == "__main__":
    main()
