"""Command lines (vllm serve, api_server, docker, compose, LLM(...)), flags and `non-default args`."""

from __future__ import annotations

from typing import Any

from bot.report.model import Command


def extract_commands(body: str, lines: tuple[str, ...]) -> tuple[Command, ...]:
    return ()


def parse_non_default_args(lines: tuple[str, ...]) -> dict[str, Any] | None:
    return None


def merge_flags(commands: tuple[Command, ...], non_default_args: dict[str, Any] | None) -> dict[str, Any]:
    flags: dict[str, Any] = {}
    for command in commands:
        flags.update(command.flags)
    flags.update(non_default_args or {})
    return flags


def model_and_architectures(
    lines: tuple[str, ...], commands: tuple[Command, ...], non_default_args: dict[str, Any] | None
) -> tuple[str | None, tuple[str, ...]]:
    return None, ()
