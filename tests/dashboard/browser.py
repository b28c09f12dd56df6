"""Shared by the browser tests: Debian's /usr/bin/chromium driven by Playwright (never `playwright install`), a
`vllm-triage serve` process filled by delivering the test export as signed webhooks, and screenshots at a phone's
and a desktop's width under test-artifacts/screenshots/ (printed at the end of the run)."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

from bot.dashboard.feed import feed
from bot.replay import load_sorted

from .conftest import ALICE_TOKEN, REPO, SECRET, server_env
from .export import write_export

CHROMIUM = "/usr/bin/chromium"
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
        "--disable-background-networking", "--disable-component-update", "--disable-sync"]
ROOT = Path(__file__).resolve().parents[2]
SHOTS = ROOT / "test-artifacts" / "screenshots"
ISSUE = "/dashboard/issues/vllm-project/vllm"
PHONE, DESKTOP = 390, 1400
WIDTHS = {"phone": PHONE, "desktop": DESKTOP}


def require_chromium() -> None:
    if not Path(CHROMIUM).exists():
        if os.environ.get("CI"):
            pytest.fail(f"{CHROMIUM} is missing: .ci/run installs Debian's chromium", pytrace=False)
        pytest.skip(f"{CHROMIUM} is not installed (apt-get install -y chromium)", allow_module_level=True)
    pytest.importorskip("playwright.sync_api")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_healthy(url: str, proc: subprocess.Popen, timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"server exited with {proc.returncode}")
        try:
            with urllib.request.urlopen(url + "/healthz", timeout=2) as resp:
                if json.loads(resp.read()).get("worker"):
                    return
        except OSError:
            pass
        time.sleep(0.2)
    raise TimeoutError("server did not become healthy")


def serve_filled(tmp: Path, fill: bool = True) -> Iterator[str]:
    """A `vllm-triage serve` process (dry-run, SQLite) filled with the test export (unless not `fill`); yields its
    URL. Its data directory is `tmp/data`."""
    port = free_port()
    env = {**os.environ, **server_env(tmp, port)}
    env.pop("VLLM_TRIAGE_MODE", None)
    log = open(tmp / "server.log", "wb")  # noqa: SIM115 - closed below
    proc = subprocess.Popen([sys.executable, "-m", "bot.cli", "serve"], env=env, stdout=log, stderr=subprocess.STDOUT,
                            cwd=ROOT)
    url = f"http://127.0.0.1:{port}"
    try:
        wait_healthy(url, proc)
        if fill:
            issues = load_sorted(str(write_export(tmp / "export.jsonl")), [])
            feed(url, issues, REPO, SECRET, wait=120)
        yield url
    finally:
        proc.terminate()
        try:
            proc.wait(15)
        except subprocess.TimeoutExpired:
            proc.kill()
        log.close()


def launch() -> Iterator[object]:
    from playwright import sync_api

    SHOTS.mkdir(parents=True, exist_ok=True)
    with sync_api.sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        yield b
        b.close()


class Watch:
    """Console errors, CSP violations and dialogs of one page: none may happen."""

    def __init__(self, page, allow_status: tuple[int, ...] = ()) -> None:
        self.errors: list[str] = []
        self.dialogs: list[str] = []
        self.allow_status = allow_status
        page.on("console", lambda m: self._console(m))
        page.on("pageerror", lambda e: self.errors.append(str(e)))
        page.on("dialog", self._dialog)
        page.on("response", lambda r: self.errors.append(f"{r.status} {r.url}")
                if r.status >= 400 and r.status not in self.allow_status else None)

    def _console(self, m) -> None:
        # a page we load with an error status on purpose logs "Failed to load resource" for itself
        if m.type == "error" and not (self.allow_status and "Failed to load resource" in m.text):
            self.errors.append(m.text)

    def _dialog(self, dialog) -> None:
        self.dialogs.append(dialog.message)
        dialog.dismiss()


def new_page(browser, width: int = 1360, height: int = 900, allow_status: tuple[int, ...] = ()):
    context = browser.new_context(viewport={"width": width, "height": height})
    page = context.new_page()
    return context, page, Watch(page, allow_status)


def shot(page, name: str) -> None:
    page.screenshot(path=str(SHOTS / f"{name}.png"), full_page=True)


def login(page, server: str, token: str = ALICE_TOKEN) -> None:
    page.goto(f"{server}/dashboard/login")
    page.fill("input[name=token]", token)
    page.click("form[action='/dashboard/login'] button[type=submit]")
    page.wait_for_url(f"{server}/dashboard/")
