"""Baseline migration agent on the Anthropic API."""
