"""Gold migration of weihua916/powerful-gnns (GIN, main.py --dataset MUTAG) to PyTorch/XLA.

- The device (CUDA if available, else the CPU) becomes the XLA device; the model is moved before
  Adam is built, as upstream already does. Each training step ends with a mark_step.
- XLA has no sparse tensors: the batch's block-diagonal adjacency and the graph-pooling matrix,
  which the model builds on the host from its graph objects, are built dense on the host (the
  same entries, duplicates summed as the sparse product did) and moved to the device; the
  spmm products become mm.
- Static shapes: a batch's node count is the sum of its graphs' sizes, so every batch would have
  its own shapes and compile its own graph. Every batch of B graphs is padded to B * max_nodes
  nodes (max_nodes: the dataset's largest graph, set by main.py on the model): padding nodes have
  zero features, no edges and no column in the pooling matrix, so they never reach a real node
  or a graph's score. One shape for the training batches (32 graphs), one per evaluation chunk
  size (64, and the last, smaller chunk).
- The BatchNorm1d layers (in the MLPs and after them) normalise over the batch's nodes: padding
  rows would enter their statistics. In training they are computed over the real nodes only
  (a mask), with each module's own affine parameters, eps, momentum and running statistics
  (unbiased running variance, as BatchNorm1d keeps it); evaluation uses the modules themselves.
- No host read per step: the running loss stays on the device (read once per epoch, by the
  epoch's print), instead of loss.detach().cpu().numpy() after every step.

Only what the command runs is migrated: sum neighbour pooling (the max and average variants,
not used by the command, are left as they are).
"""

MAIN, GCN, MLP = "main.py", "models/graphcnn.py", "models/mlp.py"
DEVICE_LINE = ('device = torch.device("cuda:" + str(args.device)) if torch.cuda.is_available() '
               'else torch.device("cpu")')
MODEL_LINE = ("model = GraphCNN(args.num_layers, args.num_mlp_layers, "
              "train_graphs[0].node_features.shape[1], args.hidden_dim, num_classes, args.final_dropout, "
              "args.learn_eps, args.graph_pooling_type, "
              "args.neighbor_pooling_type, device).to(device)")
STEP_READ = "loss = loss.detach().cpu().numpy()"
ADJ = ("Adj_block = torch.sparse.FloatTensor(Adj_block_idx, Adj_block_elem, "
       "torch.Size([start_idx[-1],start_idx[-1]]))")
POOL = "graph_pool = torch.sparse.FloatTensor(idx, elem, torch.Size([len(batch_graph), start_idx[-1]]))"
X_LINE = "X_concat = torch.cat([graph.node_features for graph in batch_graph], 0).to(self.device)"

MASKED_BATCH_NORM = [
    "",
    "",
    "def masked_batch_norm(bn, x, node_mask=None):",
    '    """bn (a BatchNorm1d) applied to x, its training statistics taken over the rows node_mask',
    "    marks (a batch's real nodes; the padding rows left out), with bn's own weight, bias, eps,",
    '    momentum and running statistics."""',
    "    if node_mask is None or not bn.training:",
    "        return bn(x)",
    "    n = node_mask.sum()",
    "    mean = (x * node_mask).sum(0) / n",
    "    var = ((x - mean) * node_mask).pow(2).sum(0) / n",
    "    with torch.no_grad():",
    "        bn.running_mean.mul_(1 - bn.momentum).add_(bn.momentum * mean)",
    "        bn.running_var.mul_(1 - bn.momentum).add_(bn.momentum * var * n / (n - 1))",
    "        bn.num_batches_tracked.add_(1)",
    "    return (x - mean) * torch.rsqrt(var + bn.eps) * bn.weight + bn.bias",
]


def to_xla(r, device="xm.xla_device()", barrier_after_step=True):
    r.insert_after(MAIN, "import torch", ["import torch_xla.core.xla_model as xm"])
    r.replace(MAIN, DEVICE_LINE, f"device = {device}")
    if barrier_after_step:
        r.insert_after(MAIN, "optimizer.step()", ["xm.mark_step()"])


def dense_graph_ops(r, pad=True):
    """Dense adjacency and pooling matrices built on the host; with pad, of B * max_nodes nodes."""
    size = "self.padded_nodes(batch_graph)" if pad else "start_idx[-1]"
    r.replace(GCN, ADJ, [
        f"num_padded = {size}",
        "Adj_block = torch.zeros(num_padded, num_padded)",
        "Adj_block.index_put_((Adj_block_idx[0], Adj_block_idx[1]), Adj_block_elem, accumulate=True)",
    ])
    r.replace(GCN, POOL, [
        f"graph_pool = torch.zeros(len(batch_graph), {size})",
        "graph_pool.index_put_((idx[0], idx[1]), elem, accumulate=True)",
    ])
    r.replace_each(GCN, "pooled = torch.spmm(Adj_block, h)", "pooled = torch.mm(Adj_block, h)", count=2)
    r.replace(GCN, "pooled_h = torch.spmm(graph_pool, h)", "pooled_h = torch.mm(graph_pool, h)")
    if not pad:
        return
    r.insert_before(GCN, "def maxpool(self, h, padded_neighbor_list):", [
        "def padded_nodes(self, batch_graph):",
        "    # one shape per number of graphs: B graphs are padded to B * max_nodes nodes",
        "    return len(batch_graph) * self.max_nodes",
        "",
    ])
    r.replace(GCN, X_LINE, [
        "X_concat = torch.cat([graph.node_features for graph in batch_graph], 0)",
        "num_nodes, num_padded = X_concat.shape[0], self.padded_nodes(batch_graph)",
        "node_mask = (torch.arange(num_padded) < num_nodes).float().unsqueeze(1).to(self.device)",
        "padding = X_concat.new_zeros(num_padded - num_nodes, X_concat.shape[1])",
        "X_concat = torch.cat([X_concat, padding], 0).to(self.device)",
    ])
    r.insert_after(MAIN, MODEL_LINE, ["model.max_nodes = max(len(graph.g) for graph in graphs)"])


def masked_norms(r):
    """BatchNorm statistics over the real nodes only (the padding rows masked out)."""
    r.insert_after(MLP, "import torch.nn.functional as F", MASKED_BATCH_NORM)
    r.replace(MLP, "def forward(self, x):", "def forward(self, x, node_mask=None):")
    r.replace(MLP, "h = F.relu(self.batch_norms[layer](self.linears[layer](h)))",
              "h = F.relu(masked_batch_norm(self.batch_norms[layer], self.linears[layer](h), node_mask))")
    r.replace(GCN, "from mlp import MLP", "from mlp import MLP, masked_batch_norm")
    for name in ("next_layer_eps", "next_layer"):
        signature = f"def {name}(self, h, layer, padded_neighbor_list = None, Adj_block = None"
        r.replace(GCN, signature + "):", signature + ", node_mask = None):")
        r.replace(GCN, f"h = self.{name}(h, layer, Adj_block = Adj_block)",
                  f"h = self.{name}(h, layer, Adj_block = Adj_block, node_mask = node_mask)")
    r.replace_each(GCN, "pooled_rep = self.mlps[layer](pooled)",
                   "pooled_rep = self.mlps[layer](pooled, node_mask)", count=2)
    r.replace_each(GCN, "h = self.batch_norms[layer](pooled_rep)",
                   "h = masked_batch_norm(self.batch_norms[layer], pooled_rep, node_mask)", count=2)


def no_step_reads(r):
    r.replace(MAIN, STEP_READ, "loss = loss.detach()")


def apply(r):
    to_xla(r)
    dense_graph_ops(r)
    masked_norms(r)
    no_step_reads(r)
