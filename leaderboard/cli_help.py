"""Help texts of `gpu2tpu submit` and `gpu2tpu leaderboard ...`: view descriptions and the
example each command's `--help` ends with (tests/leaderboard/test_cli_help.py runs them through
the parser)."""

from __future__ import annotations

from typing import Any

from gpu2tpu.cli_examples import Examples

VIEW_HELP = {
    "agents": "Per agent and model: tasks, rate passing each criterion, migrated rate, silent "
    "share of failures, overclaim, interventions, agent and execution USD per task, median speed "
    "ratio vs reference; ranked by migrated rate, ties by total cost.",
    "tasks": "Per task: how many agents migrated it and which criterion stops the rest.",
    "failures": "The failure taxonomy: counts and silent share per category.",
    "costs": "Agent vs execution cost, per agent and per task.",
    "calibration": "Claimed success vs verified migration, per agent.",
}


# `--help` of each command ends with these (shown as written: one command a line)
EXAMPLES = {
    "submit": "gpu2tpu submit runs/my-run --metadata meta.yaml     # self-reported\n"
    "  gpu2tpu submit --predictions preds.jsonl --metadata meta.yaml --out bundle.tar.gz",
    "leaderboard": "gpu2tpu leaderboard --trust all --format csv",
    "agents": "gpu2tpu leaderboard agents --trust verified --format markdown",
    "tasks": "gpu2tpu leaderboard tasks --task cifar_amp --trust all",
    "failures": "gpu2tpu leaderboard failures --agent my-agent --trust all",
    "costs": "gpu2tpu leaderboard costs --format csv > costs.csv",
    "calibration": "gpu2tpu leaderboard calibration --from hf://datasets/OWNER/NAME",
    "sql": "gpu2tpu leaderboard sql \"SELECT agent, count(*) FROM evaluations GROUP BY 1\"",
    "export": "gpu2tpu leaderboard export --to leaderboard-export",
    "publish": "gpu2tpu leaderboard publish --repo-id OWNER/NAME",
    "site": "gpu2tpu leaderboard site --to leaderboard-site --runs runs   # runs/<run_id>/ of evaluate",
    "verify": "gpu2tpu leaderboard verify submission.tar.gz --runs maintainer-runs",
    "migrate": "gpu2tpu leaderboard migrate --db ~/.cache/gpu2tpu/leaderboard.duckdb",
}
WAIT_NOTE = (" A command that finds the store in use by another waits for it (at most "
              "$GPU2TPU_DB_WAIT seconds, default 60) and says so.")


def example(name: str) -> dict[str, Any]:
    lines = EXAMPLES[name].splitlines()
    return {"epilog": f"example{'s' if len(lines) > 1 else ''}:\n  " + "\n".join(lines),
            "formatter_class": Examples}
