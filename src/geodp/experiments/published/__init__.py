"""The published numbers of the four papers, as data, each with where it comes from.

One module per paper (:mod:`~geodp.experiments.published.r21`, ``u23``, ``s22``, ``k25``), each
holding a tuple ``VALUES`` of :class:`PublishedValue` entries (a key, the number or quoted text,
and its source: figure, panel, quoted sentence, or an axis reading with its precision) and a
``NOTE`` saying what we chose where the paper leaves a setting out. :func:`published` looks a
value up by paper and key.
"""

from __future__ import annotations

import contextlib
import importlib
from dataclasses import dataclass

from geodp.errors import InvalidParameterError

__all__ = ["PAPERS", "PublishedValue", "published", "published_values", "recording"]

_RECORDERS: list = []


@contextlib.contextmanager
def recording():
    """Collect the ``(paper, PublishedValue)`` pairs :func:`published` returns inside the block
    (each once, in order): what a reproduction compares with, written to its CSV.

    Examples
    --------
    >>> with recording() as seen:
    ...     _ = published("K25", "fig5-ratio-min")
    >>> [(paper, v.key) for paper, v in seen]
    [('K25', 'fig5-ratio-min')]
    """
    seen: list = []
    _RECORDERS.append(seen)
    try:
        yield seen
    finally:
        _RECORDERS.remove(seen)


PAPERS = ("R21", "U23", "S22", "K25")


@dataclass(frozen=True)
class PublishedValue:
    """One number (or quoted statement) of a paper.

    Attributes
    ----------
    key : str
        What it is, e.g. ``"fig1-sphere-ratio"``.
    value : float or str
        The published number, or quoted text when the paper gives no number.
    source : str
        Where it comes from: figure and panel, quoted text, or ``"axis reading of Fig. 2,
        panel b, ±5%"``.

    Examples
    --------
    >>> PublishedValue("x", 0.85, "quoted").value
    0.85
    """

    key: str
    value: float | str
    source: str


def published_values(paper: str) -> tuple[PublishedValue, ...]:
    """All published values of one paper (``"R21"``, ``"U23"``, ``"S22"`` or ``"K25"``).

    Raises
    ------
    InvalidParameterError
        For an unknown paper.

    Examples
    --------
    >>> all(isinstance(v, PublishedValue) for v in published_values("R21"))
    True
    """
    if paper not in PAPERS:
        raise InvalidParameterError(f"unknown paper {paper!r}; expected one of {', '.join(PAPERS)}")
    try:
        module = importlib.import_module(f"geodp.experiments.published.{paper.lower()}")
    except ModuleNotFoundError as err:
        if err.name != f"geodp.experiments.published.{paper.lower()}":
            raise
        return ()
    return tuple(getattr(module, "VALUES", ()))


def published(paper: str, key: str) -> PublishedValue:
    """The published value ``key`` of ``paper``.

    Raises
    ------
    InvalidParameterError
        For an unknown paper or key.

    Examples
    --------
    >>> published("R21", "fig1-sphere-noise-reduction").value
    0.15
    """
    for value in published_values(paper):
        if value.key == key:
            for seen in _RECORDERS:
                if (paper, value) not in seen:
                    seen.append((paper, value))
            return value
    raise InvalidParameterError(f"{paper} has no published value {key!r}")
