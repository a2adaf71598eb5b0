"""The ``geodp`` command: ``geodp demo`` releases private means of real covariance descriptors;
``geodp shapes`` compares private mean shapes of real cells."""

from __future__ import annotations

import argparse
import importlib
import math
import os
import sys
import tempfile
import textwrap
import time
import warnings
from pathlib import Path

import numpy as np

from geodp.datasets import load_digit_descriptors
from geodp.errors import GeodpError, InvalidParameterError, NumericalWarning
from geodp.frechet import frechet_mean
from geodp.manifolds import SPD
from geodp.models import PrivateFrechetMean
from geodp.validation import as_generator

__all__ = ["build_parser", "install_hint", "main", "run_demo"]

DEMO_CLASSES = (0, 1, 2, 3)
DEMO_EPSILONS = (0.5, 1.0, 2.0, 5.0, 10.0, 20.0)
DEMO_DELTA = 1e-6
MECHANISMS = ("laplace", "tangent-gaussian")
_UNREPRESENTABLE = "The release is not a finite point of the space"


def _expected_error(mechanism: str, scale: float, dim: int) -> float:
    """Closed-form E ρ_LE: Laplace ``dσ`` (Gamma radius); Gaussian ``σ √2 Γ((d+1)/2)/Γ(d/2)``."""
    if mechanism == "laplace":
        return dim * scale
    return scale * math.sqrt(2.0) * math.exp(math.lgamma((dim + 1) / 2) - math.lgamma(dim / 2))


def run_demo(output_dir="geodp-demo", repeats: int = 20, seed: int = 0, plot: bool = True, out=None) -> list[dict]:
    """Release private class means of real digit covariance descriptors and report the errors.

    For digits 0–3 of scikit-learn's bundled images (9×9 SPD descriptors, log-Euclidean metric,
    public ball of U23 Thm A.7 around the identity), release the class means with the Laplace and
    the tangent Gaussian mechanisms over an ε grid (δ = 1e-6), ``repeats`` times each.

    Parameters
    ----------
    output_dir : str or Path
        Where the plot ``error_vs_epsilon.png`` is written.
    repeats : int
        Releases per (class, ε, mechanism).
    seed : int
        Seed for the demo's releases (a real release would use ``random_state=None``).
    plot : bool
        Write the plot (needs matplotlib, in the ``experiments`` extra: ``pip install -e ".[experiments]"``
        from a checkout).
    out : file-like, optional
        Default: the current ``sys.stdout``.

    Returns
    -------
    list of dict
        One row per (class, ε, mechanism) with the mean error and time per release.

    Examples
    --------
    >>> import io
    >>> rows = run_demo(repeats=1, plot=False, out=io.StringIO())
    >>> len(rows)
    48
    """
    out = sys.stdout if out is None else out
    if isinstance(repeats, bool) or not isinstance(repeats, (int, np.integer)) or repeats < 1:
        raise InvalidParameterError(f"repeats must be an integer >= 1, got {repeats!r}.")
    rng = as_generator(seed)
    data = load_digit_descriptors(classes=DEMO_CLASSES)
    space = SPD(9, metric="log-euclidean")
    center = np.eye(9)
    print(
        f"geodp demo: private Fréchet means of covariance descriptors of real handwritten digits\n"
        f"  data: scikit-learn's bundled 8×8 digits {list(DEMO_CLASSES)} → 9×9 SPD descriptors (U23 §6.2)\n"
        f"  space: {space!r}; public ball around I of radius r = {data.radius:.4f} (U23 Thm A.7)\n"
        f"  {repeats} releases per cell; error = log-Euclidean distance to the non-private class mean, measured\n"
        f"  in the exact log-Euclidean coordinates of the release (at small ε some releases are too large\n"
        f"  to be written as 9×9 matrices in float64)\n",
        file=out,
    )
    means = {c: frechet_mean(space, data.descriptors[data.target == c]) for c in DEMO_CLASSES}
    between = [float(space._dist(means[a], means[b])) for a in DEMO_CLASSES for b in DEMO_CLASSES if a < b]
    print(f"  for scale: distances between the non-private class means range {min(between):.2f}–{max(between):.2f}\n", file=out)

    rows, example = [], None
    header = f"{'class':>5} {'n':>4} {'epsilon':>7} {'mechanism':>16} {'LE error':>9} {'expected':>9} {'ms/release':>10}"
    print(header, file=out)
    print("-" * len(header), file=out)
    for c in DEMO_CLASSES:
        X = data.descriptors[data.target == c]
        truth = space.to_coordinates(means[c])
        for eps in DEMO_EPSILONS:
            for mech in MECHANISMS:
                errors, start = [], time.perf_counter()
                for _ in range(repeats):
                    with warnings.catch_warnings():
                        # At small ε a release can lie too far out to be a float64 SPD matrix; the
                        # demo measures the error on the exact coordinates, so the warning is moot.
                        warnings.filterwarnings("ignore", _UNREPRESENTABLE, NumericalWarning)
                        model = PrivateFrechetMean(
                            space, epsilon=eps, delta=DEMO_DELTA if mech != "laplace" else 0.0,
                            center=center, radius=data.radius, mechanism=mech, random_state=rng,
                        ).fit(X)
                    errors.append(float(np.linalg.norm(model.mean_coordinates_ - truth)))
                ms = 1e3 * (time.perf_counter() - start) / repeats
                expected = _expected_error(mech, model.mechanism_.scale, space.dim)
                rows.append(dict(digit=c, n=len(X), epsilon=eps, mechanism=mech, error=float(np.mean(errors)),
                                 error_std=float(np.std(errors)), expected=expected, ms=ms))
                print(f"{c:>5} {len(X):>4} {eps:>7g} {mech:>16} {np.mean(errors):>9.3f} {expected:>9.3f} {ms:>10.2f}", file=out)
                if c == DEMO_CLASSES[0] and eps == 1.0 and mech == "tangent-gaussian":
                    example = model.privacy_report_
    print("\nThe privacy report of one release (digit 0, epsilon = 1, tangent Gaussian):\n", file=out)
    print(example, file=out)
    if plot:
        _plot(rows, Path(output_dir), out)
    return rows


def _plot(rows: list[dict], output_dir: Path, out) -> None:
    from geodp.experiments.plotting import epsilon_figure

    with epsilon_figure(output_dir / "error_vs_epsilon.png", ylabel="log-Euclidean error of the private mean",
                        title="Private class means of digit descriptors (δ = 1e-6 for Gaussian)", out=out) as ax:
        if ax is None:
            return
        for mech, color in zip(MECHANISMS, ("tab:blue", "tab:orange")):
            eps = np.array(DEMO_EPSILONS)
            err = np.array([np.mean([r["error"] for r in rows if r["mechanism"] == mech and r["epsilon"] == e]) for e in eps])
            exp = np.array([np.mean([r["expected"] for r in rows if r["mechanism"] == mech and r["epsilon"] == e]) for e in eps])
            ax.plot(eps, err, "o-", color=color, label=f"{mech} (measured)")
            ax.plot(eps, exp, ":", color=color, label=f"{mech} (closed form)")


# ---------------------------------------------------------------------------------------------
# Command line: every option is validated by its argparse type before any work is done, so a bad
# value gives a one-line usage error (exit code 2) and no traceback.

SHAPES_LANDMARKS = 8  # the shapes command studies 8-landmark configurations


class CommandError(Exception):
    """A problem the user can fix (missing extra, unusable output folder): one line, exit code 2."""


def install_hint(extra: str) -> str:
    """How to install one of geodp's optional extras, from a checkout or (once published) an index.

    Examples
    --------
    >>> print(install_hint("geomstats"))
    from a checkout of geodp, run pip install -e ".[geomstats]" in the repository root (once geodp is published on a package index: pip install "geodp[geomstats]")
    """
    return (f'from a checkout of geodp, run pip install -e ".[{extra}]" in the repository root '
            f'(once geodp is published on a package index: pip install "geodp[{extra}]")')


def _integer_at_least(minimum: int, why: str = ""):
    """An argparse type: an integer >= ``minimum``; ``why`` explains the minimum."""

    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected an integer >= {minimum}, got {text!r}") from None
        if value < minimum:
            raise argparse.ArgumentTypeError(f"must be an integer >= {minimum}{why}, got {text!r}")
        return value

    return parse


_positive_int = _integer_at_least(1)
_releases = _integer_at_least(2, " (the table reports a standard error over releases)")
_seed = _integer_at_least(0)


def _positive_float(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a positive number, got {text!r}") from None
    if not (math.isfinite(value) and value > 0):
        raise argparse.ArgumentTypeError(f"must be a finite number > 0, got {text!r}")
    return value


def _shape_radius(text: str) -> float:
    from geodp.manifolds import KendallShape
    from geodp.sensitivity import max_radius

    value = _positive_float(text)
    r_star = max_radius(KendallShape(SHAPES_LANDMARKS))
    if value >= r_star:
        raise argparse.ArgumentTypeError(
            f"must be < r* = π/8 ≈ {r_star:.4f} for Kendall shapes (the sensitivity bounds need "
            f"radius < r*, R21 Assumption 1), got {text!r}")
    return value


def _prepare_output_dir(path) -> Path:
    """Create ``path`` (and parents) now and check that a file can be written in it."""
    path = Path(path)
    if path.exists() and not path.is_dir():
        raise CommandError(f"--output-dir {str(path)!r} exists and is not a folder; choose another --output-dir")
    try:
        path.mkdir(parents=True, exist_ok=True)
    except OSError as err:
        raise CommandError(f"--output-dir {str(path)!r} cannot be created ({err.strerror or err}); "
                           "choose another --output-dir") from None
    try:
        with tempfile.TemporaryFile(dir=path):
            pass
    except OSError as err:
        raise CommandError(f"--output-dir {str(path)!r} is not writable ({err.strerror or err}); "
                           "choose another --output-dir") from None
    return path


def _require_geomstats() -> None:
    try:
        importlib.import_module("geomstats.datasets.utils")
    except ImportError:
        raise CommandError("the shapes command needs the optional dependency geomstats: "
                           + install_hint("geomstats")) from None
    except Exception as err:  # an installed geomstats that does not import (e.g. numpy >= 2.4)
        raise CommandError(
            f"geomstats is installed but does not import ({type(err).__name__}: {err}); the [geomstats] "
            f"extra pins geomstats==2.8.0 with numpy<2.4: {install_hint('geomstats')}") from None


def _run_demo_command(args) -> None:
    output_dir = args.output_dir if args.no_plot else _prepare_output_dir(args.output_dir)
    start = time.perf_counter()
    run_demo(output_dir, repeats=args.repeats, seed=args.seed, plot=not args.no_plot)
    print(f"\ndone in {time.perf_counter() - start:.1f} s")


def _run_shapes_command(args) -> None:
    _require_geomstats()
    output_dir = None if args.no_plot else _prepare_output_dir(args.output_dir)
    from geodp.experiments import run_cell_shapes

    start = time.perf_counter()
    run_cell_shapes(n_landmarks=SHAPES_LANDMARKS, radius=args.radius, epsilons=tuple(args.epsilons),
                    releases=args.releases, seed=args.seed, output_dir=output_dir)
    print(f"\ndone in {time.perf_counter() - start:.1f} s")


class _HelpFormatter(argparse.RawDescriptionHelpFormatter):
    pass


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of the ``geodp`` command (``geodp --help`` prints its help).

    Every numeric option is checked by its argparse type, so a bad value stops here.

    Examples
    --------
    >>> args = build_parser().parse_args(["shapes", "--releases", "10", "--epsilons", "1", "2"])
    >>> args.releases, args.epsilons, args.radius
    (10, [1.0, 2.0], 0.25)
    """
    import geodp

    parser = argparse.ArgumentParser(
        prog="geodp", formatter_class=_HelpFormatter,
        description="geodp: differential privacy on Riemannian manifolds. Two runnable examples on\n"
                    "real data; each prints a table and writes a plot.",
        epilog="examples:\n"
               "  geodp demo                       # about 10 s; table + geodp-demo/error_vs_epsilon.png\n"
               "  geodp shapes --releases 10       # quick run of the cell-shape study\n"
               "  geodp <command> --help           # the options of a command and their defaults",
    )
    parser.add_argument("--version", action="version", version=f"geodp {geodp.__version__}",
                        help="print the version of geodp and exit")
    sub = parser.add_subparsers(dest="command", required=True, title="commands")

    demo = sub.add_parser(
        "demo", formatter_class=_HelpFormatter,
        help="private class means of covariance descriptors of real digits (about 10 s)",
        description="Release private class means of 9×9 SPD covariance descriptors of scikit-learn's\n"
                    "bundled handwritten digits 0–3 (nothing is downloaded) with the Laplace and the\n"
                    "tangent Gaussian mechanisms over ε = " + ", ".join(f"{e:g}" for e in DEMO_EPSILONS)
                    + f"\n(δ = {DEMO_DELTA:g} for the Gaussian). Prints a table (class, n, ε, mechanism,\n"
                    "measured and closed-form error, time per release) and one full privacy report,\n"
                    "and writes DIR/error_vs_epsilon.png.",
    )
    demo.add_argument("--output-dir", default="geodp-demo", metavar="DIR",
                      help="folder for the plot, created if missing (default: %(default)s)")
    demo.add_argument("--repeats", type=_positive_int, default=20, metavar="N",
                      help="releases per (class, ε, mechanism) cell, >= 1 (default: %(default)s)")
    demo.add_argument("--seed", type=_seed, default=0, metavar="SEED",
                      help="seed of the demo's releases, >= 0 (default: %(default)s; a real release "
                           "would use fresh entropy)")
    demo.add_argument("--no-plot", action="store_true", help="print the table only; write no plot")
    demo.set_defaults(handler=_run_demo_command)

    shapes = sub.add_parser(
        "shapes", formatter_class=_HelpFormatter,
        help="private mean shapes of real cells: KNG vs Laplace vs point-wise (needs geomstats; "
             "about 30–60 s at the defaults on 2 cores)",
        description="Release the private mean shape of real cell contours (geomstats' cell data as\n"
                    f"{SHAPES_LANDMARKS}-landmark Kendall shapes; the public centre is the mean shape of the other\n"
                    "cell line) with the K-norm gradient mechanism, the Riemannian Laplace mechanism\n"
                    "and the sound point-wise baseline. Prints the distance of each release to the\n"
                    "non-private mean shape per ε and writes DIR/cell_shapes.png.\n\n"
                    + textwrap.fill("Needs geomstats: " + install_hint("geomstats") + ".", 80,
                                    break_long_words=False, break_on_hyphens=False),
    )
    shapes.add_argument("--output-dir", default="geodp-shapes", metavar="DIR",
                        help="folder for the plot, created if missing (default: %(default)s)")
    shapes.add_argument("--releases", type=_releases, default=100, metavar="N",
                        help="releases per (ε, mechanism) cell, >= 2; e.g. 10 for a quick run (default: %(default)s)")
    shapes.add_argument("--radius", type=_shape_radius, default=0.25, metavar="R",
                        help="public ball radius in shape distance, 0 < R < r* = π/8 ≈ 0.3927; above about "
                             "0.3 KNG falls back to slow, approximate MCMC (default: %(default)s)")
    shapes.add_argument("--epsilons", type=_positive_float, nargs="+", default=[0.5, 1.0, 2.0], metavar="EPS",
                        help="privacy budgets ε > 0 of the table (default: 0.5 1.0 2.0)")
    shapes.add_argument("--seed", type=_seed, default=0, metavar="SEED",
                        help="seed of the releases, >= 0 (default: %(default)s)")
    shapes.add_argument("--no-plot", action="store_true", help="print the table only; write no plot")
    shapes.set_defaults(handler=_run_shapes_command)
    return parser


def main(argv=None) -> int:
    """Entry point of the ``geodp`` console script; returns the exit code.

    Bad options exit with code 2 and a usage message (argparse). Errors the user can fix — a
    :class:`~geodp.GeodpError` such as a radius beyond r*, a missing optional dependency, an
    unusable ``--output-dir`` — print ``geodp: error: <message>`` to stderr and return 2; any other
    exception is a bug and keeps its traceback.

    Examples
    --------
    >>> main(["demo", "--repeats", "1", "--no-plot"])  # doctest: +ELLIPSIS
    geodp demo: private Fréchet means ...
    done in ... s
    0
    """
    args = build_parser().parse_args(argv)
    try:
        args.handler(args)
    except (GeodpError, CommandError) as err:
        print(f"geodp: error: {err}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("\ngeodp: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:  # e.g. ``geodp demo | head``: stop quietly
        try:
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, sys.stdout.fileno())
        except (OSError, ValueError, AttributeError):
            pass
        return 1
    return 0
