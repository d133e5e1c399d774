"""Gold migration of ikostrikov/pytorch-flows (main.py, MAF on POWER) to PyTorch/XLA.

The project's --no-cuda switch now selects the CPU against the XLA device (the model moves before
Adam is built, as upstream). The DataLoader keeps its defaults (no CUDA worker or pin-memory
settings). In the training loop the two per-step `.item()` reads (the running mean for the progress
bar and the TensorBoard scalar) become device tensors collected over the epoch and read once after
it, with the progress bar's description and the per-step scalars written from that one read; each
optimizer step ends with torch_xla.sync(). The ragged last batch compiles one more graph, once.
"""

MAIN = "main.py"


def select_device(r, device="torch_xla.device()"):
    r.insert_after(MAIN, "import torch", ["import torch_xla"])
    r.replace(MAIN, "args.cuda = not args.no_cuda and torch.cuda.is_available()",
              "args.cuda = not args.no_cuda")
    r.replace(MAIN, 'device = torch.device("cuda:0" if args.cuda else "cpu")',
              f'device = {device} if args.cuda else torch.device("cpu")')
    r.replace(MAIN, "torch.cuda.manual_seed(args.seed)", "torch_xla.manual_seed(args.seed)")
    r.replace(MAIN, "kwargs = {'num_workers': 4, 'pin_memory': True} if args.cuda else {}", "kwargs = {}")


def step_sync(r):
    r.insert_after(MAIN, "optimizer.step()", ["torch_xla.sync()"])


def losses_on_device(r):
    r.replace(MAIN, "train_loss += loss.item()", "step_losses.append(loss.detach())")
    r.insert_after(MAIN, "pbar = tqdm(total=len(train_loader.dataset))", ["step_losses = []"])
    r.delete(MAIN, "pbar.set_description('Train, Log likelihood in nats: {:.6f}'.format(")
    r.delete(MAIN, "-train_loss / (batch_idx + 1)))")
    r.delete(MAIN, "writer.add_scalar('training/loss', loss.item(), global_step)")
    r.replace_each(MAIN, "pbar.close()", [
        "step_values = torch.stack(step_losses).tolist()  # one host read per epoch",
        "for k, value in enumerate(step_values):",
        "    writer.add_scalar('training/loss', value, global_step - len(step_values) + k)",
        "train_loss = sum(step_values)",
        "pbar.set_description('Train, Log likelihood in nats: {:.6f}'.format(",
        "    -train_loss / len(step_values)))",
        "pbar.close()"], 2, which=[1])


def apply(r):
    select_device(r)
    step_sync(r)
    losses_on_device(r)
