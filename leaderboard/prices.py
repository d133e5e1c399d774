"""Versioned accelerator price table (USD per chip-hour) and the known corpus revisions.

`data/prices.csv` is checked in: every row names its source URL and the date it was read. A target
missing from the table is an error, never a silent zero (lesson from mini-swe-agent #388).
"""

from __future__ import annotations

import csv
import datetime as dt
from dataclasses import dataclass
from pathlib import Path

import duckdb
import pyarrow as pa

DATA_DIR = Path(__file__).resolve().parent / "data"
PRICES_CSV = DATA_DIR / "prices.csv"
KNOWN_REVISIONS = DATA_DIR / "known_revisions.txt"


class UnknownPrice(KeyError):
    """No price for this execution target in the price table."""


@dataclass(frozen=True)
class Price:
    price_version: str
    accelerator: str
    aliases: tuple[str, ...]
    usd_per_chip_hour: float
    pricing: str
    region: str
    source_url: str
    retrieved_on: dt.date
    note: str


def load_prices(path: Path = PRICES_CSV) -> list[Price]:
    """All rows of the price table (every version)."""
    with path.open(newline="") as fh:
        rows = list(csv.DictReader(fh))
    prices = []
    for row in rows:
        prices.append(
            Price(
                price_version=row["price_version"],
                accelerator=row["accelerator"].strip().lower(),
                aliases=tuple(a.strip().lower() for a in row["aliases"].split(";") if a.strip()),
                usd_per_chip_hour=float(row["usd_per_chip_hour"]),
                pricing=row["pricing"],
                region=row["region"],
                source_url=row["source_url"],
                retrieved_on=dt.date.fromisoformat(row["retrieved_on"]),
                note=row["note"],
            )
        )
    if not prices:
        raise ValueError(f"price table {path} is empty")
    return prices


def latest_version(prices: list[Price]) -> str:
    return max(p.price_version for p in prices)


def lookup(target: str, prices: list[Price], version: str | None = None) -> Price:
    """The price of `target` (name or alias, case-insensitive) in `version` (default: latest)."""
    version = version or latest_version(prices)
    key = target.strip().lower()
    for price in prices:
        if price.price_version == version and (key == price.accelerator or key in price.aliases):
            return price
    known = sorted({p.accelerator for p in prices if p.price_version == version})
    raise UnknownPrice(
        f"no price for execution target {target!r} in price table {version} "
        f"(known: {', '.join(known)}); add a row with its source to {PRICES_CSV}"
    )


def lookup_run(target: str, accelerator: str | None, prices: list[Price],
               version: str | None = None) -> Price:
    """The price of a run on `target`: the target's own row where it has one (`xla-cpu`), else the
    row of the accelerator the run's host reported (`tpu` on a v6e host: `tpu-v6e`; node.json)."""
    try:
        return lookup(target, prices, version)
    except UnknownPrice as exc:
        if not accelerator or not accelerator.startswith(("tpu-", "gpu-")):
            raise UnknownPrice(
                f"{exc.args[0]}; a TPU target is priced by the accelerator its host reported, and "
                f"this run's node.json names {accelerator or 'none'}: evaluate it again with this "
                "gpu2tpu on a host whose accelerator it detects (harness/node_facts.py)"
            ) from None
    return lookup(accelerator, prices, version)


def prices_arrow(prices: list[Price]) -> pa.Table:
    return pa.table(
        {
            "price_version": [p.price_version for p in prices],
            "accelerator": [p.accelerator for p in prices],
            "aliases": [list(p.aliases) for p in prices],
            "usd_per_chip_hour": [p.usd_per_chip_hour for p in prices],
            "pricing": [p.pricing for p in prices],
            "region": [p.region for p in prices],
            "source_url": [p.source_url for p in prices],
            "retrieved_on": [p.retrieved_on for p in prices],
            "note": [p.note for p in prices],
        }
    )


def sync_prices(con: duckdb.DuckDBPyConnection, prices: list[Price]) -> None:
    """Insert price rows the store does not have yet (price versions are immutable)."""
    con.register("_new_prices", prices_arrow(prices))
    try:
        con.execute(
            "INSERT INTO prices BY NAME SELECT n.* FROM _new_prices n ANTI JOIN prices p "
            "ON n.price_version = p.price_version AND n.accelerator = p.accelerator"
        )
    finally:
        con.unregister("_new_prices")


def known_corpus_revisions(path: Path | None = None) -> set[str]:
    """`gpu2tpu.corpus.revision()` plus every revision listed in the checked-in file."""
    import gpu2tpu.corpus as corpus

    path = path or KNOWN_REVISIONS
    known = {corpus.revision()}
    if path.exists():
        for line in path.read_text().splitlines():
            line = line.split("#", 1)[0].strip()
            if line:
                known.add(line)
    return known
