"""Where the bytes of a CSV table come from, and its lines: a file streamed in blocks (maybe
gzip) or text given by the caller, checked in one pass (empty, binary, not UTF-8, cut gzip),
and the line helpers that find a header after the tools' preambles (ncu's ``==PROF==``,
nsys's progress lines). csv_table.py parses the rows over this.
"""

import codecs
import csv
import gzip
import io
import re
import zlib
from pathlib import Path

from .errors import TraceFormatError
from .source import _check_block, _check_file

# How far into a file to look for the header line: the ncu and nsys preambles are short.
_HEADER_SCAN_LINES = 200
# Bytes read at once while scanning a file.
_BLOCK = 1 << 24


# --------------------------------------------------------------------------------------------
# Lines
# --------------------------------------------------------------------------------------------

def _is_preamble(line):
    """Lines that tools print before (or between) CSV rows: ncu's ==PROF==, nsys's progress."""
    s = line.strip()
    return (not s or s.startswith("==") or s.startswith("Generating ") or s.startswith("Processing [")
            or s.startswith("** ") or s.startswith("NOTICE:") or s.startswith("WARNING:"))


# A line that starts like a tool message (see _is_preamble): one scan of the data, fast
# because the pattern begins with a literal newline.
_PREAMBLE_LINE = re.compile(rb"\n[ \t]*(?:==|Generating |Processing \[|\*\* |NOTICE:|WARNING:)")
_NON_SPACE = re.compile(rb"\S")


def _lines(text):
    # Only real line breaks: kernel names never hold them, but may hold other odd characters.
    return re.split(r"\r?\n", text)


def _split(line):
    try:
        return next(csv.reader([line]))
    except (csv.Error, StopIteration):
        return []


def _find_header(path, lines, is_header):
    """Index of the first line whose fields satisfy ``is_header``, skipping tool preambles."""
    first_content = None
    for i, line in enumerate(lines[:_HEADER_SCAN_LINES]):
        if _is_preamble(line):
            continue
        if first_content is None:
            first_content = i
        if is_header([f.strip() for f in _split(line)]):
            return i
    if first_content is None:
        raise TraceFormatError(path, 1, "no CSV header found (only tool messages or blank lines)")
    return None


def _head_lines(data, count):
    """The first ``count`` lines of ``data`` (bytes) as text, and where each next line starts."""
    lines, starts, pos = [], [], 0
    while len(lines) < count and pos < len(data):
        end = data.find(b"\n", pos)
        end = len(data) if end < 0 else end
        lines.append(data[pos:end].rstrip(b"\r").decode("utf-8", errors="replace"))
        pos = end + 1
        starts.append(pos)
    return lines, starts


def _body_offset(data, header_line):
    """Byte offset of the line after line ``header_line`` (1-based)."""
    pos = 0
    for _ in range(header_line):
        nl = data.find(b"\n", pos)
        if nl < 0:
            return len(data)
        pos = nl + 1
    return pos


# --------------------------------------------------------------------------------------------
# The source: a file (streamed, maybe gzip) or text given by the caller
# --------------------------------------------------------------------------------------------

class _Source:
    """Where the CSV bytes come from; ``scan()`` checks them in one streamed pass."""

    def __init__(self, path, text=None):
        self.path = Path(path)
        self.data = text.encode("utf-8") if text is not None else None
        self.gzip = False
        if self.data is None:
            _check_file(self.path)
            with open(self.path, "rb") as f:
                self.gzip = f.read(2) == b"\x1f\x8b"

    def open(self):
        if self.data is not None:
            return io.BytesIO(self.data)
        if self.gzip:
            return gzip.open(self.path, "rb")
        return open(self.path, "rb")

    def read_all(self):
        if self.data is None:
            with self.open() as f:
                try:
                    self.data = f.read()
                except (OSError, EOFError, zlib.error) as exc:
                    raise TraceFormatError(self.path, None, f"truncated or corrupt gzip data ({exc})") from None
            if self.data[:3] == b"\xef\xbb\xbf":
                self.data = self.data[3:]
        return self.data

    def scan(self):
        """Head bytes, newline count, the last line's bytes, whether a tool message follows
        the first line; empty, binary (NUL) and non-UTF-8 data are errors at their line."""
        head, tail, newlines, preamble = b"", b"", 0, False
        decoder = codecs.getincrementaldecoder("utf-8")()
        try:
            with self.open() as f:
                first = True
                while True:
                    block = f.read(_BLOCK)
                    if not block:
                        break
                    if first and block[:3] == b"\xef\xbb\xbf":
                        block = block[3:]
                    if first:
                        head = block[:1 << 17]
                        first = False
                    _check_block(self.path, block, newlines, decoder, final=False)
                    # Tool messages: ncu's "==PROF==" lines anywhere, the others (nsys's
                    # progress, notices) only before the output, in the first block.
                    if not preamble and (block.find(b"\n==") >= 0 or
                                         (tail.endswith(b"\n") and block.startswith(b"==")) or
                                         (newlines == 0 and _PREAMBLE_LINE.search(block) is not None)):
                        preamble = True
                    newlines += block.count(b"\n")
                    tail = block[-(1 << 16):] if len(block) >= 1 << 16 else (tail + block)[-(1 << 16):]
                _check_block(self.path, b"", newlines, decoder, final=True)
        except (OSError, EOFError, zlib.error) as exc:
            raise TraceFormatError(self.path, None, f"truncated or corrupt gzip data ({exc})") from None
        if not head or not _NON_SPACE.search(head) and not _NON_SPACE.search(tail):
            raise TraceFormatError(self.path, 1, "file is empty")
        return head, tail, newlines, preamble
