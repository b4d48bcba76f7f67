"""The help of a command-line tool made of named commands (dataclaycmd): one Command per command holds
what it runs, how many arguments it takes, and the text its help shows, so the list of commands,
`help COMMAND`, `COMMAND --help` and a wrong-arity message all come from the same entry."""
from __future__ import annotations

import textwrap
from collections.abc import Callable
from dataclasses import dataclass


@dataclass(frozen=True)
class Command:
    """One command: `run(config, *args)` returns what to print; it takes `arity` arguments (a number,
    or (fewest, most) with options)."""

    run: Callable[..., str]
    arity: int | tuple[int, int]
    args: str
    """The synopsis of its arguments, e.g. "<user> <pass> <namespace> [--force]"."""
    summary: str
    """One line: what it does (the list of commands shows it)."""
    details: str = ""
    """More, for its own help: what each argument means, what it prints, when it fails."""
    example: str = ""
    """One command line a user can adapt."""

    def accepts(self, count: int) -> bool:
        """Whether it takes `count` arguments."""
        low, high = self.bounds()
        return low <= count <= high

    def bounds(self) -> tuple[int, int]:
        """The fewest and the most arguments it takes."""
        return self.arity if isinstance(self.arity, tuple) else (self.arity, self.arity)


def usage_line(tool: str, name: str, command: Command) -> str:
    """`usage: tool Name <args>`."""
    return f"usage: {tool} {name} {command.args}".rstrip()


def command_help(tool: str, name: str, command: Command) -> str:
    """The whole help of one command."""
    parts = [usage_line(tool, name, command), "", command.summary]
    if command.details:
        parts += ["", textwrap.fill(command.details, width=100)]
    if command.example:
        parts += ["", "example:", f"  {command.example}"]
    return "\n".join(parts)


def command_list(tool: str, commands: dict[str, Command], epilogue: str) -> str:
    """The list of every command with its arguments and summary, then `epilogue`."""
    lines = [f"usage: {tool} COMMAND ARGS...   ({tool} help COMMAND, or {tool} COMMAND --help, for one command)"]
    for name, command in commands.items():
        synopsis = f"  {name} {command.args}".rstrip()
        if len(synopsis) > 58:
            lines.append(synopsis)
            lines.append(f"{'':60}{command.summary}")
        else:
            lines.append(f"{synopsis:60}{command.summary}")
    return "\n".join(lines) + "\n" + epilogue
