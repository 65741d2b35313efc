"""The volatility policy: which fields of an assistant message may change without the answer changing.

The stable fingerprint, the capture-vs-commit diff class (volatile-only / semantic) and the counterfactual
replay all ask one question: "is this field volatile?". The answer lives here, as data: a list of rules,
each a field-path pattern and the reason it is volatile. The defaults are the fields the streaming
pipeline stamps or leaves behind around what the model produced (senpi-formats §3.5, §6.5):

* thinking `startedAt` / `endedAt`: stamped by agent-core after the last `message_update` (the cause of
  senpi#691: turns committed as `rewritten` although the answer was identical);
* streaming `index`: pushed on every streamed block, deleted when the block closes;
* `partialJson`: the tool-call argument buffer, deleted before `toolcall_end`.

Users add rules with `--volatile PATTERN` (repeatable); the CLI calls `configure(patterns)` once before it
builds the engine, and every analyzer created afterwards reads `policy()`. Code that needs another policy
(tests, a what-if) builds a `VolatilityPolicy` and passes it explicitly.

Pattern syntax (paths are relative to the assistant message, as in the diff: `.content[0].startedAt`):

=====================  =========================================================================
``.content[*].index``  a path: ``.name`` a key, ``[N]`` an array index, ``[*]`` any index, ``.*`` any key
``[type=thinking]``    any index whose element is an object with ``type`` equal to ``thinking``
``..name``             ``name`` at any depth below that point
``name`` (bare)        the key ``name`` anywhere (same as ``..name``)
``["a b"]``            a key that is not an identifier
=====================  =========================================================================
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

PathPart = str | int

_NAME = r"[A-Za-z_$][A-Za-z0-9_$\-]*"
_TOKEN = re.compile(
    rf"""(?P<desc>\.\.(?P<dname>{_NAME}|\*))
       |\.(?P<name>{_NAME}|\*)
       |\.?\[(?P<sel>\*|\d+|(?P<pkey>{_NAME})=(?P<pval>[^\]]*)|"(?P<qkey>(?:[^"\\]|\\.)*)")\]""",
    re.VERBOSE,
)


@dataclass(frozen=True, slots=True)
class Step:
    """One step of a pattern. `kind`: key | any_key | index | any_index | where | descend."""

    kind: str
    key: str | None = None
    index: int | None = None
    value: str | None = None


def parse_pattern(pattern: str) -> tuple[Step, ...]:
    """Parse a pattern (syntax in the module docstring); ValueError says what is wrong and where."""
    text = pattern.strip()
    if not text:
        raise ValueError("empty volatile pattern")
    if re.fullmatch(_NAME, text):
        return (Step("descend", key=text),)
    steps: list[Step] = []
    pos = 0
    while pos < len(text):
        m = _TOKEN.match(text, pos)
        if m is None:
            raise ValueError(f"volatile pattern {pattern!r}: cannot read {text[pos:]!r} (at character {pos})")
        if m.group("desc"):
            name = m.group("dname")
            steps.append(Step("descend", key=None if name == "*" else name))
        elif m.group("name"):
            name = m.group("name")
            steps.append(Step("any_key") if name == "*" else Step("key", key=name))
        else:
            sel = m.group("sel")
            if sel == "*":
                steps.append(Step("any_index"))
            elif sel.isdigit():
                steps.append(Step("index", index=int(sel)))
            elif m.group("pkey"):
                steps.append(Step("where", key=m.group("pkey"), value=m.group("pval").strip().strip('"')))
            else:
                steps.append(Step("key", key=re.sub(r"\\(.)", r"\1", m.group("qkey"))))
        pos = m.end()
    return tuple(steps)


def _child(doc: Any, part: PathPart) -> Any:
    if isinstance(part, int):
        return doc[part] if isinstance(doc, list) and 0 <= part < len(doc) else None
    return doc.get(part) if isinstance(doc, dict) else None


def _match(steps: Sequence[Step], path: Sequence[PathPart], doc: Any) -> bool:
    if not steps:
        return not path
    step = steps[0]
    if step.kind == "descend":
        # `..name`: `name` at this level or any level below; `..*`: anything below
        for skip in range(len(path)):
            if step.key is not None and path[skip] != step.key:
                continue
            if _match(steps[1:], path[skip + 1 :], _walk(doc, path[: skip + 1])):
                return True
        return False
    if not path:
        return False
    part, rest = path[0], path[1:]
    if step.kind == "key":
        ok = part == step.key
    elif step.kind == "any_key":
        ok = isinstance(part, str)
    elif step.kind == "index":
        ok = part == step.index
    elif step.kind == "any_index":
        ok = isinstance(part, int)
    else:  # where
        element = _child(doc, part)
        ok = isinstance(part, int) and isinstance(element, dict) and str(element.get(step.key)) == step.value
    return ok and _match(steps[1:], rest, _child(doc, part))


def _walk(doc: Any, path: Sequence[PathPart]) -> Any:
    for part in path:
        doc = _child(doc, part)
    return doc


@dataclass(frozen=True, slots=True)
class VolatileRule:
    """A field that may differ between capture and commit without the model's answer differing."""

    pattern: str
    reason: str
    steps: tuple[Step, ...]

    @classmethod
    def of(cls, pattern: str, reason: str) -> VolatileRule:
        return cls(pattern, reason, parse_pattern(pattern))

    @property
    def last_key(self) -> str | None:
        """The key a matching path must end with (None when the last step matches any key or index)."""
        last = self.steps[-1] if self.steps else None
        return last.key if last is not None and last.kind in ("key", "descend") else None

    def matches(self, path: Sequence[PathPart], doc: Any) -> bool:
        """True when `path` (inside `doc`, the assistant message) is named by this rule."""
        last = self.last_key
        if last is not None and (not path or path[-1] != last):
            return False  # the cheap test first: most paths end in a key no rule names
        return _match(self.steps, path, doc)


DEFAULT_RULES: tuple[VolatileRule, ...] = (
    VolatileRule.of(".content[type=thinking].startedAt", "thinking timing stamped by agent-core after the stream"),
    VolatileRule.of(".content[type=thinking].endedAt", "thinking timing stamped by agent-core after the stream"),
    VolatileRule.of(".content[*].index", "streaming block index, deleted when the block closes"),
    VolatileRule.of(".content[*].partialJson", "tool-call argument buffer, deleted before toolcall_end"),
)


@dataclass(frozen=True, slots=True)
class VolatilityPolicy:
    """An ordered set of rules; the first rule that names a path gives its reason."""

    rules: tuple[VolatileRule, ...] = DEFAULT_RULES
    #: the keys every rule's path ends with, when every rule names one (None otherwise): a path ending in any
    #: other key or an index is named by no rule, which is the answer for almost every path asked about
    _last_keys: frozenset[str] | None = field(init=False, repr=False, compare=False, hash=False)

    def __post_init__(self) -> None:
        last = [rule.last_key for rule in self.rules]
        keys = None if any(key is None for key in last) else frozenset(key for key in last if key is not None)
        object.__setattr__(self, "_last_keys", keys)

    def rule_for(self, path: Sequence[PathPart], *docs: Any) -> VolatileRule | None:
        """The rule naming `path` in any of `docs` (capture and commit), or None when the path is semantic."""
        keys = self._last_keys
        if keys is not None and (not path or path[-1] not in keys):
            return None
        for rule in self.rules:
            for doc in docs:
                if rule.matches(path, doc):
                    return rule
        return None

    def is_volatile(self, path: Sequence[PathPart], *docs: Any) -> bool:
        return self.rule_for(path, *docs) is not None

    @property
    def depth(self) -> int | None:
        """The deepest path any rule can name (None when a rule descends to any depth): stripping stops there."""
        depths = [
            None if any(step.kind == "descend" for step in rule.steps) else len(rule.steps) for rule in self.rules
        ]
        return None if None in depths else max((d for d in depths if d is not None), default=0)

    def strip(self, doc: Any) -> Any:
        """A copy of `doc` without any field a rule names (arrays keep their length: only keys are dropped).

        Subtrees below the deepest path a rule can name are shared, not copied: the default rules stop at
        the content blocks, so tool-call arguments are never walked.
        """
        return self._strip(doc, [], doc, self.depth)

    def keeps_all(self, doc: Any) -> bool:
        """True when `strip(doc)` drops nothing (it is then an equal copy of `doc`): no object `strip` walks holds a
        key any rule ends with. One C-level set test per object walked, where `strip` asks the rules per key and
        copies (`fingerprints` hashes the stripped copy of every assistant message; it almost never differs)."""
        keys = self._last_keys
        depth = self.depth
        if keys is None or depth is None:
            return False
        level = [doc]
        for _ in range(depth):
            below: list[Any] = []
            for node in level:
                if isinstance(node, dict):
                    if not keys.isdisjoint(node):
                        return False
                    below.extend(v for v in node.values() if isinstance(v, dict | list))
                elif isinstance(node, list):
                    below.extend(v for v in node if isinstance(v, dict | list))
            if not below:
                return True
            level = below
        return True

    def _strip(self, node: Any, path: list[PathPart], root: Any, depth: int | None) -> Any:
        # leaves are kept as they are without a call; a key no rule ends with is kept without asking the rules
        if depth is not None and len(path) >= depth:
            return node
        keys = self._last_keys
        if isinstance(node, dict):
            out: dict[str, Any] = {}
            for key, value in node.items():
                path.append(key)
                if (keys is not None and key not in keys) or not self.is_volatile(path, root):
                    out[key] = self._strip(value, path, root, depth) if isinstance(value, dict | list) else value
                path.pop()
            return out
        if isinstance(node, list):
            items = []
            for i, value in enumerate(node):
                if isinstance(value, dict | list):
                    path.append(i)
                    value = self._strip(value, path, root, depth)
                    path.pop()
                items.append(value)
            return items
        return node

    def with_patterns(self, patterns: Iterable[str]) -> VolatilityPolicy:
        extra = tuple(VolatileRule.of(p, "added with --volatile") for p in patterns if p.strip())
        return VolatilityPolicy(self.rules + extra)

    def describe(self) -> list[dict[str, str]]:
        return [{"pattern": rule.pattern, "reason": rule.reason} for rule in self.rules]


DEFAULT_POLICY = VolatilityPolicy()
_active: VolatilityPolicy = DEFAULT_POLICY


def configure(extra_patterns: Iterable[str] = ()) -> VolatilityPolicy:
    """Set the process-wide policy to the defaults plus `extra_patterns` (validated; ValueError if bad).

    Call once at start-up, before the engine exists: analyzers read the policy when a session is created.
    """
    global _active
    _active = DEFAULT_POLICY.with_patterns(list(extra_patterns))
    return _active


def policy() -> VolatilityPolicy:
    """The policy `configure` set (the defaults until then)."""
    return _active
