"""The ``geodp`` command: ``geodp demo`` releases private means of real covariance descriptors;
``geodp shapes`` compares private mean shapes of real cells; ``geodp mdm`` classifies real
covariance matrices by private class means; ``geodp release`` writes the private Fréchet mean of
the records in a file, with its publishable guarantee.

One module per subcommand (:mod:`~geodp.cli.demo`, :mod:`~geodp.cli.shapes`,
:mod:`~geodp.cli.mdm`, :mod:`~geodp.cli.release`) over shared parts: :mod:`~geodp.cli.specs` (the one parser of space
specs such as ``spd:8``), :mod:`~geodp.cli.records` (reading records and points from files),
:mod:`~geodp.cli.ledger` (a budget kept in a file) and :mod:`~geodp.cli.common`.
"""

from __future__ import annotations

import argparse
import os
import sys

from geodp.cli import audit, demo, mdm, release, reproduce, shapes
from geodp.cli.common import CommandError, HelpFormatter, OneLineErrorParser, missing_extra
from geodp.cli.release import guarantee_schema
from geodp.cli.specs import parse_space, space_spec
from geodp.errors import GeodpError
from geodp.experiments.demo_study import DEMO_CLASSES, DEMO_EPSILONS, MECHANISMS, run_demo

__all__ = [
    "CommandError",
    "DEMO_CLASSES",
    "DEMO_EPSILONS",
    "MECHANISMS",
    "build_parser",
    "guarantee_schema",
    "missing_extra",
    "main",
    "parse_space",
    "run_demo",
    "space_spec",
]


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of the ``geodp`` command (``geodp --help`` prints its help).

    Every numeric option is checked by its argparse type, so a bad value stops here, with a
    one-line error (:class:`~geodp.cli.common.OneLineErrorParser`, for every subcommand).

    Examples
    --------
    >>> args = build_parser().parse_args(["shapes", "--releases", "10", "--epsilons", "1", "2"])
    >>> args.releases, args.epsilons, args.radius
    (10, [1.0, 2.0], 0.25)
    """
    import geodp

    parser = OneLineErrorParser(
        prog="geodp",
        formatter_class=HelpFormatter,
        description="geodp: differential privacy on Riemannian manifolds. Two runnable examples on\n"
        "real data, each printing a table and writing a plot, and the release of a private\n"
        "Fréchet mean of your own records.",
        epilog="examples:\n"
        "  geodp demo                       # about 10 s; table + geodp-demo/error_vs_epsilon.png\n"
        "  geodp shapes --releases 10       # quick run of the cell-shape study\n"
        "  geodp mdm --quick                # private MDM on real EMG and fMRI covariances\n"
        "  geodp release covs.npy --space spd:8 --center identity --radius 2 --epsilon 1 \\\n"
        "      --output mean.npy --guarantee mean.json\n"
        "  geodp audit epsilon --space sphere:2 --mechanism kng --epsilon 1   # check ε yourself\n"
        "  geodp <command> --help           # the options of a command and their defaults",
    )
    parser.add_argument(
        "--version", action="version", version=f"geodp {geodp.__version__}", help="print the version of geodp and exit"
    )
    sub = parser.add_subparsers(dest="command", required=True, title="commands")
    for command in (demo, shapes, release, mdm, audit, reproduce):
        command.add_parser(sub)
    return parser


def main(argv=None) -> int:
    """Entry point of the ``geodp`` console script; returns the exit code.

    Bad options exit with code 2 and a one-line message (``geodp <cmd>: error: …; see geodp <cmd>
    --help``). A handler may return an exit code of its own (``geodp audit``: 1 when a guarantee is
    violated, 3 when inconclusive); ``None`` means 0. Errors the user can fix — a
    :class:`~geodp.GeodpError` such as a radius beyond r*, a bad input file or an exhausted
    budget, a missing optional dependency, an unusable output folder — print
    ``geodp: error: <message>`` to stderr and return 2; any other exception is a bug and keeps
    its traceback.

    Examples
    --------
    >>> main(["demo", "--repeats", "1", "--no-plot"])  # doctest: +ELLIPSIS
    geodp demo: private Fréchet means ...
    done in ... s
    0
    """
    args = build_parser().parse_args(argv)
    try:
        code = args.handler(args)
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
    return 0 if code is None else int(code)
