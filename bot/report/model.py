"""The parsed form of one issue report. Frozen dataclasses, no behaviour beyond small accessors.

Everything downstream (rules, labels, duplicates, comment, dashboard) reads these types only.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

KINDS = (
    "bug", "usage", "installation", "feature", "new-model", "performance",
    "rfc", "docs", "ci-failure", "misc", "other",
)
# kinds whose template asks for the environment; only these can need it
KINDS_NEEDING_ENV = ("bug", "usage", "installation", "performance")


@dataclass(frozen=True)
class Section:
    heading: str          # the `### ` heading text, emoji kept, e.g. "🐛 Describe the bug"
    text: str             # raw text under the heading (up to the next heading)
    empty: bool           # `_No response_`, a template placeholder, or only whitespace / wrappers


@dataclass(frozen=True)
class Environment:
    vllm_version: str | None = None        # as written, no leading "v": "0.17.0", "0.16.0rc1.dev136+gdad2d6a59"
    vllm_version_source: str | None = None  # collect_env | banner | engine-config | pip | image | prose | title
    vllm_commit: str | None = None         # short sha from "+g<sha>" or "(git sha: <sha>)"
    torch_version: str | None = None
    cuda_version: str | None = None        # CUDA used to build PyTorch, else runtime
    rocm_version: str | None = None
    driver_version: str | None = None
    gpus: tuple[str, ...] = ()             # one entry per device, e.g. ("NVIDIA H100 80GB HBM3",) * 8
    platform: str | None = None            # cuda | rocm | xpu | tpu | cpu
    os: str | None = None                  # linux | windows | macos | wsl
    python_version: str | None = None      # "3.12.3"
    transformers_version: str | None = None
    env_vars: dict[str, str] = field(default_factory=dict, hash=False)

    @property
    def gpu_count(self) -> int:
        return len(self.gpus)

    def as_dict(self) -> dict[str, Any]:
        return {
            "vllm_version": self.vllm_version,
            "vllm_version_source": self.vllm_version_source,
            "vllm_commit": self.vllm_commit,
            "torch_version": self.torch_version,
            "cuda_version": self.cuda_version,
            "rocm_version": self.rocm_version,
            "driver_version": self.driver_version,
            "gpus": list(self.gpus),
            "gpu_count": self.gpu_count,
            "platform": self.platform,
            "os": self.os,
            "python_version": self.python_version,
            "transformers_version": self.transformers_version,
        }


@dataclass(frozen=True)
class Frame:
    file: str                 # as printed, Windows paths kept
    line: int | None
    function: str | None
    is_vllm: bool             # the file lies inside the vllm package (…/vllm/…py, not vllm_ascend etc.)


@dataclass(frozen=True)
class ExceptionInfo:
    type: str                 # as printed, module kept: "torch.OutOfMemoryError", "NotImplementedError"
    message: str              # the whole message (may span lines), prefixes stripped
    frames: tuple[Frame, ...] = ()
    source: str = "traceback"  # traceback | line | title | mention
    process: str | None = None  # innermost process tag it was logged under, e.g. "EngineCore_DP0"
    inferred: bool = False     # the report shows only the message: the type is the raise site's (RaiseSite)

    @property
    def short_type(self) -> str:
        return self.type.rsplit(".", 1)[-1]

    @property
    def first_line(self) -> str:
        return self.message.split("\n", 1)[0].strip()


@dataclass(frozen=True)
class Traceback:
    """One printed traceback with its chain, oldest cause first and the raised exception last."""

    chain: tuple[ExceptionInfo, ...]
    process: str | None = None

    @property
    def final(self) -> ExceptionInfo:
        return self.chain[-1]


@dataclass(frozen=True)
class RaiseSite:
    """Where vLLM raises (or asserts, or logs) the report's root-cause error, from the raise-site index
    (bot/sources/locate.py). Plain data: the report does not depend on the index."""

    id: str                   # the index's site id: one statement across the releases that have it
    file: str                 # "vllm/config/model.py"
    line: int                 # at `release`
    end_line: int
    qualname: str             # "ModelConfig.verify_with_parallel_config"
    kind: str                 # raise | assert | log
    type: str | None          # the exception type raised (None when not known statically), or the log level
    message: str              # the message template as vLLM writes it, holes as {name}
    release: str              # the release `line` is read at: the reporter's when `at_release`, else the nearest
    at_release: bool          # the reporter's release raises it here
    reporter_release: str | None  # the reporter's release as mapped (None: no version and no date)
    first: str                # the first and the last indexed release that raise it
    last: str
    releases: int             # how many indexed releases raise it
    newest: str               # the newest release the index holds
    raised_after: bool        # a release after the reporter's raises its message (here or from another place)
    of: str                   # what resolved: exception | error-line | title | traceback (frames only)
    by: str                   # message | message+frame | message+location | frame
    wrapper: bool = False     # it only reports a failure elsewhere ("Engine core initialization failed")
    message_first: str | None = None  # the first and last indexed release that raise its message from any place
    message_last: str | None = None

    @property
    def function(self) -> str:
        return self.qualname.rsplit(".", 1)[-1]

    @property
    def changed_since(self) -> bool:
        """The reporter's release is known, an indexed release after it exists, and none of those raises its message
        (from this place or another)."""
        return (self.reporter_release is not None and not self.raised_after
                and self.reporter_release != self.newest)


@dataclass(frozen=True)
class Command:
    raw: str                  # the command as found, joined onto one line
    entrypoint: str           # vllm-serve | api-server | docker | compose | python-llm | vllm-bench | other
    model: str | None = None
    flags: dict[str, Any] = field(default_factory=dict, hash=False)  # normalised snake_case key -> value


@dataclass(frozen=True)
class Entity:
    """What a report names, as an exact duplicate key (bot/report/entities.py): `model=phi4`, `gfx=gfx1151`."""

    key: str              # "<group>=<value>"; the same group with another value is a near miss
    reason: str           # what a maintainer can check: "both request the model Phi-4"
    strength: str = "area"    # strong | question | area: how much sharing it says (bot/report/entities.py)

    @property
    def group(self) -> str:
        return self.key.partition("=")[0]


@dataclass(frozen=True)
class Report:
    title: str
    title_text: str                    # title without the template prefix
    kind: str                          # one of KINDS
    kind_source: str                   # title | template | guess
    body: str                          # the raw body (possibly truncated to the parser's limit)
    sections: tuple[Section, ...] = ()
    description: str = ""              # the prose/description part: body minus environment dump and checklist
    prose: str | None = None           # the reporter's own words in the description (bot/report/prose.py);
    #                                    None when not computed (a Report built by hand)
    environment: Environment = field(default_factory=Environment)
    environment_placeholder: bool = False   # the environment section holds only the template placeholder
    log_lines: tuple[str, ...] = ()    # every body line with ANSI, process tags, logger headers and \r stripped
    tracebacks: tuple[Traceback, ...] = ()
    cut_frames: tuple[Frame, ...] = ()  # the frames of a traceback that stops before its exception line
    exceptions: tuple[ExceptionInfo, ...] = ()  # de-duplicated, the root cause last
    error_lines: tuple[str, ...] = ()  # error lines not inside a traceback ("ERROR: Could not build wheels …")
    commands: tuple[Command, ...] = ()
    non_default_args: dict[str, Any] | None = field(default=None, hash=False)
    flags: dict[str, Any] = field(default_factory=dict, hash=False)  # commands merged, non-default args win
    model: str | None = None
    architectures: tuple[str, ...] = ()  # "Resolved architecture: X" in order of appearance
    needs_info: tuple[str, ...] = ()     # e.g. ("environment",)
    entities: tuple[Entity, ...] = ()    # what a request or question is about (bot/report/entities.py)
    # where vLLM raises the root-cause error, when a raise-site index was given (bot/sources/locate.py); several
    # when the same message is raised in places the report does not tell apart
    sites: tuple[RaiseSite, ...] = ()

    @property
    def root_cause(self) -> ExceptionInfo | None:
        return self.exceptions[-1] if self.exceptions else None

    @property
    def site(self) -> RaiseSite | None:
        """The raise site of the root cause, when it resolved to exactly one."""
        return self.sites[0] if len(self.sites) == 1 else None

    @property
    def architecture(self) -> str | None:
        return self.architectures[0] if self.architectures else None

    def section(self, *needles: str) -> Section | None:
        """The first section whose heading contains one of the needles (case-insensitive)."""
        for s in self.sections:
            h = s.heading.lower()
            if any(n.lower() in h for n in needles):
                return s
        return None
