"""What a call cost, and what re-processing its cached history cost, from list prices per model.

The table is the bundled list (`core.kernel.price_list`: the providers' published prices, dated and sourced)
plus what `--prices FILE` adds or overrides, in the schema's format (USD per million tokens):

    {"claude-sonnet-4-5": {"input": 3.0, "output": 15.0, "cache_write_5m": 3.75, "cache_write_1h": 6.0,
                           "cache_read": 0.30}}

(`cached_input` is accepted for `cache_read`, the name OpenAI gives it; `max_prompt` caps the prompt size a
price holds for.) An entry for a bundled model overrides only the keys it gives.

One formula covers both usage styles, since every agent's tokens keep the Anthropic mapping (prompt = input +
cache_read + cache_write): uncached input at the input price, cache reads at the read price (OpenAI's cached
input), writes at the write price of their lifetime (the 5 m / 1 h split of `usage.cache_creation`, 5 m when
the usage does not say; OpenAI bills a write as plain input), output at the output price. A model the table
does not know, a price the table lacks for tokens the call has, or a prompt past `max_prompt` gives None,
never a guess.

The waste of a call is its `excess` (the cache rule: tokens processed again that a warm cache would have
read) times what those tokens cost beyond a cache hit. The excess is taken from what the call wrote first
(Anthropic: at the write price of this call's write lifetime, minus the read price) and the rest from its
uncached input (input price minus read price): OpenAI-style usage writes nothing, so all of its excess is
uncached input at the input price minus the cached-input price, as the schema has it.
"""

from __future__ import annotations

import json
import math
import re
from pathlib import Path
from typing import Any

from msgspec import Struct
from msgspec.structs import replace

from core.kernel import price_list

__all__ = [
    "BUNDLED",
    "Price",
    "PriceFileError",
    "PriceTable",
    "call_cost",
    "excess_cost",
    "load_prices",
    "normalize_model",
]

MTOK = 1_000_000
_KEYS = ("input", "output", "cache_write_5m", "cache_write_1h", "cache_read")
_ALIASES = {"cached_input": "cache_read"}
_DATE = re.compile(r"-(?:\d{8}|\d{4}-\d{2}-\d{2})$")
_OPENAI_MINOR = re.compile(r"^gpt-(\d+)-(\d+)(?=-|$)")


class Price(Struct, frozen=True):
    """USD per million tokens; None where the table has no price for that kind of token."""

    input: float | None = None
    output: float | None = None
    cache_write_5m: float | None = None
    cache_write_1h: float | None = None
    cache_read: float | None = None
    #: the price holds for prompts up to this many tokens (a longer one is billed otherwise: unpriced here)
    max_prompt: int | None = None

    def as_dict(self) -> dict[str, float | int | None]:
        return {key: getattr(self, key) for key in (*_KEYS, "max_prompt")}


class PriceFileError(ValueError):
    """A `--prices` file that cannot be used, with a one-line message naming the file and the entry."""


class PriceTable(Struct, frozen=True):
    """Prices by model id: the bundled list with a file's entries on top."""

    prices: dict[str, Price]
    source: str = price_list.SOURCE
    as_of: str | None = price_list.AS_OF
    urls: tuple[str, ...] = price_list.URLS
    #: the `--prices` file and the model ids it gave (None / () for the bundled list alone)
    file: str | None = None
    overridden: tuple[str, ...] = ()

    def lookup(self, model: str | None) -> Price | None:
        """The price of a model id as an agent wrote it (`claude-sonnet-4-20250514`, `anthropic/claude-…`,
        `claude-opus-4-6[1m]`): exact first, then without provider prefix, context suffix and date."""
        if not model:
            return None
        raw = model.strip().lower()
        found = self.prices.get(raw)
        return found if found is not None else self.prices.get(normalize_model(raw))

    def describe(self) -> dict[str, Any]:
        """The report's `waste.pricing`."""
        out: dict[str, Any] = {"source": self.source, "as_of": self.as_of, "urls": list(self.urls)}
        if self.file is not None:
            out["file"] = self.file
            out["overridden"] = list(self.overridden)
        return out


def normalize_model(model: str) -> str:
    """A model id without provider prefix (`anthropic/`, `anthropic:`), context suffix (`[1m]`) or release date,
    an OpenAI minor version with its dot (`gpt-5-1` -> `gpt-5.1`)."""
    name = model.strip().lower()
    name = re.split(r"[/:]", name)[-1]  # `anthropic/claude-…` (pi), `anthropic:claude-…` (mux)
    name = re.sub(r"\[[^\]]*\]$", "", name)
    name = _DATE.sub("", name)
    return _OPENAI_MINOR.sub(r"gpt-\1.\2", name)  # `gpt-5-1-codex-2025-11-13` (Codex) is `gpt-5.1-codex`


def _bundled() -> PriceTable:
    prices: dict[str, Price] = {}
    for model, (inp, out, w5, w1h, read, cap) in price_list.ANTHROPIC.items():
        prices[model] = Price(inp, out, w5, w1h, read, cap)
    for model, (inp, cached, out, cap) in price_list.OPENAI.items():
        prices[model] = Price(inp, out, inp, inp, cached, cap)  # OpenAI bills a cache write as input
    return PriceTable(prices)


BUNDLED = _bundled()


def load_prices(path: str | Path, base: PriceTable = BUNDLED) -> PriceTable:
    """`base` with the entries of a `--prices` JSON file on top; `PriceFileError` says what is wrong."""
    name = str(path)
    try:
        data = json.loads(Path(path).read_bytes())
    except OSError as exc:
        raise PriceFileError(f"--prices {name}: cannot read it ({exc.strerror or exc})") from None
    except (ValueError, UnicodeDecodeError) as exc:
        raise PriceFileError(f"--prices {name}: not JSON ({exc})") from None
    if not isinstance(data, dict) or not data:
        raise PriceFileError(f"--prices {name}: expected an object of model id -> prices (USD per million tokens)")
    prices = dict(base.prices)
    given: list[str] = []
    for model, entry in data.items():
        if not isinstance(model, str) or not model.strip():
            raise PriceFileError(f"--prices {name}: an empty model id")
        if not isinstance(entry, dict) or not entry:
            example = '{"input": 3.0, "output": 15.0, "cache_write_5m": 3.75, "cache_read": 0.3}'
            raise PriceFileError(f"--prices {name}: {model!r}: expected an object such as {example}")
        fields: dict[str, Any] = {}
        for key, value in entry.items():
            field = _ALIASES.get(key, key)
            if field not in (*_KEYS, "max_prompt"):
                known = ", ".join((*_KEYS, *_ALIASES, "max_prompt"))
                raise PriceFileError(f"--prices {name}: {model!r}: unknown key {key!r} (known: {known})")
            if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value) or value < 0:
                raise PriceFileError(f"--prices {name}: {model!r}: {key} must be a number >= 0, not {value!r}")
            fields[field] = int(value) if field == "max_prompt" else float(value)
        key = model.strip().lower()
        old = prices.get(key) or prices.get(normalize_model(key))
        prices[key] = replace(old, **fields) if old is not None else Price(**fields)
        given.append(model)
    return PriceTable(prices, base.source + f" + {name}", base.as_of, base.urls, name, tuple(given))


def _rate(value: float | None, tokens: int) -> float | None:
    """tokens x USD/MTok; 0 for no tokens whatever the price, None for tokens without a price."""
    if not tokens:
        return 0.0
    return None if value is None else tokens * value / MTOK


def _write_price(price: Price, write_5m: int | None, write_1h: int | None) -> float | None:
    """The price per MTok of this call's write: its 5 m / 1 h mix, 5 m when the usage gives no split."""
    five, hour = write_5m or 0, write_1h or 0
    if not five and not hour:
        return price.cache_write_5m
    if (price.cache_write_5m is None and five) or (price.cache_write_1h is None and hour):
        return None
    return ((price.cache_write_5m or 0.0) * five + (price.cache_write_1h or 0.0) * hour) / (five + hour)


def call_cost(
    price: Price | None, tokens: dict[str, int], write_5m: int | None = None, write_1h: int | None = None
) -> float | None:
    """What one call cost at list price: None when any of its tokens has no price (or the prompt is past the
    price's `max_prompt`)."""
    if price is None:
        return None
    inp, read, write = tokens.get("input") or 0, tokens.get("cache_read") or 0, tokens.get("cache_write") or 0
    if price.max_prompt is not None and inp + read + write > price.max_prompt:
        return None
    if write and (write_5m or write_1h) and (write_5m or 0) + (write_1h or 0) == write:
        writes = _sum(_rate(price.cache_write_5m, write_5m or 0), _rate(price.cache_write_1h, write_1h or 0))
    else:
        writes = _rate(price.cache_write_5m, write)
    return _sum(_rate(price.input, inp), _rate(price.cache_read, read), writes,
                _rate(price.output, tokens.get("output") or 0))  # fmt: skip


def excess_cost(
    price: Price | None,
    excess: int,
    tokens: dict[str, int],
    write_5m: int | None = None,
    write_1h: int | None = None,
) -> float | None:
    """What `excess` re-processed tokens cost beyond a cache hit (see the module docstring); 0 for no excess."""
    if not excess:
        return 0.0
    if price is None or price.cache_read is None:
        return None
    prompt = sum(tokens.get(key) or 0 for key in ("input", "cache_read", "cache_write"))
    if price.max_prompt is not None and prompt > price.max_prompt:
        return None
    written = min(excess, tokens.get("cache_write") or 0)
    uncached = excess - written
    write_price = _write_price(price, write_5m, write_1h) if written else 0.0
    if write_price is None or (uncached and price.input is None):
        return None
    return (written * (write_price - price.cache_read) + uncached * ((price.input or 0.0) - price.cache_read)) / MTOK


def _sum(*parts: float | None) -> float | None:
    return None if any(part is None for part in parts) else sum(part for part in parts if part is not None)
