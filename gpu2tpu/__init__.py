"""gpu2tpu: a benchmark for agents that migrate PyTorch research code from GPUs to TPUs."""

__version__ = "0.1.0"

# Harness versions whose reports the leaderboard accepts (the criteria they were graded with).
KNOWN_HARNESS_VERSIONS = ("0.1.0",)
