"""Gold migration of jadore801120/attention-is-all-you-need-pytorch to PyTorch/XLA.

- The device is the XLA device (the project's torch.device('cuda' ...)); the BucketIterators build each
  batch there.
- Shared weights: Transformer ties the target embedding to the output projection (-proj_share_weight)
  and to the source embedding (-embs_share_weight) by assigning one Parameter to several modules.
  Module.to() onto XLA gives each module its own new Parameter (an XLA tensor cannot take the CPU
  tensor's place), so the ties are made again after the move, as the constructor made them.
- One shape: torchtext pads every batch to its own longest sentence, so each new length compiled a new
  graph; both Fields now pad to the data's max_len (+ <s> and </s>, `fix_length`). The padding masks
  keep the extra positions out of attention and out of the loss.
- No CPU fallback, no host reads per step: masked_select (a data-dependent size, run on the CPU by
  torch_xla) becomes a masked_fill / logical_and before the sums, and the per-batch `.item()` counts and
  losses are kept as device tensors, summed and read once per epoch.
- Each optimizer step ends with a mark_step; the checkpoint is written with xm.save (host copies).
"""

TRAIN = "train.py"
XM = "import torch_xla.core.xla_model as xm"


def to_xla(r, device="xm.xla_device()", retie=True):
    r.insert_after(TRAIN, "import torch", [XM])
    r.replace(TRAIN, "device = torch.device('cuda' if opt.cuda else 'cpu')", f"device = {device}")
    if retie:
        r.insert_before(TRAIN, "optimizer = ScheduledOptim(", [
            "# .to(xla) gave each module its own copy of the shared weights: tie them again",
            "if opt.proj_share_weight:",
            "    transformer.trg_word_prj.weight = transformer.decoder.trg_word_emb.weight",
            "if opt.embs_share_weight:",
            "    transformer.encoder.src_word_emb.weight = transformer.decoder.trg_word_emb.weight",
            "",
        ])
    r.insert_after(TRAIN, "optimizer.step_and_update_lr()", ["xm.mark_step()"])
    r.replace(TRAIN, "torch.save(checkpoint, model_name)", "xm.save(checkpoint, model_name)")
    r.replace(TRAIN, "torch.save(checkpoint, os.path.join(opt.output_dir, model_name))",
              "xm.save(checkpoint, os.path.join(opt.output_dir, model_name))")


def fixed_length(r):
    r.insert_after(TRAIN, "opt.trg_vocab_size = len(data['vocab']['trg'].vocab)", [
        "# every batch padded to the longest sentence the data allows (+ <s>, </s>): one compiled shape",
        "data['vocab']['src'].fix_length = data['vocab']['trg'].fix_length = opt.max_token_seq_len + 2",
    ])


def masks_on_device(r, loss_line="loss = loss.masked_fill(~non_pad_mask, 0.0).sum()  # average later"):
    r.replace(TRAIN, "loss = loss.masked_select(non_pad_mask).sum()  # average later", loss_line)
    r.replace(TRAIN, "n_correct = pred.eq(gold).masked_select(non_pad_mask).sum().item()",
              "n_correct = pred.eq(gold).logical_and(non_pad_mask).sum()")
    r.replace(TRAIN, "n_word = non_pad_mask.sum().item()", "n_word = non_pad_mask.sum()")


def counts_on_device(r):
    r.replace_each(TRAIN, "total_loss, n_word_total, n_word_correct = 0, 0, 0",
                   "total_loss, n_word_total, n_word_correct = [], [], []  # device tensors", 2)
    r.replace_each(TRAIN, "n_word_total += n_word", "n_word_total.append(n_word)", 2)
    r.replace_each(TRAIN, "n_word_correct += n_correct", "n_word_correct.append(n_correct)", 2)
    r.replace_each(TRAIN, "total_loss += loss.item()", "total_loss.append(loss.detach())", 2)
    r.replace_each(TRAIN, "loss_per_word = total_loss/n_word_total", [
        "n_word_total = torch.stack(n_word_total).sum().item()",
        "loss_per_word = torch.stack(total_loss).sum().item() / n_word_total"], 2)
    r.replace_each(TRAIN, "accuracy = n_word_correct/n_word_total",
                   "accuracy = torch.stack(n_word_correct).sum().item() / n_word_total", 2)


def apply(r):
    to_xla(r)
    fixed_length(r)
    masks_on_device(r)
    counts_on_device(r)
