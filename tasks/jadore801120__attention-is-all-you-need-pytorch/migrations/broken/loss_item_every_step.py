"""The gold, except the per-step bookkeeping: cal_performance's `.item()` counts and train_epoch's
`total_loss += loss.item()` stay, three host reads per training step."""


def apply(r):
    t = r.gold.TRAIN
    r.apply_gold(without=[(t, "n_correct = pred.eq(gold).masked_select(non_pad_mask).sum().item()"),
                          (t, "n_word = non_pad_mask.sum().item()"),
                          (t, "total_loss, n_word_total, n_word_correct = 0, 0, 0"),
                          (t, "n_word_total += n_word"), (t, "n_word_correct += n_correct"),
                          (t, "total_loss += loss.item()"), (t, "loss_per_word = total_loss/n_word_total"),
                          (t, "accuracy = n_word_correct/n_word_total")])
    r.replace(t, "n_correct = pred.eq(gold).masked_select(non_pad_mask).sum().item()",
              "n_correct = pred.eq(gold).logical_and(non_pad_mask).sum().item()")
