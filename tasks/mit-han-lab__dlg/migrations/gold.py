"""Gold migration of mit-han-lab/dlg to PyTorch/XLA.

The network and the gradient matching (a forward, a create_graph gradient and a backward through
it, at every closure evaluation) run on the XLA device. LBFGS itself stays on the host with the
dummy image and label it optimises: it reads its loss and gradients back at every evaluation by
design (its tests and line search are Python control flow), and on the device its history of up
to 100 directions makes a new graph at almost every evaluation (887 compilations for two steps on
XLA:CPU, measured). Each closure moves the dummy tensors to the device (differentiably) and its
backward brings their gradients home. LeNet's weights are initialised on the host, as the original
does, then moved: `weights_init` draws with `uniform_`, which on the XLA device would come from its
own generator.
"""


def to_xla(r):
    r.insert_after("main.py", "import torch", ["import torch_xla"])
    r.replace("main.py", 'device = "cpu"', "device = torch_xla.device()")
    r.replace("main.py", "dummy_data = torch.randn(gt_data.size()).to(device).requires_grad_(True)",
              "dummy_data = torch.randn(gt_data.size()).requires_grad_(True)  # LBFGS's, on the host")
    r.replace("main.py", "dummy_label = torch.randn(gt_onehot_label.size()).to(device).requires_grad_(True)",
              "dummy_label = torch.randn(gt_onehot_label.size()).requires_grad_(True)")
    r.replace("main.py", "dummy_pred = net(dummy_data)", "dummy_pred = net(dummy_data.to(device))")
    r.replace("main.py", "dummy_onehot_label = F.softmax(dummy_label, dim=-1)",
              "dummy_onehot_label = F.softmax(dummy_label.to(device), dim=-1)")


def init_on_host(r):
    r.replace("main.py", "net = LeNet().to(device)", "net = LeNet()")
    r.insert_after("main.py", "net.apply(weights_init)", ["net = net.to(device)  # initialised on the host"])


def apply(r):
    to_xla(r)
    init_on_host(r)
