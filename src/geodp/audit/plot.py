"""The privacy-loss plot of an epsilon audit (matplotlib, from the optional ``experiments`` extra)."""

from __future__ import annotations

import numpy as np

from geodp.errors import InvalidTypeError

__all__ = ["plot_loss"]


def plot_loss(audit, path) -> None:
    """Draw the sampled privacy loss of an :class:`~geodp.audit.EpsilonAudit` to a PNG file.

    Histograms of ``L = ℓ0 − ℓ1 − (log Z0 − log Z1)`` at the round-2 draws of ``P0`` and of
    ``P1`` (without the normaliser term where it is unknown: the histograms are then shifted by
    an unknown constant, and the title says so), with the claimed ε, the certified lower bound and,
    where known, the exact ε as vertical lines (and their negatives: the loss of ``P1`` over ``P0``
    is ``−L``).

    Parameters
    ----------
    audit : EpsilonAudit
    path : str or Path
        The PNG file to write.

    Raises
    ------
    ImportError
        matplotlib is not installed (it is in the ``experiments`` extra).

    Examples
    --------
    >>> import tempfile, pathlib
    >>> import numpy as np
    >>> from geodp.audit import audit_epsilon
    >>> from geodp.manifolds import Euclidean
    >>> audit = audit_epsilon(Euclidean(2), epsilon=1.0, n=5, radius=1.0, center=np.zeros(2),
    ...                       n_samples=2000, rng=0)
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     plot_loss(audit, pathlib.Path(tmp) / "loss.png")
    ...     (pathlib.Path(tmp) / "loss.png").stat().st_size > 0
    True
    """
    from geodp.audit.epsilon import EpsilonAudit

    if not isinstance(audit, EpsilonAudit):
        raise InvalidTypeError(f"audit must be an EpsilonAudit, got {type(audit).__name__}.")
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        raise ImportError('plot_loss needs matplotlib, in the experiments extra: from a checkout of geodp, run '
                          'pip install -e ".[experiments]" in the repository root') from None
    shift = audit.log_normaliser_difference
    losses = [s - (shift or 0.0) for s in audit.loss_samples]
    finite = np.concatenate([s[np.isfinite(s)] for s in losses])
    bins = np.linspace(finite.min(), finite.max(), 81)
    fig, ax = plt.subplots(figsize=(7.5, 4.5))
    for sample, label, colour in zip(losses, ("draws of P0", "draws of P1"), ("tab:blue", "tab:orange")):
        ax.hist(sample[np.isfinite(sample)], bins=bins, density=True, alpha=0.55, color=colour, label=label)
    lines = [(audit.epsilon, "claimed ε", "black", "-"), (audit.epsilon_lower_bound, "certified lower bound", "tab:red", "--")]
    if audit.exact_epsilon is not None:
        lines.append((audit.exact_epsilon, "exact ε", "tab:green", ":"))
    for value, label, colour, style in lines:
        ax.axvline(value, color=colour, linestyle=style, label=f"{label} = {value:.3g}")
        ax.axvline(-value, color=colour, linestyle=style)
    mutant = f", MUTANT {audit.mutant}" if audit.mutant else ""
    known = "" if shift is not None else " (normalisers unknown: shifted by a constant)"
    ax.set_title(f"privacy loss of {audit.mechanism} on {audit.space.split(' (')[0]}{mutant}{known}", fontsize=10)
    ax.set_xlabel("privacy loss L(x) = ln p0(x)/p1(x)")
    ax.set_ylabel("density of draws")
    ax.legend(fontsize=8, loc="upper left")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
