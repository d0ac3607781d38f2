"""The one error type of baselines: a file that cannot be used or a comparison that is refused."""


class BaselineError(ValueError):
    """A baseline or results file that cannot be used, or a comparison that is refused."""
