"""Model prices and the cost of each Messages API response (exact decimal arithmetic)."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from decimal import Decimal
from pathlib import Path
from typing import Any

import yaml

from gpu2tpu.errors import UserError

PRICE_TABLE = Path(__file__).resolve().parent / "prices.yaml"
_MTOK = Decimal(1_000_000)
_DATED = re.compile(r"^(.*)-\d{8}$")  # claude-sonnet-4-5-20250929 -> claude-sonnet-4-5
# Anthropic's published multipliers, used when only input/output prices are given.
_CACHE_WRITE_X = Decimal("1.25")
_CACHE_WRITE_1H_X = Decimal(2)
_CACHE_READ_X = Decimal("0.1")


@dataclass(frozen=True)
class Price:
    """USD per million tokens for one model."""

    model: str
    input: Decimal
    output: Decimal
    cache_write: Decimal
    cache_write_1h: Decimal
    cache_read: Decimal
    table_version: str  # price-table version, or "override"
    source: str

    def to_json(self) -> dict[str, Any]:
        return {
            "model": self.model,
            "per_mtok_usd": {
                "input": str(self.input),
                "output": str(self.output),
                "cache_write": str(self.cache_write),
                "cache_write_1h": str(self.cache_write_1h),
                "cache_read": str(self.cache_read),
            },
            "table_version": self.table_version,
            "source": self.source,
        }


@dataclass
class Usage:
    """Token counts summed over responses (fields as in the API's `usage`)."""

    input_tokens: int = 0
    output_tokens: int = 0
    cache_creation_input_tokens: int = 0  # all cache writes (5-minute and 1-hour)
    cache_creation_1h_input_tokens: int = 0  # the 1-hour part of the above
    cache_read_input_tokens: int = 0

    @classmethod
    def from_api(cls, usage: Any) -> Usage:
        """Read an SDK `Usage` object (or dict); missing or null fields count as 0."""
        get = usage.get if isinstance(usage, dict) else lambda k: getattr(usage, k, None)
        one_hour = 0
        creation = get("cache_creation")
        if creation is not None:
            c_get = (
                creation.get
                if isinstance(creation, dict)
                else lambda k: getattr(creation, k, None)
            )
            one_hour = int(c_get("ephemeral_1h_input_tokens") or 0)
        return cls(
            input_tokens=int(get("input_tokens") or 0),
            output_tokens=int(get("output_tokens") or 0),
            cache_creation_input_tokens=int(get("cache_creation_input_tokens") or 0),
            cache_creation_1h_input_tokens=one_hour,
            cache_read_input_tokens=int(get("cache_read_input_tokens") or 0),
        )

    def add(self, other: Usage) -> None:
        for name in self.__dataclass_fields__:
            setattr(self, name, getattr(self, name) + getattr(other, name))

    @property
    def prompt_tokens(self) -> int:
        """Every input token the model read: uncached + cache writes + cache reads."""
        return self.input_tokens + self.cache_creation_input_tokens + self.cache_read_input_tokens

    def to_json(self) -> dict[str, int]:
        return {name: getattr(self, name) for name in self.__dataclass_fields__}


def cost_usd(usage: Usage, price: Price) -> Decimal:
    """Exact cost of `usage` at `price`."""
    five_minute = usage.cache_creation_input_tokens - usage.cache_creation_1h_input_tokens
    total = (
        usage.input_tokens * price.input
        + usage.output_tokens * price.output
        + five_minute * price.cache_write
        + usage.cache_creation_1h_input_tokens * price.cache_write_1h
        + usage.cache_read_input_tokens * price.cache_read
    )
    return total / _MTOK


@dataclass
class PriceTable:
    version: str
    source: str
    retrieved: str
    models: dict[str, dict[str, Any]]
    aliases: dict[str, str] = field(default_factory=dict)

    @classmethod
    def load(cls, path: Path = PRICE_TABLE) -> PriceTable:
        try:
            data = yaml.safe_load(Path(path).read_text())
        except (OSError, yaml.YAMLError) as exc:
            raise UserError(f"cannot read price table {path}: {exc}") from exc
        if not isinstance(data, dict) or data.get("schema_version") != 1:
            raise UserError(f"{path}: not a price table (need schema_version: 1)")
        for key in ("version", "source", "models"):
            if key not in data:
                raise UserError(f"{path}: price table lacks `{key}`")
        return cls(
            version=str(data["version"]),
            source=str(data["source"]),
            retrieved=str(data.get("retrieved", "")),
            models=dict(data["models"]),
            aliases=dict(data.get("aliases") or {}),
        )

    def resolve(self, model: str) -> str | None:
        """The table's name for `model` (exact, alias, or without a -YYYYMMDD suffix)."""
        candidates = [model]
        dated = _DATED.match(model)
        if dated:
            candidates.append(dated.group(1))
        for name in candidates:
            name = self.aliases.get(name, name)
            if name in self.models:
                return name
        return None

    def price(self, model: str) -> Price:
        name = self.resolve(model)
        if name is None:
            raise UserError(
                f"no price for model {model!r} in price table {self.version}; "
                "pass --price-per-mtok IN,OUT (USD per million input/output tokens) "
                "or add the model to the price table"
            )
        row = self.models[name]
        try:
            inp = Decimal(str(row["input"]))
            return Price(
                model=model,
                input=inp,
                output=Decimal(str(row["output"])),
                cache_write=Decimal(str(row.get("cache_write", inp * _CACHE_WRITE_X))),
                cache_write_1h=Decimal(str(row.get("cache_write_1h", inp * _CACHE_WRITE_1H_X))),
                cache_read=Decimal(str(row.get("cache_read", inp * _CACHE_READ_X))),
                table_version=self.version,
                source=self.source,
            )
        except (KeyError, ArithmeticError) as exc:
            raise UserError(f"price table {self.version}: bad row for {name}: {exc}") from exc


def parse_price_override(model: str, text: str) -> Price:
    """`IN,OUT` or `IN,OUT,CACHE_WRITE,CACHE_READ` in USD per million tokens."""
    parts = [p.strip() for p in text.split(",")]
    if len(parts) not in (2, 4):
        raise UserError(
            f"--price-per-mtok {text!r}: give IN,OUT or IN,OUT,CACHE_WRITE,CACHE_READ "
            "(USD per million tokens), e.g. 3,15"
        )
    try:
        values = [Decimal(p) for p in parts]
    except ArithmeticError as exc:
        raise UserError(f"--price-per-mtok {text!r}: not numbers") from exc
    if any(not v.is_finite() or v < 0 for v in values):
        raise UserError(f"--price-per-mtok {text!r}: prices must be finite and >= 0")
    inp, out = values[0], values[1]
    write, read = (values[2], values[3]) if len(values) == 4 else (inp * _CACHE_WRITE_X,
                                                                    inp * _CACHE_READ_X)
    return Price(
        model=model,
        input=inp,
        output=out,
        cache_write=write,
        cache_write_1h=inp * _CACHE_WRITE_1H_X,
        cache_read=read,
        table_version="override",
        source="--price-per-mtok",
    )


def price_for(model: str, override: str | None = None, table_path: Path | None = None) -> Price:
    """The price to charge `model` at: the override when given, else the table's row."""
    if override:
        return parse_price_override(model, override)
    return PriceTable.load(table_path or PRICE_TABLE).price(model)
