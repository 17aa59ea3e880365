"""The price table of replay's cost line (Anthropic list prices per million tokens, ``prices.yaml``)."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from monitor.errors import ReplayError
from monitor.replay.judge import (
    CaseResult,
    read_text,
)

if TYPE_CHECKING:
    pass


PRICES_PATH = Path(__file__).resolve().parent / "prices.yaml"


# -- prices ---------------------------------------------------------------------------------------
class _Price(BaseModel):
    model_config = ConfigDict(extra="forbid")
    input: float = Field(ge=0)
    output: float = Field(ge=0)


class PriceTable(BaseModel):
    """A price table file (``monitor/prices.yaml`` shape): dollars per ``per_tokens`` tokens per model."""

    model_config = ConfigDict(extra="forbid")
    source: str
    currency: str = "USD"
    per_tokens: int = Field(default=1_000_000, gt=0)
    models: dict[str, _Price]

    def price(self, model: str) -> _Price | None:
        """The exact model's price, else that of its longest listed prefix followed by ``-``."""
        if model in self.models:
            return self.models[model]
        prefixes = [k for k in self.models if model.startswith(k + "-")]
        return self.models[max(prefixes, key=len)] if prefixes else None

    def cost(self, model: str, input_tokens: int, output_tokens: int) -> float | None:
        """Dollars for the tokens, or ``None`` when the model has no price."""
        p = self.price(model)
        if p is None:
            return None
        return (input_tokens * p.input + output_tokens * p.output) / self.per_tokens


def load_prices(path: Path | None = None) -> PriceTable:
    """Read a price table (default :data:`PRICES_PATH`). Raises ``ReplayError`` naming the file."""
    p = path or PRICES_PATH
    text = read_text(p, "price table ")
    try:
        return PriceTable.model_validate(yaml.safe_load(text))
    except (yaml.YAMLError, ValidationError) as exc:
        raise ReplayError(f"{p}: invalid price table: {exc}") from None


@dataclass(frozen=True, slots=True)
class Cost:
    """Tokens over all cases and their cost; ``dollars`` is ``None`` when a model had no price
    (``unpriced`` names those models)."""

    input_tokens: int
    output_tokens: int
    dollars: float | None
    unpriced: tuple[str, ...]


def total_cost(results: Iterable[CaseResult], prices: PriceTable) -> Cost:
    """Sum the tokens of ``results`` and price them per model."""
    tin = tout = 0
    dollars = 0.0
    unpriced: set[str] = set()
    for r in results:
        tin += r.input_tokens
        tout += r.output_tokens
        if r.input_tokens or r.output_tokens:
            c = prices.cost(r.model or "", r.input_tokens, r.output_tokens)
            if c is None:
                unpriced.add(r.model or "(unknown)")
            else:
                dollars += c
    return Cost(tin, tout, None if unpriced else dollars, tuple(sorted(unpriced)))
