"""Per-repository configuration: `.github/vllm-triage.yml` on the default branch.

Validated strictly: an unknown key or a wrong type is reported with its line number. A file with errors
puts the repository in shadow mode (decide and record, post nothing) until it is fixed, so that a typo
never makes the bot act in a way the maintainers tried to switch off.

    mode: live                 # live | shadow | dry-run
    features:
      labels: true             # add topic labels
      comment: true            # post the one triage comment
      duplicates: true         # search earlier issues for the same failure
      needs_info: true         # ask for missing information (label + comment section)
      commands: true           # obey maintainer commands in comments (/triage, /not-duplicate #N, ...)
    labels:
      map:                     # the bot's topic label -> this repository's label name (null: never apply)
        needs-info: "needs more info"
      allow: [bug, rocm]       # labels (after mapping) the bot may add; default: those that exist in the repo
    thresholds:
      diagnosis: 0.5           # findings below this confidence neither label nor appear in the comment
      duplicate: 0.0           # duplicate candidates below this score are not linked
"""

from __future__ import annotations

import base64
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import yaml

CONFIG_PATH = ".github/vllm-triage.yml"
FEATURES = ("labels", "comment", "duplicates", "needs_info", "commands")
MAX_CONFIG_BYTES = 64 * 1024


@dataclass(frozen=True)
class RepoConfig:
    mode: str = "live"
    features: Mapping[str, bool] = field(default_factory=lambda: dict.fromkeys(FEATURES, True))
    label_map: Mapping[str, str | None] = field(default_factory=dict)
    allow: tuple[str, ...] | None = None          # None: every label that exists in the repository
    diagnosis_threshold: float = 0.0
    duplicate_threshold: float = 0.0
    errors: tuple[str, ...] = ()
    found: bool = False                           # the file exists

    def enabled(self, feature: str) -> bool:
        return bool(self.features.get(feature, True))

    def repo_label(self, topic: str) -> str | None:
        return self.label_map.get(topic, topic)


DEFAULT = RepoConfig()


class _Errors(list):
    def at(self, node: yaml.Node, message: str) -> None:
        self.append(f"{CONFIG_PATH}:{node.start_mark.line + 1}: {message}")


def _scalar(node: yaml.Node, errors: _Errors, where: str, kind: type | tuple[type, ...]) -> Any:
    if not isinstance(node, yaml.ScalarNode):
        errors.at(node, f"{where}: expected a {_kind_name(kind)}")
        return None
    value = yaml.safe_load(yaml.serialize(node))
    if isinstance(value, bool) and bool not in (kind if isinstance(kind, tuple) else (kind,)):
        errors.at(node, f"{where}: expected a {_kind_name(kind)}, got {value!r}")
        return None
    if not isinstance(value, kind):
        errors.at(node, f"{where}: expected a {_kind_name(kind)}, got {value!r}")
        return None
    return value


def _kind_name(kind: type | tuple[type, ...]) -> str:
    kinds = kind if isinstance(kind, tuple) else (kind,)
    names = {bool: "boolean", str: "string", int: "number", float: "number", type(None): "null"}
    return " or ".join(dict.fromkeys(names.get(k, k.__name__) for k in kinds))


def _mapping(node: yaml.Node, errors: _Errors, where: str, keys: tuple[str, ...] | None):
    if not isinstance(node, yaml.MappingNode):
        errors.at(node, f"{where}: expected a mapping")
        return []
    items = []
    seen: set[str] = set()
    for key_node, value_node in node.value:
        key = key_node.value if isinstance(key_node, yaml.ScalarNode) else None
        if not isinstance(key, str):
            errors.at(key_node, f"{where}: keys must be strings")
            continue
        if key in seen:
            errors.at(key_node, f"{where}: duplicate key {key!r}")
            continue
        seen.add(key)
        if keys is not None and key not in keys:
            errors.at(key_node, f"{where}: unknown key {key!r} (expected one of: {', '.join(keys)})")
            continue
        items.append((key, key_node, value_node))
    return items


def parse_config(text: str) -> RepoConfig:
    """Parse and validate; never raises. Errors are in `.errors`, and make the config cautious."""
    errors = _Errors()
    if len(text.encode("utf-8", "replace")) > MAX_CONFIG_BYTES:
        return RepoConfig(mode="shadow", errors=(f"{CONFIG_PATH}: larger than {MAX_CONFIG_BYTES} bytes",),
                          found=True)
    try:
        root = yaml.compose(text, Loader=yaml.SafeLoader)
    except yaml.YAMLError as e:
        mark = getattr(e, "problem_mark", None)
        line = f":{mark.line + 1}" if mark is not None else ""
        problem = getattr(e, "problem", None) or str(e)
        return RepoConfig(mode="shadow", errors=(f"{CONFIG_PATH}{line}: invalid YAML: {problem}",), found=True)
    if root is None:
        return RepoConfig(found=True)
    values: dict[str, Any] = {}
    features = dict.fromkeys(FEATURES, True)
    for key, _, node in _mapping(root, errors, "top level", ("mode", "features", "labels", "thresholds")):
        if key == "mode":
            mode = _scalar(node, errors, "mode", str)
            if mode is not None and mode not in ("live", "shadow", "dry-run"):
                errors.at(node, f"mode: expected live, shadow or dry-run, got {mode!r}")
            elif mode is not None:
                values["mode"] = mode
        elif key == "features":
            for name, _, fnode in _mapping(node, errors, "features", FEATURES):
                flag = _scalar(fnode, errors, f"features.{name}", bool)
                if flag is not None:
                    features[name] = flag
        elif key == "labels":
            for name, _, lnode in _mapping(node, errors, "labels", ("map", "allow")):
                if name == "map":
                    label_map: dict[str, str | None] = {}
                    for topic, _, vnode in _mapping(lnode, errors, "labels.map", None):
                        target = _scalar(vnode, errors, f"labels.map.{topic}", (str, type(None)))
                        if target is not None or (isinstance(vnode, yaml.ScalarNode) and vnode.tag.endswith("null")):
                            label_map[topic] = target
                    values["label_map"] = label_map
                else:
                    if not isinstance(lnode, yaml.SequenceNode):
                        errors.at(lnode, "labels.allow: expected a list of label names")
                        continue
                    allow = [_scalar(item, errors, "labels.allow[]", str) for item in lnode.value]
                    values["allow"] = tuple(a for a in allow if a is not None)
        elif key == "thresholds":
            for name, _, tnode in _mapping(node, errors, "thresholds", ("diagnosis", "duplicate")):
                number = _scalar(tnode, errors, f"thresholds.{name}", (int, float))
                if number is None:
                    continue
                if not 0.0 <= float(number) <= 1.0:
                    errors.at(tnode, f"thresholds.{name}: expected a number between 0 and 1, got {number!r}")
                    continue
                values[f"{name}_threshold"] = float(number)
    if errors:
        values["mode"] = "shadow"
    ordered = sorted(errors, key=lambda e: int(e[len(CONFIG_PATH) + 1:].split(":", 1)[0]))
    return RepoConfig(features=features, errors=tuple(ordered), found=True, **values)


def decode_contents(item: Mapping[str, Any]) -> str:
    """The text of a `GET /repos/{owner}/{repo}/contents/{path}` answer."""
    if item.get("encoding") == "base64":
        return base64.b64decode(item.get("content") or "").decode("utf-8", "replace")
    return str(item.get("content") or "")


class ConfigCache:
    """Config and label names per repository, kept for `ttl` seconds."""

    def __init__(self, ttl: float, clock=time.monotonic) -> None:
        self.ttl = ttl
        self._clock = clock
        self._entries: dict[str, tuple[float, Any]] = {}

    def get(self, key: str) -> Any | None:
        entry = self._entries.get(key)
        if entry is None or self._clock() - entry[0] > self.ttl:
            return None
        return entry[1]

    def put(self, key: str, value: Any) -> None:
        self._entries[key] = (self._clock(), value)

    def drop(self, key: str) -> None:
        self._entries.pop(key, None)
