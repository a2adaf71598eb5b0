"""``geodp reproduce``: redo a figure or table of R21, U23, S22 or K25, ours beside the published numbers."""

from __future__ import annotations

import time

from geodp.cli.common import CommandError, HelpFormatter, integer_at_least, missing_extra, prepare_output_dir

__all__ = ["add_parser"]


def _run_command(args) -> None:
    from geodp.experiments.reproduce import format_list, run_reproduction

    if args.list:
        print(format_list())
        return
    if args.name is None:
        raise CommandError("name a reproduction (see geodp reproduce --list) or pass --list")
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        raise CommandError("geodp reproduce writes plots with matplotlib: " + missing_extra("experiments")) from None
    output_dir = prepare_output_dir(args.output_dir)
    start = time.perf_counter()
    run_reproduction(args.name, quick=args.quick, output_dir=output_dir, seed=args.seed, force=args.force)
    print(f"\ndone in {time.perf_counter() - start:.1f} s; results in {output_dir}")


def add_parser(sub) -> None:
    """Add the ``reproduce`` subcommand to the subparsers ``sub`` of the ``geodp`` parser.

    Examples
    --------
    >>> import argparse
    >>> parser = argparse.ArgumentParser(prog="geodp")
    >>> add_parser(parser.add_subparsers(dest="command"))
    >>> args = parser.parse_args(["reproduce", "r21-fig1", "--quick"])
    >>> args.name, args.quick, args.seed, args.output_dir
    ('r21-fig1', True, 0, 'geodp-reproduce')
    >>> parser.parse_args(["reproduce", "--list"]).list
    True
    """
    cmd = sub.add_parser(
        "reproduce",
        formatter_class=HelpFormatter,
        help="redo a figure or table of the papers (R21, U23, S22, K25), ours beside the published numbers",
        description="Redo one figure or table of the four papers geodp implements: writes DIR/NAME.png\n"
        "(the panels as in the paper) and DIR/NAME.csv, and prints a table\n"
        "setting | ours | published | note. Results are cached by settings (name, repetitions,\n"
        "seed, a digest of the code) in DIR/NAME.json. The papers' unsound choices are drawn beside\n"
        "the sound defaults, labelled 'as published'. See docs/reproduction.md.",
        epilog="examples:\n"
        "  geodp reproduce --list                # every figure and table with its status\n"
        "  geodp reproduce r21-fig1 --quick      # a few seconds\n"
        "  geodp reproduce all --quick           # every item that is not pending, < 10 min",
    )
    cmd.add_argument(
        "name", nargs="?", default=None, metavar="NAME", help="an item of --list (e.g. r21-fig1, s22-sims) or 'all'"
    )
    cmd.add_argument("--list", action="store_true", help="list every figure and table with its status and exit")
    cmd.add_argument(
        "--quick", action="store_true", help="fewer repetitions (the first number of --list's quick/full column)"
    )
    cmd.add_argument(
        "--output-dir",
        default="geodp-reproduce",
        metavar="DIR",
        help="folder for the PNG, CSV and run records, created if missing (default: %(default)s)",
    )
    cmd.add_argument(
        "--seed",
        type=integer_at_least(0),
        default=0,
        metavar="SEED",
        help="seed of the runs, >= 0 (default: %(default)s)",
    )
    cmd.add_argument("--force", action="store_true", help="run again even when a cached result has the same settings")
    cmd.set_defaults(handler=_run_command)
