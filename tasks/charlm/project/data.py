"""Synthetic character-level corpus: sentences from a small grammar, generated from a fixed seed."""
import random

import torch

DATA_SEED = 4321
SUBJECTS = ["the cat", "a dog", "my friend", "the old man", "a small bird", "the teacher", "our team"]
VERBS = ["sees", "likes", "finds", "follows", "paints", "calls", "helps", "watches"]
OBJECTS = ["the river", "a red ball", "the city", "a tall tree", "the moon", "an open door"]
ENDINGS = [".", " today.", " again.", " at night.", " in the rain."]


def make_text(n_sentences=4000):
    rng = random.Random(DATA_SEED)
    parts = []
    for _ in range(n_sentences):
        parts.append(f"{rng.choice(SUBJECTS)} {rng.choice(VERBS)} {rng.choice(OBJECTS)}{rng.choice(ENDINGS)}")
    return " ".join(parts)


def load_splits():
    text = make_text()
    chars = sorted(set(text))
    stoi = {c: i for i, c in enumerate(chars)}
    data = torch.tensor([stoi[c] for c in text], dtype=torch.long)
    n = int(0.9 * len(data))
    return data[:n], data[n:], len(chars)
