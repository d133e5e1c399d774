"""Gold migration of salesforce/CodeT5 (run_gen.py, code summarisation with T5) to PyTorch/XLA.

- configs.set_dist picks the XLA device instead of "cuda if available else cpu" (args.device; no
  CUDA device is counted, so n_gpu stays 0 and no DataParallel wrapper is built), and set_seed also
  seeds the XLA generator, which would draw the dropout masks (the CUDA seeding it had only runs
  when n_gpu > 0; the task's tiny T5 has dropout 0).
- Tied weights: T5ForConditionalGeneration shares one Parameter between the `shared` embedding and
  `lm_head` (tie_word_embeddings). Module.to() onto XLA gives each module its own new Parameter (an
  XLA tensor cannot take the CPU tensor's place), so after model.to(args.device) the ties are made
  again with the model's own tie_weights(), before the optimizer collects the parameters.
- No host read per step: the running training loss is kept on the device (loss.detach()) instead
  of loss.item() after every batch, the progress bar shows the step instead of the loss, and the
  epoch's mean loss is logged once per epoch. The dev perplexity likewise sums the batches' losses
  on the device and reads the sum once.
- Each optimizer step (after the scheduler's step) and each dev batch ends with a mark_step: one
  training graph, one evaluation graph, every batch padded to the command's fixed lengths.
"""

RUN, CONFIGS = "CodeT5/run_gen.py", "CodeT5/configs.py"
XM = "import torch_xla.core.xla_model as xm"
DEVICE = 'device = torch.device("cuda" if torch.cuda.is_available() and not args.no_cuda else "cpu")'
ITEM = "tr_loss += loss.item()"
TRAIN_LOSS = "train_loss = round(tr_loss * args.gradient_accumulation_steps / (nb_tr_steps + 1), 4)"
BAR = 'bar.set_description("[{}] Train loss {}".format(cur_epoch, round(train_loss, 3)))'
MOVE = "model.to(args.device)"


def to_xla(r, device="xm.xla_device()", sync="xm.mark_step()", seed="xm.set_rng_state(args.seed)",
           imports=(XM,)):
    r.insert_after(CONFIGS, "import torch", list(imports))
    r.replace(CONFIGS, DEVICE, f"device = {device}")
    r.insert_after(CONFIGS, "torch.manual_seed(args.seed)",
                   [f"{seed}  # the XLA generator (dropout masks)"])
    r.insert_after(RUN, "import torch", list(imports))
    r.insert_after(RUN, MOVE, [
        "# .to(xla) gave lm_head its own copy of the shared embedding: tie them again",
        "model.tie_weights()",
    ])
    r.insert_after(RUN, "scheduler.step()", [sync])
    r.insert_after(RUN, "batch_num += 1", [sync])


def no_step_reads(r):
    r.replace(RUN, ITEM, "tr_loss += loss.detach()  # summed on the device, read once per epoch")
    r.delete(RUN, TRAIN_LOSS)
    r.replace(RUN, BAR, 'bar.set_description("[{}] Train step {}".format(cur_epoch, global_step))')
    r.insert_before(RUN, "if args.do_eval:", [
        'logger.info("[%d] Train loss %.4f", cur_epoch,',
        "            float(tr_loss) * args.gradient_accumulation_steps / max(nb_tr_steps, 1))",
    ])
    r.replace(RUN, "eval_loss += loss.item()", "eval_loss += loss.detach()")
    r.replace(RUN, "eval_loss = eval_loss / batch_num", "eval_loss = float(eval_loss) / batch_num")


def apply(r):
    to_xla(r)
    no_step_reads(r)
