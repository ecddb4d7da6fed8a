"""The README's commands and code blocks, as CI runs them: read from README.md itself, so that
what a new user copies and what CI runs cannot drift apart. Standard library only.

Usage:
  python3 tools/readme.py command N        README command N (1: install and open, 2: tests)
  python3 tools/readme.py block HEADING LANG
                                           the first ```LANG block under the ## HEADING
"""

from __future__ import annotations

import sys
from pathlib import Path

README = Path(__file__).resolve().parents[1] / "README.md"
QUICK_START = "Quick start"


def block(heading: str, lang: str, text: str | None = None) -> str:
    """The first fenced ``lang`` block of the section whose ``##`` heading starts with
    ``heading`` (a ``## `` line inside a code block is code, not a heading)."""
    text = README.read_text(encoding="utf-8") if text is None else text
    section: str | None = None
    fence: str | None = None  # the language of the block we are in, "" for a bare fence
    found: list[str] = []
    for line in text.splitlines():
        if fence is None and line.startswith("```"):
            fence = line[3:].strip()
            continue
        if fence is not None and line.startswith("```"):
            if section is not None and section.startswith(heading) and fence == lang:
                return "\n".join(found) + "\n"
            fence, found = None, []
            continue
        if fence is not None:
            found.append(line)
        elif line.startswith("## "):
            section = line[3:].strip()
    raise SystemExit(f"README.md: no ```{lang} block under '## {heading}'")


def commands(text: str | None = None) -> list[str]:
    """The Quick start block's commands: its lines that are not comments or blank, a line
    ending in a backslash joined with the next, as a shell would."""
    joined: list[str] = []
    pending = ""
    for line in block(QUICK_START, "bash", text).splitlines():
        if not pending and (not line.strip() or line.lstrip().startswith("#")):
            continue
        if line.rstrip().endswith("\\"):
            pending += line.rstrip()[:-1].strip() + " "
            continue
        joined.append((pending + line.strip()).strip())
        pending = ""
    if pending:
        joined.append(pending.strip())
    return joined


def main(argv: list[str]) -> int:
    if len(argv) == 2 and argv[0] == "command":
        found = commands()
        index = int(argv[1])
        if not 1 <= index <= len(found):
            raise SystemExit(f"README.md: {len(found)} Quick start commands, no command {index}")
        print(found[index - 1])
        return 0
    if len(argv) == 3 and argv[0] == "block":
        sys.stdout.write(block(argv[1], argv[2]))
        return 0
    raise SystemExit(__doc__)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
