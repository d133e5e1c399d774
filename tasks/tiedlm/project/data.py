"""Stand-in corpus: short weather reports from a tiny grammar, generated in process from a fixed seed."""
import random

import torch

DATA_SEED = 2718
PLACES = ["the coast", "the hills", "the valley", "the harbour", "the north", "the old town"]
SKIES = ["sunny", "cloudy", "foggy", "rainy", "windy", "clear", "stormy"]
WINDS = ["calm", "a light breeze", "strong gusts", "a cold wind"]
TIMES = ["this morning", "by noon", "tonight", "all day", "later on"]


def make_text(n_reports=3000):
    rng = random.Random(DATA_SEED)
    reports = []
    for _ in range(n_reports):
        temp = rng.randint(0, 30)
        reports.append(f"{rng.choice(PLACES)}: {rng.choice(SKIES)} {rng.choice(TIMES)}, "
                       f"{temp} degrees, {rng.choice(WINDS)}.")
    return "\n".join(reports)


def load_splits():
    text = make_text()
    chars = sorted(set(text))
    stoi = {c: i for i, c in enumerate(chars)}
    data = torch.tensor([stoi[c] for c in text], dtype=torch.long)
    n = int(0.9 * len(data))
    return data[:n], data[n:], len(chars)
