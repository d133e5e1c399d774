"""Gold migration of vwxyzjn/cleanrl's PPO (cleanrl/ppo.py, CartPole) to PyTorch/XLA.

The agent trains on the XLA device (the project's --cuda switch still selects the accelerator).
The rollout stays on the host, where the environments are: its buffers are CPU tensors, each
environment step moves the observations to the device for the policy's forward and reads the
action, log-probability and value back after one mark_step (writing into device buffers at the
step index would be a graph per index). Advantages are computed on the host; the flattened batch
goes to the device once per iteration for the update epochs. The clip fraction, read with .item()
after every minibatch in the original, stays a device tensor read once per iteration; each
optimizer step ends with a mark_step.
"""

PPO = "cleanrl/ppo.py"
ON_HOST = [  # rollout buffers and environment outputs: .to(device) -> .to(host)
    "obs = torch.zeros((args.num_steps, args.num_envs) + envs.single_observation_space.shape).to(device)",
    "actions = torch.zeros((args.num_steps, args.num_envs) + envs.single_action_space.shape).to(device)",
    "logprobs = torch.zeros((args.num_steps, args.num_envs)).to(device)",
    "rewards = torch.zeros((args.num_steps, args.num_envs)).to(device)",
    "dones = torch.zeros((args.num_steps, args.num_envs)).to(device)",
    "values = torch.zeros((args.num_steps, args.num_envs)).to(device)",
    "next_obs = torch.Tensor(next_obs).to(device)",
    "next_done = torch.zeros(args.num_envs).to(device)",
    "rewards[step] = torch.tensor(reward).to(device).view(-1)",
    "next_obs, next_done = torch.Tensor(next_obs).to(device), torch.Tensor(next_done).to(device)",
    "advantages = torch.zeros_like(rewards).to(device)",
]
BATCH = [  # the flattened batch, once per iteration: host -> device
    "b_obs = obs.reshape((-1,) + envs.single_observation_space.shape)",
    "b_logprobs = logprobs.reshape(-1)",
    "b_actions = actions.reshape((-1,) + envs.single_action_space.shape)",
    "b_advantages = advantages.reshape(-1)",
    "b_returns = returns.reshape(-1)",
    "b_values = values.reshape(-1)",
]


def to_xla(r, device='xm.xla_device() if args.cuda else torch.device("cpu")'):
    r.insert_after(PPO, "import torch", ["import torch_xla.core.xla_model as xm"])
    r.replace(PPO, 'device = torch.device("cuda" if torch.cuda.is_available() and args.cuda else "cpu")',
              [f"device = {device}", 'host = torch.device("cpu")'])
    for line in ON_HOST:
        r.replace(PPO, line, line.replace(".to(device)", ".to(host)"))
    r.replace(PPO, "action, logprob, _, value = agent.get_action_and_value(next_obs)",
              ["action, logprob, _, value = agent.get_action_and_value(next_obs.to(device))",
               "xm.mark_step()",
               "action, logprob, value = action.to(host), logprob.to(host), value.to(host)"])
    r.replace(PPO, "next_value = agent.get_value(next_obs).reshape(1, -1)",
              "next_value = agent.get_value(next_obs.to(device)).to(host).reshape(1, -1)")
    for line in BATCH:
        r.replace(PPO, line, line + ".to(device)")
    r.insert_after(PPO, "optimizer.step()", ["xm.mark_step()"])


def clipfrac_on_device(r):
    r.replace(PPO, "clipfracs += [((ratio - 1.0).abs() > args.clip_coef).float().mean().item()]",
              "clipfracs += [((ratio - 1.0).abs() > args.clip_coef).float().mean()]")
    r.replace(PPO, 'writer.add_scalar("losses/clipfrac", np.mean(clipfracs), global_step)',
              'writer.add_scalar("losses/clipfrac", torch.stack(clipfracs).mean().item(), global_step)')


def apply(r):
    to_xla(r)
    clipfrac_on_device(r)
