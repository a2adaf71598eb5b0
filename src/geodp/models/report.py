"""The privacy report a fitted model exposes: readable text that also carries a dict."""

from __future__ import annotations

__all__ = ["PrivacyReport"]


class PrivacyReport(str):
    """A ``str`` (the human-readable report) with the same facts as a dict in :meth:`to_dict`.

    Examples
    --------
    >>> report = PrivacyReport("epsilon = 1.0", {"epsilon": 1.0})
    >>> "epsilon = 1.0" in report, report.to_dict()["epsilon"]
    (True, 1.0)
    """

    def __new__(cls, text: str, data: dict):
        obj = super().__new__(cls, text)
        obj._data = dict(data)
        return obj

    def to_dict(self) -> dict:
        """The report's facts as a plain dict (a copy)."""
        return dict(self._data)
