"""``geodp shapes``: private mean shapes of real cells (K-norm gradient vs Laplace vs point-wise)."""

from __future__ import annotations

import argparse
import textwrap
import time

from geodp.cli.common import (
    HelpFormatter,
    integer_at_least,
    missing_extra,
    positive_float,
    prepare_output_dir,
    require_geomstats,
)

__all__ = ["SHAPES_LANDMARKS", "add_parser"]

SHAPES_LANDMARKS = 8  # the shapes command studies 8-landmark configurations


def _shape_radius(text: str) -> float:
    from geodp.manifolds import KendallShape
    from geodp.sensitivity import max_radius

    value = positive_float(text)
    r_star = max_radius(KendallShape(SHAPES_LANDMARKS))
    if value >= r_star:
        raise argparse.ArgumentTypeError(
            f"must be < r* = π/8 ≈ {r_star:.4f} for Kendall shapes (the sensitivity bounds need "
            f"radius < r*, R21 Assumption 1), got {text!r}"
        )
    return value


def _run_command(args) -> None:
    require_geomstats("the shapes command")
    output_dir = None if args.no_plot else prepare_output_dir(args.output_dir)
    from geodp.experiments import run_cell_shapes

    start = time.perf_counter()
    run_cell_shapes(
        n_landmarks=SHAPES_LANDMARKS,
        radius=args.radius,
        epsilons=tuple(args.epsilons),
        releases=args.releases,
        seed=args.seed,
        output_dir=output_dir,
    )
    print(f"\ndone in {time.perf_counter() - start:.1f} s")


def add_parser(sub) -> None:
    """Add the ``shapes`` subcommand to the subparsers ``sub`` of the ``geodp`` parser.

    Examples
    --------
    >>> import argparse
    >>> parser = argparse.ArgumentParser(prog="geodp")
    >>> add_parser(parser.add_subparsers(dest="command"))
    >>> args = parser.parse_args(["shapes", "--releases", "10", "--epsilons", "1", "2"])
    >>> args.releases, args.epsilons, args.radius
    (10, [1.0, 2.0], 0.25)
    """
    shapes = sub.add_parser(
        "shapes",
        formatter_class=HelpFormatter,
        help="private mean shapes of real cells: KNG vs Laplace vs point-wise (needs geomstats; "
        "about 30–60 s at the defaults on 2 cores)",
        description="Release the private mean shape of real cell contours (geomstats' cell data as\n"
        f"{SHAPES_LANDMARKS}-landmark Kendall shapes; the public centre is the mean shape of the other\n"
        "cell line) with the K-norm gradient mechanism, the Riemannian Laplace mechanism\n"
        "and the sound point-wise baseline. Prints the distance of each release to the\n"
        "non-private mean shape per ε and writes DIR/cell_shapes.png.\n\n"
        + textwrap.fill(
            "Needs geomstats: " + missing_extra("geomstats") + ".", 80, break_long_words=False, break_on_hyphens=False
        ),
    )
    shapes.add_argument(
        "--output-dir",
        default="geodp-shapes",
        metavar="DIR",
        help="folder for the plot, created if missing (default: %(default)s)",
    )
    shapes.add_argument(
        "--releases",
        type=integer_at_least(2, " (the table reports a standard error over releases)"),
        default=100,
        metavar="N",
        help="releases per (ε, mechanism) cell, >= 2; e.g. 10 for a quick run (default: %(default)s)",
    )
    shapes.add_argument(
        "--radius",
        type=_shape_radius,
        default=0.25,
        metavar="R",
        help="public ball radius in shape distance, 0 < R < r* = π/8 ≈ 0.3927; above about "
        "0.3 KNG falls back to slow, approximate MCMC (default: %(default)s)",
    )
    shapes.add_argument(
        "--epsilons",
        type=positive_float,
        nargs="+",
        default=[0.5, 1.0, 2.0],
        metavar="EPS",
        help="privacy budgets ε > 0 of the table (default: 0.5 1.0 2.0)",
    )
    shapes.add_argument(
        "--seed",
        type=integer_at_least(0),
        default=0,
        metavar="SEED",
        help="seed of the releases, >= 0 (default: %(default)s)",
    )
    shapes.add_argument("--no-plot", action="store_true", help="print the table only; write no plot")
    shapes.set_defaults(handler=_run_command)
