"""Subcommands of this package (placeholder until implemented)."""

from __future__ import annotations

import argparse


def register(sub: argparse._SubParsersAction) -> None:
    """Add this package's subcommands to the `gpu2tpu` parser."""
