"""Two small releases of a package named `vllm`, written as sdists by the tests, with raise sites that move,
change and disappear between them; and a PEP 503 index on disk that serves them.

1.0 -> 2.0:
  - ModelConfig.verify_with_parallel_config's NotImplementedError moves from vllm/config.py to
    vllm/config/model.py (another file: another site, the same message);
  - the engine's RuntimeError stays in vllm/engine.py, three lines lower (one site, two lines);
  - the attention-heads ValueError is reworded (another site);
  - vllm/gone.py and its error disappear; vllm/moe.py and its error appear;
  - vllm/models/a.py and vllm/models/b.py raise the same message in both (a tie only a frame breaks);
  - vllm/proxy.py raises what Python's own AttributeError says (matched only with a frame in it).
"""

from __future__ import annotations

import hashlib
import io
import tarfile
import textwrap
from datetime import UTC, datetime
from pathlib import Path

CONFIG = '''\
import logging

logger = logging.getLogger(__name__)


class ModelConfig:
    def verify_with_parallel_config(self, parallel_config):
        heads = self.total_num_attention_heads
        tp = parallel_config.tensor_parallel_size
        if heads % tp != 0:
            raise ValueError(
                f"Total number of attention heads ({heads})"
                " must be divisible by tensor parallel size "
                f"({tp})."
            )
        if parallel_config.pipeline_parallel_size > 1 and not self.supports_pp:
            raise NotImplementedError(
                "Pipeline parallelism is not supported for this model. "
                "Supported models implement the `SupportsPP` interface."
            )
'''

CONFIG_2 = '''\
import logging

logger = logging.getLogger(__name__)

SUPPORTED = ("auto", "half")


class ModelConfig:
    def verify_with_parallel_config(self, parallel_config):
        heads = self.total_num_attention_heads
        tp = parallel_config.tensor_parallel_size
        if heads % tp != 0:
            raise ValueError(
                f"Total number of attention heads ({heads}) must be divisible by "
                f"tensor_parallel_size ({tp}). Pick a tensor parallel size that divides it."
            )
        if parallel_config.pipeline_parallel_size > 1 and not self.supports_pp:
            raise NotImplementedError(
                "Pipeline parallelism is not supported for this model. "
                "Supported models implement the `SupportsPP` interface."
            )
'''

ENGINE = '''\
import logging

logger = logging.getLogger(__name__)


def start_engine(config):
    try:
        core = make_core(config)
    except Exception as e:
        logger.error("EngineCore failed to start: %s", e)
        raise RuntimeError("Engine core initialization failed. See root cause above.") from e
    return core


def check(msg):
    raise ValueError(msg)
'''

ENGINE_2 = ENGINE.replace("def start_engine(config):\n",
                          'def start_engine(config):\n    """Start it."""\n\n    # 2.0\n')

MODEL_A = '''\
def load_a(fmt):
    if fmt not in ("safetensors", "pt"):
        raise ValueError(f"Unsupported checkpoint format {fmt} for this loader")
'''

MODEL_B = '''\
def load_b(fmt):
    if fmt != "gguf":
        raise ValueError(f"Unsupported checkpoint format {fmt} for this loader")
'''

GONE = '''\
def old_path():
    raise ValueError("The legacy block manager was removed; this path is gone.")
'''

MOE = '''\
def map_unquantized_backend(runner_backend, mapping):
    if (backend := mapping.get(runner_backend)) is None:
        raise ValueError(
            f"moe_backend='{runner_backend}' is not supported for unquantized MoE. "
            f"Expected one of {list(mapping.keys())}."
        )
    return backend
'''

PROXY = '''\
class LayerProxy:
    def __getattr__(self, name):
        raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")
'''

VENDORED = '''\
def vendored():
    raise ValueError("A vendored module's error is not the package's own.")
'''

RELEASES = {
    "1.0": {
        "vllm/__init__.py": "",
        "vllm/config.py": CONFIG,
        "vllm/engine.py": ENGINE,
        "vllm/models/__init__.py": "",
        "vllm/models/a.py": MODEL_A,
        "vllm/models/b.py": MODEL_B,
        "vllm/gone.py": GONE,
        "vllm/proxy.py": PROXY,
        "vllm/third_party/__init__.py": "",
        "vllm/third_party/vendored.py": VENDORED,
        "vllm/broken.py": "def broken(:\n    raise ValueError('never read')\n",
    },
    "2.0": {
        "vllm/__init__.py": "",
        "vllm/config/__init__.py": "",
        "vllm/config/model.py": CONFIG_2,
        "vllm/engine.py": ENGINE_2,
        "vllm/models/__init__.py": "",
        "vllm/models/a.py": MODEL_A,
        "vllm/models/b.py": MODEL_B,
        "vllm/moe.py": MOE,
        "vllm/proxy.py": PROXY,
    },
}
UPLOADED = {"1.0": datetime(2024, 1, 10, tzinfo=UTC), "2.0": datetime(2024, 6, 1, tzinfo=UTC)}


def line_of(version: str, path: str, needle: str) -> int:
    """The line of the statement that holds `needle` (the `raise`/`logger` line above a message's line)."""
    lines = RELEASES[version][path].splitlines()
    for i, line in enumerate(lines):
        if needle in line:
            for j in range(i, -1, -1):
                stripped = lines[j].lstrip()
                if stripped.startswith(("raise", "logger", "assert")):
                    return j + 1
    raise AssertionError(f"{needle!r} not in {path} at {version}")


def write_sdist(directory: Path, version: str, files: dict[str, str] | None = None,
                package: str = "vllm") -> Path:
    """`<package>-<version>.tar.gz` with the release's modules under `<package>-<version>/`."""
    files = RELEASES[version] if files is None else files
    path = directory / f"{package}-{version}.tar.gz"
    mtime = UPLOADED.get(version, datetime(2024, 1, 1, tzinfo=UTC)).timestamp()
    with tarfile.open(path, "w:gz") as tar:
        extra = {"setup.py": "from setuptools import setup\nsetup()\n", "PKG-INFO": f"Version: {version}\n"}
        for name, text in {**extra, **files}.items():
            data = textwrap.dedent(text).encode()
            info = tarfile.TarInfo(f"{package}-{version}/{name}")
            info.size = len(data)
            info.mtime = int(mtime)
            tar.addfile(info, io.BytesIO(data))
    return path


def write_index(root: Path, versions: list[str] | None = None, package: str = "vllm") -> str:
    """A PEP 503 simple index under root/simple serving the releases' sdists (with sha256 fragments);
    returns its file:// URL."""
    files = root / "files"
    files.mkdir(parents=True, exist_ok=True)
    links = []
    for version in versions or list(RELEASES):
        sdist = write_sdist(files, version, package=package)
        sha = hashlib.sha256(sdist.read_bytes()).hexdigest()
        links.append(f'<a href="../../files/{sdist.name}#sha256={sha}">{sdist.name}</a>')
    page = root / "simple" / package
    page.mkdir(parents=True, exist_ok=True)
    (page / "index.html").write_text("<!DOCTYPE html><html><body>\n" + "\n".join(links) + "\n</body></html>\n")
    return (root / "simple").as_uri()


def read_releases(directory: Path, versions: list[str] | None = None, package: str = "vllm") -> list:
    """Each release written as an sdist and read (bot/sources/build.py read_release): ReleaseBuilds, oldest first."""
    from bot.sources.build import read_release
    from bot.sources.sdists import Sdist

    out = []
    directory.mkdir(parents=True, exist_ok=True)
    for version in versions or list(RELEASES):
        archive = write_sdist(directory, version, package=package)
        out.append(read_release(package, Sdist(package, version, archive.name, archive.as_uri()), archive))
    return out


def memory_index(directory: Path, package: str = "vllm"):
    """The two releases folded into a SourceIndex in memory, with their module texts: (index, {(version, path):
    text})."""
    import zlib

    from bot.sources.index import SourceIndex
    from bot.sources.model import Release, add_release

    sites: dict = {}
    releases, texts = [], {}
    for i, build in enumerate(read_releases(directory, package=package), start=1):
        release = Release(i, package, build.version, build.uploaded_at)
        releases.append(release)
        add_release(sites, package, release, build.sites)
        texts.update({(build.version, path): zlib.decompress(data).decode() for path, (_, data) in build.files.items()})
    return SourceIndex(package, releases, sites.values()), texts

