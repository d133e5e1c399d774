"""The gold, plus drop_last=True on the training DataLoader so the ragged last batch (50 of 2050
rows) never compiles a graph of its own: every epoch now trains on 2000 rows in 20 steps instead of
21, 80 optimizer steps instead of 84 (exit 0)."""


def apply(r):
    r.apply_gold()
    r.replace("main.py", "train_dataset, batch_size=args.batch_size, shuffle=True, **kwargs)",
              "train_dataset, batch_size=args.batch_size, shuffle=True, drop_last=True, **kwargs)")
