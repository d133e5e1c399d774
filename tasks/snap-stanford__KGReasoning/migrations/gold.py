"""Gold migration of snap-stanford/KGReasoning (main.py --geo vec, GQE on 1p, 2p and 2i queries) to
PyTorch/XLA.

- Device: where `--cuda` moved the model with .cuda(), the model goes to the XLA device (with the
  test step's entity-id table, a plain attribute that .to() does not move); train_step and
  test_step move their batches to the device the model's embeddings are on.
- Static shapes: train_step groups a batch's queries by structure and embeds each group as one
  tensor, so the group sizes (how many 1p and how many 2p queries a shuffled batch of 64 holds)
  change from step to step, and with them every shape of the step's graph. Each structure's group
  is padded to the batch size (copies of its first query; the structures in a fixed order); the
  padding rows repeat a real row's positive and negatives and are given weight zero after the
  forward, so the loss (weighted sums divided by the sum of the weights) is the reference's. One
  graph for the path batches (1p + 2p), one for the other batches (2i).
- No host read per step: train_step's log keeps the three losses on the device (instead of
  .item()), and main.py's per-step tensorboard scalars are kept and written after training with
  one transfer; each optimizer step ends with torch_xla.sync().
- Logging: importing torch_xla calls logging.basicConfig() (a stderr handler on the root logger),
  which turns set_logger's basicConfig into a no-op: train.log, with the training and test
  metrics, would never be written. set_logger's call takes force=True.
- Evaluation (after training, one query per batch as upstream): the forward, the argsort and the
  ranking scatter run on the device; the ranking comes back to the host once per batch and the
  per-answer filtered metrics (answer sets of every size, .item() per metric) run there, instead
  of compiling a graph for every answer count.
"""

MAIN, MODELS = "main.py", "models.py"
TRAIN_FORWARD = ("positive_logit, negative_logit, subsampling_weight, _ = model(positive_sample, "
                 "negative_sample, subsampling_weight, batch_queries_dict, batch_idxs_dict)")
TEST_FORWARD = ("_, negative_logit, _, idxs = model(None, negative_sample, None, batch_queries_dict, "
                "batch_idxs_dict)")
TEST_LOOP = ("for idx, (i, query, query_structure) in enumerate(zip(argsort[:, 0], queries_unflatten, "
             "query_structures)):")
LOG_ITEMS = {f"'{name}': {name}.item(),": f"'{name}': {name}.detach(),"
             for name in ("positive_sample_loss", "negative_sample_loss", "loss")}
SCALARS = {f"writer.add_scalar('{kind}_'+metric, log[metric], step)":
           f"pending_scalars.append(('{kind}_' + metric, log[metric], step))" for kind in ("path", "other")}

STATIC_GROUPS = [
    "def static_query_groups(queries_dict, idxs_dict, batch_size, query_name_dict, device, pad=True):",
    '    """A batch\'s queries grouped by structure, with fixed shapes for XLA: each group padded to',
    "    batch_size rows (copies of its first query and of its first example's index), the groups in",
    "    a fixed order (unions last, as the forward concatenates them). Returns the groups on",
    '    device, their indices and a weight per output row: 1 for a real query, 0 for padding."""',
    "    order = sorted(queries_dict, key=lambda s: ('u' in query_name_dict[s], query_name_dict[s]))",
    "    padded_queries, padded_idxs, real_rows = {}, {}, []",
    "    for structure in order:",
    "        queries = torch.as_tensor(queries_dict[structure], dtype=torch.long)",
    "        count = queries.shape[0]",
    "        padding = batch_size - count if pad else 0",
    "        padded_queries[structure] = torch.cat([queries, queries[:1].expand(padding, -1)]).to(device)",
    "        padded_idxs[structure] = list(idxs_dict[structure]) + [idxs_dict[structure][0]] * padding",
    "        real_rows += [1.0] * count + [0.0] * padding",
    "    return padded_queries, padded_idxs, torch.tensor(real_rows, device=device)",
    "",
    "",
]

FLUSH_SCALARS = [
    "def flush_scalars(writer, pending):",
    '    """Writes the training scalars kept on the device during training, with one transfer."""',
    "    if pending:",
    "        values = torch.stack([value for _, value, _ in pending]).cpu().tolist()",
    "        for (tag, _, step), value in zip(pending, values):",
    "            writer.add_scalar(tag, value, step)",
    "        pending.clear()",
    "",
]


def model_to_xla(r, device="torch_xla.device()"):
    """main.py: the model (and the test step's entity ids) on `device`; torch_xla imported."""
    r.insert_after(MAIN, "import torch", ["import torch_xla"])
    r.insert_after(MODELS, "import torch", ["import torch_xla"])
    r.replace(MAIN, "if args.cuda:", [
        f"model = model.to({device})",
        "model.batch_entity_range = model.batch_entity_range.to(model.entity_embedding.device)",
    ])
    r.delete(MAIN, "model = model.cuda()")
    # torch_xla's import calls logging.basicConfig(): set_logger's own call (train.log) would be a no-op
    r.replace(MAIN, "filemode='a+'", ["filemode='a+',", "force=True,"])


def train_batches_to_device(r, pad=True, mask=True):
    """train_step: the batch on the model's device, the structure groups padded (pad) and the
    padding rows weighted zero (mask)."""
    r.insert_before(MODELS, "class KGReasoning(nn.Module):", STATIC_GROUPS)
    r.insert_before(MODELS, TRAIN_FORWARD, [
        "device = model.entity_embedding.device",
        "batch_queries_dict, batch_idxs_dict, real_rows = static_query_groups(",
        "    batch_queries_dict, batch_idxs_dict, args.batch_size, model.query_name_dict, device,",
        f"    pad={pad})",
        "positive_sample = positive_sample.to(device)",
        "negative_sample = negative_sample.to(device)",
        "subsampling_weight = subsampling_weight.to(device)",
    ])
    if mask:
        r.insert_after(MODELS, TRAIN_FORWARD,
                       ["subsampling_weight = subsampling_weight * real_rows  # padding weighs 0"])


def sync_each_step(r):
    r.insert_after(MODELS, "optimizer.step()", ["torch_xla.sync()"])


def no_step_reads(r):
    """The step's losses stay on the device; main.py writes the scalars after training."""
    for old, new in LOG_ITEMS.items():
        r.replace(MODELS, old, new)
    deferred_scalars(r)


def deferred_scalars(r):
    for old, new in SCALARS.items():
        r.replace(MAIN, old, new)
    r.insert_before(MAIN, "def main(args):", FLUSH_SCALARS)
    r.insert_before(MAIN, "for step in range(init_step, args.max_steps):",
                    ["pending_scalars = []  # (tag, loss on the device, step), written after training"])
    r.insert_before(MAIN, "try:", ["if args.do_train:", "    flush_scalars(writer, pending_scalars)"])


def test_on_device(r, ranking_to_host=True):
    """test_step: the query on the model's device; the ranking read back once per batch."""
    r.insert_before(MODELS, TEST_FORWARD, [
        "batch_queries_dict = {s: q.to(model.entity_embedding.device)",
        "                      for s, q in batch_queries_dict.items()}",
        "negative_sample = negative_sample.to(model.entity_embedding.device)",
    ])
    if ranking_to_host:
        r.insert_before(MODELS, TEST_LOOP, ["ranking = ranking.cpu()  # per-answer metrics on the host"])


def apply(r):
    model_to_xla(r)
    train_batches_to_device(r)
    sync_each_step(r)
    no_step_reads(r)
    test_on_device(r)
