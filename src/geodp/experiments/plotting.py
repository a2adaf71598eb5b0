"""One figure style for every experiment: an ε axis on log–log scales, saved as PNG."""

from __future__ import annotations

from contextlib import contextmanager
from pathlib import Path

from geodp.errors import missing_extra

__all__ = ["epsilon_figure", "agg_pyplot"]


def agg_pyplot():
    """``matplotlib.pyplot`` on the non-interactive Agg backend (figures are only saved to files).

    Examples
    --------
    >>> agg_pyplot().get_backend().lower()
    'agg'
    """
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


@contextmanager
def epsilon_figure(path, *, ylabel: str, title: str, out):
    """Yield a matplotlib ``Axes`` (or ``None`` without matplotlib), then style and save it.

    Parameters
    ----------
    path : str or Path
        PNG file to write; its folder is created.
    ylabel, title : str
    out : file-like
        Where to say that the plot was written (or skipped).

    Examples
    --------
    >>> import io, tempfile, pathlib
    >>> with tempfile.TemporaryDirectory() as d, epsilon_figure(pathlib.Path(d) / "f.png", ylabel="error",
    ...                                                       title="t", out=io.StringIO()) as ax:
    ...     _ = ax.plot([0.5, 1.0], [2.0, 1.0], label="mechanism") if ax is not None else None
    """
    try:
        plt = agg_pyplot()
    except ImportError:
        print(f"\n(plot skipped: matplotlib is not installed: {missing_extra('experiments')})", file=out)
        yield None
        return
    path = Path(path)
    fig, ax = plt.subplots(figsize=(6.4, 4.2))
    try:
        yield ax
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel("epsilon")
        ax.set_ylabel(ylabel)
        ax.set_title(title)
        ax.legend()
        ax.grid(True, which="both", alpha=0.3)
        fig.tight_layout()
        path.parent.mkdir(parents=True, exist_ok=True)
        fig.savefig(path, dpi=120)
        print(f"\nplot written to {path}", file=out)
    finally:
        plt.close(fig)
