"""Price table and cost arithmetic."""

from __future__ import annotations

from decimal import Decimal
from pathlib import Path

import pytest

from gpu2tpu.agent.pricing import (
    PriceTable,
    Usage,
    cost_usd,
    parse_price_override,
    price_for,
)
from gpu2tpu.errors import UserError


def test_table_is_versioned_with_source() -> None:
    table = PriceTable.load()
    assert table.version and table.source.startswith("https://")
    assert table.retrieved


def test_dated_snapshot_and_alias_resolve() -> None:
    table = PriceTable.load()
    assert table.resolve("claude-sonnet-4-5-20250929") == "claude-sonnet-4-5"
    assert table.resolve("claude-sonnet-4-20250514") == "claude-sonnet-4-0"
    assert table.resolve("claude-haiku-4-5") == "claude-haiku-4-5"
    assert table.resolve("gpt-4") is None


def test_cost_is_exact_for_every_token_kind() -> None:
    price = price_for("claude-sonnet-4-5")  # 3 in, 15 out, 3.75 write, 6 write-1h, 0.30 read
    use = Usage(input_tokens=1234, output_tokens=567, cache_creation_input_tokens=2000,
                cache_creation_1h_input_tokens=500, cache_read_input_tokens=10_000)
    expected = (Decimal(1234) * 3 + Decimal(567) * 15 + Decimal(1500) * Decimal("3.75")
                + Decimal(500) * 6 + Decimal(10_000) * Decimal("0.30")) / 1_000_000
    assert cost_usd(use, price) == expected == Decimal("0.023832")


def test_usage_from_api_dict_with_nulls() -> None:
    use = Usage.from_api({"input_tokens": 5, "output_tokens": 2,
                          "cache_creation_input_tokens": None,
                          "cache_creation": {"ephemeral_1h_input_tokens": 3}})
    assert use.to_json() == {"input_tokens": 5, "output_tokens": 2,
                             "cache_creation_input_tokens": 0,
                             "cache_creation_1h_input_tokens": 3, "cache_read_input_tokens": 0}


def test_unknown_model_is_an_error_naming_the_fix() -> None:
    with pytest.raises(UserError, match="--price-per-mtok"):
        price_for("mystery-model-1")


def test_override_two_and_four_values() -> None:
    p = parse_price_override("mystery", "2,10")
    assert (p.input, p.output, p.cache_write, p.cache_read) == (
        Decimal(2), Decimal(10), Decimal("2.50"), Decimal("0.2"))
    assert p.table_version == "override"
    p4 = parse_price_override("mystery", "1,2,3,4")
    assert (p4.cache_write, p4.cache_read) == (Decimal(3), Decimal(4))
    assert price_for("mystery", "1,2").input == Decimal(1)


@pytest.mark.parametrize("bad", ["3", "a,b", "1,-2", "1,2,3", "nan,1"])
def test_bad_override_refused(bad: str) -> None:
    with pytest.raises(UserError):
        parse_price_override("m", bad)


def test_bad_table_refused(tmp_path: Path) -> None:
    path = tmp_path / "p.yaml"
    path.write_text("models: {}\n")
    with pytest.raises(UserError, match="schema_version"):
        PriceTable.load(path)
