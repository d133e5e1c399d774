"""The examples each `--help` ends with, for the commands that do not write their own (evaluate,
report, demo, references and the leaderboard's commands do): one place to keep them in step with
the README. `gpu2tpu.cli.build_parser` attaches them; tests/test_help_examples.py fails for a command
without one, and parses every example line as the CLI would."""

from __future__ import annotations

import argparse

# command path ("" is `gpu2tpu` itself) -> example lines, shown as written
EXAMPLES = {
    "": """\
gpu2tpu demo                # grade a practice task's gold and three broken migrations
gpu2tpu evaluate --predictions examples/preds.jsonl --run-id my-run
gpu2tpu report runs/my-run
gpu2tpu validate --help     # every command's options, with examples""",
    "validate": """\
gpu2tpu validate --tasks cifar_amp                  # one task's labelled suite
gpu2tpu validate --tasks OWNER__NAME --task-dir mytasks --sources DIR --workers 2
gpu2tpu validate --changed                          # what CI grades
gpu2tpu validate --all --workers 2                  # every task's whole suite (hours)
gpu2tpu validate --regrade runs/validate            # runs nothing, writes no record""",
    "tasks": """\
gpu2tpu tasks
gpu2tpu tasks --task-dir mytasks                    # with the tasks in mytasks/""",
    "tasks fetch": """\
gpu2tpu tasks fetch                                 # every upstream task (cache, then GitHub)
gpu2tpu tasks fetch tkipf__pygcn --sources DIR      # from the snapshots or mirrors in DIR""",
    "tasks materialise": """\
gpu2tpu tasks materialise cifar_amp --to /tmp/cifar_amp-start
gpu2tpu tasks materialise cifar_amp --migration broken/clip_changed --to /tmp/cifar_amp-clip
gpu2tpu tasks materialise tkipf__pygcn --migration gold --to /tmp/pygcn-gold""",
    "tasks table": "gpu2tpu tasks table --kind practice",
    "tasks pin": """\
gpu2tpu tasks pin OWNER__NAME --sources DIR         # a snapshot or mirror in DIR
gpu2tpu tasks pin ./pygcn --repo tkipf/pygcn        # a local git checkout (HEAD)""",
    "tasks new": """\
gpu2tpu tasks new OWNER__NAME --dir mytasks --sources DIR
gpu2tpu validate --tasks OWNER__NAME --task-dir mytasks --sources DIR   # once filled in""",
    "agent": """\
gpu2tpu agent run --tasks cifar_amp --model claude-sonnet-4-5 --out preds.jsonl
gpu2tpu agent prices""",
    "agent run": """\
gpu2tpu agent run --tasks cifar_amp --model claude-sonnet-4-5 --out preds.jsonl
gpu2tpu agent run --tasks cifar_amp varlen_cls --model claude-sonnet-4-5 --out preds.jsonl --attempts 3
gpu2tpu evaluate --predictions preds.jsonl --run-id my-agent   # then grade them""",
    "agent prices": "gpu2tpu agent prices",
    "corpus": """\
gpu2tpu corpus stats
gpu2tpu corpus download --to corpus-data""",
    "corpus scan": """\
gpu2tpu corpus scan path/to/checkout --json
gpu2tpu corpus scan --all                           # records with a snapshot under --mirror-root""",
    "corpus check": """\
gpu2tpu corpus check                                # in a checkout: corpus/projects
gpu2tpu corpus check corpus/projects --expect-count 148""",
    "corpus build": "gpu2tpu corpus build --out /tmp/corpus-data",
    "corpus select": "gpu2tpu corpus select",
    "corpus stats": "gpu2tpu corpus stats",
    "corpus download": """\
gpu2tpu corpus download
gpu2tpu corpus download --to corpus-data""",
    "corpus publish": "gpu2tpu corpus publish --repo-id OWNER/NAME --dry-run",
    "corpus environment": """\
gpu2tpu corpus environment path/to/checkout
gpu2tpu corpus environment --all --sources DIR""",
    "corpus problem": "gpu2tpu corpus problem corpus/projects/tkipf__pygcn.yaml",
}


class Examples(argparse.HelpFormatter):
    """Descriptions wrap as usual; an epilog of examples keeps its lines as written."""

    def _fill_text(self, text: str, width: int, indent: str) -> str:
        if text.startswith("example"):
            return "".join(indent + line for line in text.splitlines(keepends=True))
        return super()._fill_text(text, width, indent)


def epilog(lines: str) -> str:
    """`example:` (or `examples:`) and the lines, indented."""
    rows = lines.splitlines()
    return f"example{'s' if len(rows) > 1 else ''}:\n" + "\n".join(f"  {row}" for row in rows)


def subparsers(parser: argparse.ArgumentParser, path: str = "") -> dict[str, argparse.ArgumentParser]:
    """Every parser below `parser` (and itself) by command path, e.g. "tasks fetch"."""
    found = {path: parser}
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                found.update(subparsers(sub, f"{path} {name}".strip()))
    return found


def add_examples(parser: argparse.ArgumentParser) -> None:
    """Attach EXAMPLES to the parsers whose help shows none of their own."""
    for path, sub in subparsers(parser).items():
        if path not in EXAMPLES or "example" in (sub.epilog or ""):
            continue
        if sub.epilog:  # an epilog of its own (shown raw): the examples follow it
            sub.epilog = f"{sub.epilog}\n\n{epilog(EXAMPLES[path])}"
        else:
            sub.epilog, sub.formatter_class = epilog(EXAMPLES[path]), Examples
