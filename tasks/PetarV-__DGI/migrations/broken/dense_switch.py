"""Avoids sparse tensors with the project's own switch, `sparse = False`: but execute.py's dense
branch adds a second identity to the already self-looped, normalised adjacency, so the model
trains on another graph operator (exit 0)."""


def apply(r):
    r.apply_gold()
    r.replace(r.gold.EXEC, "sparse = True", "sparse = False")
