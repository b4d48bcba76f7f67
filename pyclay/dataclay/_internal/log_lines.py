"""Text that goes into a log line whole: control characters (but tab), and the Unicode line and
paragraph separators, written as escapes, so no text can start a line of its own or drive a terminal."""
from __future__ import annotations

import re

_CONTROL = re.compile(r"[\x00-\x08\x0a-\x1f\x7f-\x9f\u2028\u2029]")


def _escape(match: re.Match) -> str:
    code = ord(match.group())
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def escape_controls(text: str) -> str:
    """`text` with every control character but tab (newlines too) written as \\xNN or \\uNNNN."""
    return _CONTROL.sub(_escape, text)
