"""The privacy-loss plot of an epsilon audit (matplotlib, from the optional ``experiments`` extra)."""

from __future__ import annotations

import numpy as np

from geodp.errors import InvalidTypeError, missing_extra

__all__ = ["plot_loss"]


def plot_loss(audit, path) -> None:
    """Draw the sampled privacy loss of an :class:`~geodp.audit.EpsilonAudit` to a PNG file.

    Histograms of ``L = ℓ0 − ℓ1 − (log Z0 − log Z1)`` at the round-2 draws of ``P0`` and of
    ``P1``, with the claimed ε, the certified lower bound and, where known, the exact ε as
    vertical lines (and their negatives: the loss of ``P1`` over ``P0`` is ``−L``). Where the
    normalisers are unknown (KNG off the quadrature's spaces, the truncated Laplace on Kendall
    shape spaces) the histograms are of ``ℓ0 − ℓ1``, the loss up to an unknown constant: no ε
    line can be placed on that axis, so none is drawn (the values are in the legend, and the
    x-label says so). The title gives the claimed ε (and δ when positive); the legend sits
    outside the axes, clear of the histograms' spikes.

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
        raise ImportError(f"plot_loss needs matplotlib: {missing_extra('experiments')}") from None
    shift = audit.log_normaliser_difference
    known = shift is not None
    losses = [s - (shift or 0.0) for s in audit.loss_samples]
    finite = np.concatenate([s[np.isfinite(s)] for s in losses])
    bins = np.linspace(finite.min(), finite.max(), 81)
    fig, ax = plt.subplots(figsize=(9.5, 4.5))
    for sample, label, colour in zip(losses, ("draws of P0", "draws of P1"), ("tab:blue", "tab:orange")):
        ax.hist(sample[np.isfinite(sample)], bins=bins, density=True, alpha=0.55, color=colour, label=label)
    if known:  # the loss itself: the claimed, certified and exact ε sit at fixed places on its axis
        lines = [
            (audit.epsilon, "claimed ε", "black", "-"),
            (audit.epsilon_lower_bound, "certified lower bound", "tab:red", "--"),
        ]
        if audit.exact_epsilon is not None:
            lines.append((audit.exact_epsilon, "exact ε", "tab:green", ":"))
        for value, label, colour, style in lines:
            ax.axvline(value, color=colour, linestyle=style, label=f"{label} = {value:.3g}")
            ax.axvline(-value, color=colour, linestyle=style)
        ax.set_xlabel("privacy loss L(x) = ln p0(x)/p1(x)")
    else:  # ℓ0 − ℓ1 only: the loss up to an unknown constant, so no line can be placed on this axis
        for text in (f"claimed ε = {audit.epsilon:g}", f"certified lower bound = {audit.epsilon_lower_bound:.3g}"):
            ax.plot([], [], color="none", label=text)  # legend entries only
        ax.set_xlabel(
            "ℓ0(x) − ℓ1(x): the privacy loss up to an unknown constant (the normalisers are not known;\n"
            "the ±ε lines are not drawn: they cannot be placed on this axis)"
        )
    mutant = f", MUTANT {audit.mutant}" if audit.mutant else ""
    claim = f"ε = {audit.epsilon:g}" + (f", δ = {audit.delta:g}" if audit.delta > 0 else "")
    ax.set_title(f"privacy loss of {audit.mechanism} ({claim}) on {audit.space.split(' (')[0]}{mutant}", fontsize=10)
    ax.set_ylabel("density of draws")
    ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1.0), borderaxespad=0.0)  # outside: no spike hidden
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
