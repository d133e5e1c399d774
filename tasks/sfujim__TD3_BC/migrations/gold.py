"""Gold migration of sfujim/TD3_BC (offline TD3+BC) to PyTorch/XLA.

Both places that pick the device CUDA-style (TD3_BC.py's module-level `device`, the ReplayBuffer's
`self.device` in utils.py) take the XLA device, so the actor, the critic, their targets (deep
copies made after the move) and the sampled batches live there; the replay buffer itself stays a
NumPy array on the host, sampled with NumPy's generator as upstream. The target-policy noise is
drawn from the XLA generator, seeded beside torch's. Each training iteration (critic step, every
second iteration the actor step and the soft target updates) ends with torch_xla.sync(), so one
graph per kind of iteration is compiled and reused. Evaluation reads one action per environment
step back to the host, as the original does; the saved state_dicts load on the CPU.
"""

MAIN, AGENT, BUFFER = "main.py", "TD3_BC.py", "utils.py"
CUDA_DEVICE = 'torch.device("cuda" if torch.cuda.is_available() else "cpu")'


def devices(r, device="torch_xla.device()"):
    r.insert_after(AGENT, "import torch", ["import torch_xla"])
    r.replace(AGENT, f"device = {CUDA_DEVICE}", f"device = {device}")
    r.insert_after(BUFFER, "import torch", ["import torch_xla"])
    r.replace(BUFFER, f"self.device = {CUDA_DEVICE}", f"self.device = {device}")


def seed_and_sync(r):
    r.insert_after(MAIN, "import torch", ["import torch_xla"])
    r.insert_after(MAIN, "torch.manual_seed(args.seed)", ["torch_xla.manual_seed(args.seed)"])
    r.insert_after(MAIN, "policy.train(replay_buffer, args.batch_size)", ["torch_xla.sync()"])


def apply(r):
    devices(r)
    seed_and_sync(r)
