"""``geodp demo``: private class means of covariance descriptors of real handwritten digits (the
command; the study is :mod:`geodp.experiments.demo_study`)."""

from __future__ import annotations

import time

from geodp.cli.common import HelpFormatter, integer_at_least, prepare_output_dir
from geodp.experiments.demo_study import DEMO_DELTA, DEMO_EPSILONS

__all__ = ["add_parser"]


def _run_command(args) -> None:
    # The command runs geodp.cli.run_demo, looked up when it runs: that package-level name is the
    # public one, and replacing it (e.g. in a test) reaches the command.
    import geodp.cli

    output_dir = args.output_dir if args.no_plot else prepare_output_dir(args.output_dir)
    start = time.perf_counter()
    geodp.cli.run_demo(output_dir, repeats=args.repeats, seed=args.seed, plot=not args.no_plot)
    print(f"\ndone in {time.perf_counter() - start:.1f} s")


def add_parser(sub) -> None:
    """Add the ``demo`` subcommand to the subparsers ``sub`` of the ``geodp`` parser.

    Examples
    --------
    >>> import argparse
    >>> parser = argparse.ArgumentParser(prog="geodp")
    >>> add_parser(parser.add_subparsers(dest="command"))
    >>> parser.parse_args(["demo", "--repeats", "3"]).repeats
    3
    """
    demo = sub.add_parser(
        "demo",
        formatter_class=HelpFormatter,
        help="private class means of covariance descriptors of real digits (about 10 s)",
        description="Release private class means of 9×9 SPD covariance descriptors of scikit-learn's\n"
        "bundled handwritten digits 0–3 (nothing is downloaded) with the Laplace and the\n"
        "tangent Gaussian mechanisms over ε = "
        + ", ".join(f"{e:g}" for e in DEMO_EPSILONS)
        + f"\n(δ = {DEMO_DELTA:g} for the Gaussian). Prints a table (class, n, ε, mechanism,\n"
        "measured and closed-form error, time per release) and one full privacy report,\n"
        "and writes DIR/error_vs_epsilon.png.",
    )
    demo.add_argument(
        "--output-dir",
        default="geodp-demo",
        metavar="DIR",
        help="folder for the plot, created if missing (default: %(default)s)",
    )
    demo.add_argument(
        "--repeats",
        type=integer_at_least(1),
        default=20,
        metavar="N",
        help="releases per (class, ε, mechanism) cell, >= 1 (default: %(default)s)",
    )
    demo.add_argument(
        "--seed",
        type=integer_at_least(0),
        default=0,
        metavar="SEED",
        help="seed of the demo's releases, >= 0 (default: %(default)s; a real release would use fresh entropy)",
    )
    demo.add_argument("--no-plot", action="store_true", help="print the table only; write no plot")
    demo.set_defaults(handler=_run_command)
