"""The error and warning types of the trace readers."""


class TraceFormatError(ValueError):
    """A profiler output file that cannot be parsed; the message names the file and the line."""

    def __init__(self, path, line, reason):
        self.path = str(path)
        self.line = line
        self.reason = reason
        where = f"{self.path}, line {line}" if line is not None else self.path
        super().__init__(f"{where}: {reason}")


class InvalidRowsError(TraceFormatError):
    """Rows whose duration or timestamps cannot be right (negative, empty, infinite, beyond
    64-bit nanoseconds). ``rows`` names the first offenders (lines, row ids or event
    indices), ``count`` says how many there are."""

    def __init__(self, path, reason, rows=(), count=0):
        super().__init__(path, None, reason)
        self.rows = list(rows)
        self.count = count


class InvalidRowsWarning(UserWarning):
    """Rows with invalid durations or timestamps were left out (``drop_invalid=True``)."""


class DuplicateTraceWarning(UserWarning):
    """A folder held one run twice (a copy of a file, or the same run in another output format);
    the file named was left out so that its GPU time counts once."""
