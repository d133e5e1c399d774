"""The gold, except the fixed length: torchtext keeps padding each batch to its own longest sentence,
so the step's graph takes a new shape (and compiles again) whenever that length changes."""


def apply(r):
    r.apply_gold(without=[(r.gold.TRAIN, "opt.trg_vocab_size = len(data['vocab']['trg'].vocab)")])
