"""Gold migration of ermongroup/CSDI (exe_physio.py, conditional diffusion imputation) to PyTorch/XLA.

- `--device` defaults to the XLA device instead of cuda:0 (the model keeps the device string it is
  given and moves every tensor it makes there). Each training step ends with a mark_step.
- The training mask (target_strategy "random", get_randmask): each sample's missing ratio is drawn
  from numpy as the loop drew them (one draw per sample, in order), and the num_masked largest of
  its uniform draws are masked. The loop read every sample's observed count on the host
  (`.item()`) and called topk with that count as k: a host read per sample and a graph per
  distinct k. Here the counts stay on the device and the masked entries are those whose rank,
  from a sort of each row, is below num_masked (in float64, so the product rounds exactly as
  Python's round of the host values did: half to even).
- The loss divides by the number of target points, at least 1, with clamp instead of a Python
  `if` on a device tensor (a read per step).
- No host read per step: the epoch's running loss stays on the device and is printed once per
  epoch, instead of loss.item() after every step and a tensor in tqdm's postfix.
- Evaluation after training: the imputation's reverse diffusion steps (20) each end with a
  mark_step (one graph per step shape, not one graph for the whole chain), and the imputed
  samples come to the host before the metrics (median, quantiles, pickles) are computed there.
"""

EXE, MODEL, UTILS = "exe_physio.py", "main_model.py", "utils.py"
XM = "import torch_xla.core.xla_model as xm"


def to_xla(r):
    r.insert_after(EXE, "import torch", [XM])
    r.replace(EXE, "parser.add_argument('--device', default='cuda:0', help='Device for Attack')",
              "parser.add_argument('--device', default=str(xm.xla_device()), help='Device for Attack')")
    r.insert_after(UTILS, "import torch", [XM])
    r.insert_after(UTILS, "optimizer.step()", ["xm.mark_step()"])


def ranked_randmask(r):
    r.replace(MODEL, "for i in range(len(observed_mask)):", [
        "# per-sample ratios drawn as the loop drew them; each row's num_masked largest draws are",
        "# masked by rank (a per-sample topk k would read the count and compile a graph per k)",
        "sample_ratio = torch.from_numpy(np.random.rand(len(observed_mask))).to(observed_mask.device)",
        "num_observed = observed_mask.reshape(len(observed_mask), -1).sum(1).double()",
        "num_masked = torch.round(num_observed * sample_ratio)",
        "rank = rand_for_mask.argsort(dim=1, descending=True).argsort(dim=1)",
        "rand_for_mask = torch.where(rank < num_masked.unsqueeze(1), -torch.ones_like(rand_for_mask),",
        "                            rand_for_mask)",
    ])
    for line in ("sample_ratio = np.random.rand()  # missing ratio",
                 "num_observed = observed_mask[i].sum().item()",
                 "num_masked = round(num_observed * sample_ratio)",
                 "rand_for_mask[i][rand_for_mask[i].topk(num_masked).indices] = -1"):
        r.delete(MODEL, line)


def loss_without_read(r):
    r.replace(MODEL, "loss = (residual ** 2).sum() / (num_eval if num_eval > 0 else 1)",
              "loss = (residual ** 2).sum() / num_eval.clamp(min=1)")


def no_step_reads(r):
    r.replace(UTILS, "avg_loss += loss.item()", "avg_loss += loss.detach()")
    r.replace(UTILS, '"avg_epoch_loss": avg_loss / batch_no,', '"batch": batch_no,')
    r.insert_after(UTILS, "lr_scheduler.step()",
                   ['print(f"epoch {epoch_no}: avg_epoch_loss {float(avg_loss) / batch_no:.6f}")'])


def evaluation(r):
    r.insert_before(MODEL, "if t > 0:", ["xm.mark_step()"])
    r.insert_after(MODEL, "import torch", [XM])
    r.insert_after(UTILS, "output = model.evaluate(test_batch, nsample)",
                   ["output = tuple(o.cpu() for o in output)"])


def apply(r):
    to_xla(r)
    ranked_randmask(r)
    loss_without_read(r)
    no_step_reads(r)
    evaluation(r)
