"""``geodp audit``: check geodp's guarantees yourself (docs/audit.md).

``geodp audit epsilon`` certifies an empirical lower bound on the ε of a private Fréchet-mean
release (:func:`geodp.audit.audit_epsilon`); ``geodp audit sensitivity`` searches for neighbouring
datasets that stretch the sensitivity bound (:func:`geodp.audit.audit_sensitivity`). Both print a
readable report, or exactly one JSON object with ``--json``.

Exit codes (both audits): 0 consistent with the claim, 1 violated, 3 inconclusive (the
sensitivity search), 2 bad input.
"""

from __future__ import annotations

import argparse
import json
import sys

from geodp.audit.defaults import MAX_KNG_N, MAX_N
from geodp.audit.epsilon import DEFAULT_SAMPLES, DRAW_BUDGET, MECHANISMS, MIN_SAMPLES
from geodp.audit.sensitivity import STATISTICS
from geodp.cli.common import CommandError, HelpFormatter, check_new_file, integer_at_least, positive_float, probability
from geodp.cli.records import read_point
from geodp.cli.specs import NAMED_POINTS, SPACE_GRAMMAR, parse_space
from geodp.errors import missing_extra

__all__ = ["add_parser"]

_DEFAULT_N, _DEFAULT_RADIUS = 5, 0.2
EXIT_CODES = (
    "exit codes: 0 consistent with the claim, 1 violated, 3 inconclusive (sensitivity search),\n"
    "2 bad input (one line on stderr)"
)


def _confidence(text: str) -> float:
    """An argparse type: a number in the open interval (0, 1), with the same message for every bad value.

    Examples
    --------
    >>> _confidence("0.95")
    0.95
    >>> _confidence("1")
    Traceback (most recent call last):
    ...
    argparse.ArgumentTypeError: must be a number in (0, 1), got '1'
    """
    try:
        value = float(text)
    except ValueError:
        value = float("nan")
    if not 0.0 < value < 1.0:  # also refuses NaN
        raise argparse.ArgumentTypeError(f"must be a number in (0, 1), got {text!r}")
    return value


def _center(args, space):
    return None if args.center is None else read_point(args.center, space)


def _print_json(record: dict) -> None:
    print(json.dumps(record, allow_nan=False, default=_plain))


def _plain(value):
    """numpy scalars and arrays in a JSON record."""
    return value.tolist() if hasattr(value, "tolist") else str(value)


def _run_epsilon(args) -> int:
    """Run the ε audit; exit code 1 when the certified bound exceeds the claim, else 0."""
    from geodp.audit import audit_epsilon, plot_loss

    space = parse_space(args.space)
    center = _center(args, space)
    plot = None if args.plot is None else check_new_file(args.plot, "--plot", suffix=".png", overwrite=args.overwrite)
    if plot is not None:
        try:
            import matplotlib  # noqa: F401
        except ImportError:
            raise CommandError(f"--plot needs matplotlib: {missing_extra('experiments')}") from None
    audit = audit_epsilon(
        space,
        args.mechanism,
        epsilon=args.epsilon,
        delta=args.delta,
        n=args.n,
        radius=args.radius,
        center=center,
        n_samples=args.samples,
        confidence=args.confidence,
        mutant=args.mutant,
        rng=args.seed,
        progress=sys.stderr.isatty(),
    )
    if plot is not None:
        plot_loss(audit, plot)
    if args.json:
        record = audit.to_dict()
        if plot is not None:
            record["plot"] = str(plot)
        _print_json(record)
    else:
        print(audit)
        if plot is not None:
            print(f"plot           : {plot}")
    return 1 if audit.violated else 0


def _run_timing(args) -> int:
    """Run the timing audit; exit code 1 when the certified bound exceeds the claimed ε, else 0."""
    from geodp.audit.timing import audit_timing

    audit = audit_timing(
        args.case,
        runs=args.runs,
        epsilon=args.epsilon,
        timing_safe=args.deadline if args.deadline is not None else args.timing_safe,
        confidence=args.confidence,
        progress=sys.stderr.isatty(),
    )
    if args.json:
        _print_json(audit.to_dict())
    else:
        print(audit)
    return 1 if audit.violated else 0


def _run_sensitivity(args) -> int:
    """Run the sensitivity search; exit code 1 when it finds the bound violated, 3 when it is
    inconclusive (fewer than 90% of its evaluations valid, or a tolerance above 1% of the bound),
    else 0."""
    from geodp.audit import audit_sensitivity

    space = parse_space(args.space)
    result = audit_sensitivity(
        space, radius=args.radius, n=args.n, statistic=args.statistic, center=_center(args, space), rng=args.seed
    )
    if args.json:
        _print_json(result.to_dict())
    else:
        print(result)
    if result.violated:
        return 1
    return 0 if result.conclusive else 3


def _common(parser, *, radius_default) -> None:
    parser.add_argument("--space", required=True, metavar="SPEC", help=f"the space: {SPACE_GRAMMAR}")
    parser.add_argument(
        "--radius",
        type=positive_float,
        default=radius_default,
        required=radius_default is None,
        metavar="R",
        help="public radius of the data ball" + ("" if radius_default is None else " (default: %(default)s)"),
    )
    parser.add_argument(
        "--center",
        metavar="POINT",
        help=f"public centre of the data ball: a named point ({', '.join(NAMED_POINTS)}) or a file "
        "holding one point (default: north on spheres, identity on SPD, origin on Euclidean and "
        "hyperbolic spaces, the regular polygon on Kendall shape spaces)",
    )
    parser.add_argument(
        "--seed",
        type=integer_at_least(0),
        default=None,
        metavar="S",
        help="seed >= 0, to reproduce a run (default: fresh OS entropy)",
    )
    parser.add_argument("--json", action="store_true", help="print exactly one JSON object and nothing else")


def add_parser(sub) -> None:
    """Add the ``audit`` subcommand (``epsilon``, ``sensitivity``, ``timing``) to the subparsers ``sub``.

    Examples
    --------
    >>> import argparse
    >>> parser = argparse.ArgumentParser(prog="geodp")
    >>> add_parser(parser.add_subparsers(dest="command"))
    >>> args = parser.parse_args(["audit", "epsilon", "--space", "sphere:2", "--epsilon", "1"])
    >>> args.mechanism, args.n, args.radius, args.samples, args.mutant
    ('laplace', 5, 0.2, None, None)
    """
    audit = sub.add_parser(
        "audit",
        formatter_class=HelpFormatter,
        help="check the guarantees yourself: a certified lower bound on ε, a sensitivity search",
        description="Audit geodp's guarantees. Guide: docs/audit.md.",
    )
    kinds = audit.add_subparsers(dest="audit", required=True, title="audits")
    epsilon = kinds.add_parser(
        "epsilon",
        formatter_class=HelpFormatter,
        help="certified empirical lower bound on the ε of a private Fréchet-mean release",
        description="Draw from the output laws of a private Fréchet-mean release on a worst-case pair of\n"
        "neighbouring inputs and certify a lower bound on ε with the given confidence (test\n"
        "events picked on a first set of draws, certified on fresh ones). A bound above the\n"
        "claimed ε shows a violation; one below it is evidence, not proof.",
        epilog="examples:\n"
        "  geodp audit epsilon --space sphere:2 --mechanism laplace --epsilon 1\n"
        "  geodp audit epsilon --space sphere:2 --mechanism kng --epsilon 1 --mutant halve-scale\n"
        "  geodp audit epsilon --space spd:3:log-euclidean --mechanism tangent-gaussian --epsilon 1 \\\n"
        "      --delta 1e-5 --json --plot loss.png\n\n" + EXIT_CODES,
    )
    _common(epsilon, radius_default=_DEFAULT_RADIUS)
    epsilon.add_argument("--mechanism", choices=MECHANISMS, default="laplace", help="(default: %(default)s)")
    epsilon.add_argument("--epsilon", required=True, type=positive_float, metavar="E", help="claimed ε > 0")
    epsilon.add_argument(
        "--delta",
        type=probability,
        default=0.0,
        metavar="D",
        help="claimed δ: > 0 for the Gaussian mechanisms, 0 for laplace and kng (default: %(default)s)",
    )
    epsilon.add_argument(
        "--n",
        type=integer_at_least(1),
        default=_DEFAULT_N,
        metavar="N",
        help=f"public number of records, at most {MAX_N:,} ({MAX_KNG_N:,} for kng, whose pair "
        "holds the records) (default: %(default)s)",
    )
    epsilon.add_argument(
        "--samples",
        type=integer_at_least(MIN_SAMPLES),
        default=None,
        metavar="M",
        help=f"draws per law in each of the two rounds, >= {MIN_SAMPLES} (default: {DEFAULT_SAMPLES:,}, "
        f"or fewer when a short timed pilot says the draws would take more than "
        f"{DRAW_BUDGET:g} s; the report gives the count used)",
    )
    epsilon.add_argument(
        "--confidence",
        type=_confidence,
        default=0.95,
        metavar="C",
        help="confidence of the certified bound, in (0, 1) (default: %(default)s)",
    )
    epsilon.add_argument(
        "--mutant",
        choices=("halve-scale", "unit-lipschitz"),
        help="audit a deliberately broken release, to see the audit catch it: noise scale halved, or (wrapped "
        "mechanisms on positively curved spaces) calibrated as if Log at the centre were 1-Lipschitz",
    )
    epsilon.add_argument("--plot", metavar="FILE.png", help="draw the privacy-loss distribution to this PNG")
    epsilon.add_argument("--overwrite", action="store_true", help="replace an existing --plot file")
    epsilon.set_defaults(handler=_run_epsilon)
    sensitivity = kinds.add_parser(
        "sensitivity",
        formatter_class=HelpFormatter,
        help="adversarial search for neighbouring datasets that stretch the sensitivity bound",
        description="Search, inside the public ball, for neighbouring datasets (one record replaced) whose\n"
        "statistics lie farther apart than the sensitivity bound geodp calibrates its noise with,\n"
        "and report the largest observed distance over the bound (never above 1 if the bound holds).",
        epilog="examples:\n"
        "  geodp audit sensitivity --space hyperbolic:2 --radius 1 --n 10\n"
        "  geodp audit sensitivity --space sphere:2 --radius 0.5 --n 5 --statistic kng-gradient --json\n\n"
        + EXIT_CODES,
    )
    _common(sensitivity, radius_default=None)
    sensitivity.add_argument(
        "--n", type=integer_at_least(2), required=True, metavar="N", help="public number of records"
    )
    sensitivity.add_argument("--statistic", choices=STATISTICS, default="frechet-mean", help="(default: %(default)s)")
    sensitivity.set_defaults(handler=_run_sensitivity)
    timing = kinds.add_parser(
        "timing",
        formatter_class=HelpFormatter,
        help="certified lower bound on the ε that the wall time of fit reveals",
        description="Fit the same estimator, interleaved, on a neighbouring pair whose fits take different\n"
        "times, and certify a lower bound on ε from the wall times alone (threshold picked on half\n"
        "the runs, certified on the other half). Compare with and without --timing-safe.",
        epilog="examples:\n"
        "  geodp audit timing --case h2-laplace --runs 200\n"
        "  geodp audit timing --case h2-laplace --runs 200 --timing-safe --json\n\n" + EXIT_CODES,
    )
    timing.add_argument(
        "--case",
        choices=("h2-laplace", "s2-kng"),
        default="h2-laplace",
        help="h2-laplace: far vs near record, H², r = 10, n = 50; s2-kng: two boundary records "
        "opposite vs together, S², r = 0.7, n = 50 (default: %(default)s)",
    )
    timing.add_argument(
        "--runs", type=integer_at_least(20), default=200, metavar="R", help="fits per dataset (default: %(default)s)"
    )
    timing.add_argument("--epsilon", type=positive_float, default=1.0, metavar="E", help="claimed ε (default: 1)")
    timing.add_argument("--timing-safe", action="store_true", help="fit in timing-safe mode")
    timing.add_argument(
        "--deadline",
        type=positive_float,
        default=None,
        metavar="SECONDS",
        help="fit in timing-safe mode with this deadline instead of the calibrated one (shorter than the fits: "
        "audits the fixed work alone)",
    )
    timing.add_argument("--confidence", type=_confidence, default=0.95, metavar="C", help="(default: %(default)s)")
    timing.add_argument("--json", action="store_true", help="print the result as one JSON object")
    timing.set_defaults(handler=_run_timing)
