"""Typed errors and warnings raised by geodp.

Every error derives from :class:`GeodpError`; the ones about values also derive from
:class:`ValueError` and the ones about types from :class:`TypeError`, so generic handlers work.
"""

import warnings


class GeodpError(Exception):
    """Base class of every error geodp raises.

    Examples
    --------
    >>> import geodp
    >>> issubclass(geodp.errors.InvalidParameterError, geodp.GeodpError)
    True
    """


class InvalidParameterError(GeodpError, ValueError):
    """A parameter (ε, δ, radius, tolerance, …) has a value outside its allowed range."""


class InvalidTypeError(GeodpError, TypeError):
    """An argument has the wrong type (not an array, not a manifold, not a generator, …)."""


class InvalidDataError(GeodpError, ValueError):
    """Input data has the wrong shape, is empty, or holds NaN/inf."""


class NotOnManifoldError(InvalidDataError):
    """A point does not belong to the manifold within the dtype-aware tolerance."""


class AssumptionError(GeodpError, ValueError):
    """A privacy assumption fails: radius beyond r*, a non-normalisable law, …"""


class MissingDependencyError(GeodpError, ImportError):
    """An optional dependency is missing; the message names the ``pip install`` extra to add."""


class BudgetExceededError(GeodpError, ValueError):
    """A release would spend more privacy budget than the accountant holds."""


class ProposalBudgetExhaustedError(GeodpError, RuntimeError):
    """A rejection sampler used by hand (not through an estimator) reached its public proposal cap
    with no way to finish the draw. No estimator of geodp can raise it: their samplers end within
    public work (docs/guide.md, "Nothing fails after the charge")."""


class PrivacyLeakWarning(UserWarning):
    """Something that should be public was computed from the private data."""


class ConvergenceWarning(UserWarning):
    """An iterative solver stopped at ``max_iter`` before reaching its tolerance."""


class NumericalWarning(UserWarning):
    """A computation hit a floating-point limit (e.g. eigenvalues clipped to stay positive)."""


class ApproximateSamplerWarning(UserWarning):
    """A release fell back to an approximate (MCMC) sampler: DP then holds only approximately.

    Which sampler runs is decided from public quantities only, so this warning reveals nothing
    about the data. Filter it with ``warnings.simplefilter("ignore", ApproximateSamplerWarning)``
    once you have read the diagnostics in the privacy report.
    """


def missing_extra(extra: str) -> str:
    """How to install one of geodp's optional extras: the one wording every message uses.

    Examples
    --------
    >>> print(missing_extra("geomstats"))  # doctest: +ELLIPSIS
    from a checkout of geodp, run pip install -e ".[geomstats]" in the repository root (once geodp is ...
    """
    return (
        f'from a checkout of geodp, run pip install -e ".[{extra}]" in the repository root '
        f'(once geodp is published on a package index: pip install "geodp[{extra}]")'
    )


def as_published_only(as_published: bool, refusal: str, warning: str) -> None:
    """The gate of every as-published (unsound) variant of a paper: without ``as_published=True``
    refuse with ``refusal`` (it names the sound alternative); with it, warn the caller with a
    :class:`PrivacyLeakWarning` saying ``warning``.

    Examples
    --------
    >>> as_published_only(False, "unsound: pass as_published=True", "for reproductions only")
    Traceback (most recent call last):
    ...
    geodp.errors.InvalidParameterError: unsound: pass as_published=True
    """
    if not as_published:
        raise InvalidParameterError(refusal)
    warnings.warn(warning, PrivacyLeakWarning, stacklevel=3)
