"""The one error type that trace readers raise for malformed input."""


class TraceFormatError(ValueError):
    """A profiler output file that cannot be parsed; the message names the file and the line."""

    def __init__(self, path, line, reason):
        self.path = str(path)
        self.line = line
        self.reason = reason
        where = f"{self.path}, line {line}" if line is not None else self.path
        super().__init__(f"{where}: {reason}")
