"""``geodp mdm``: private minimum-distance-to-mean classification of real covariance matrices."""

from __future__ import annotations

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

__all__ = ["add_parser"]


def _run_command(args) -> None:
    require_geomstats("the mdm command")
    output_dir = None if args.no_plot else prepare_output_dir(args.output_dir)
    from geodp.experiments.mdm_study import DATASETS, QUICK_EPSILONS, QUICK_REPEATS, run_mdm_study

    datasets = DATASETS if args.dataset == "all" else (args.dataset,)
    start = time.perf_counter()
    epsilons = QUICK_EPSILONS if args.quick and args.epsilons is None else args.epsilons
    repeats = args.repeats or (QUICK_REPEATS if args.quick else 3)
    run_mdm_study(
        datasets,
        epsilons=epsilons,
        repeats=repeats,
        metrics=args.metrics,
        with_affine_kng=args.affine_kng,
        ball_share=args.ball_share,
        seed=args.seed,
        output_dir=output_dir,
    )
    print(f"\ndone in {time.perf_counter() - start:.1f} s")


def add_parser(sub) -> None:
    """Add the ``mdm`` subcommand to the subparsers ``sub`` of the ``geodp`` parser.

    Examples
    --------
    >>> import argparse
    >>> parser = argparse.ArgumentParser(prog="geodp")
    >>> add_parser(parser.add_subparsers(dest="command"))
    >>> args = parser.parse_args(["mdm", "--dataset", "emg", "--quick"])
    >>> args.dataset, args.quick, args.metrics
    ('emg', True, ['affine', 'log-euclidean'])
    """
    mdm = sub.add_parser(
        "mdm",
        formatter_class=HelpFormatter,
        help="private MDM classification of real EMG and fMRI covariance matrices, accuracy vs ε "
        "(needs geomstats; docs/mdm.md gives the measured time of the quick run)",
        description="Classify real covariance matrices by minimum distance to class means released\n"
        "privately (geodp.models.PrivateMDM): EMG hand signs (SPD(8), 2,304 windows) and fMRI\n"
        "connectomes (SPD(28), 86 subjects), affine-invariant and log-Euclidean metrics,\n"
        "Laplace, KNG, tangent and wrapped Gaussian (δ = 1e-5) mechanisms, over an ε grid; with\n"
        "--ball-share, part of each ε buys a private data ball (geodp.domain.private_ball). Prints the\n"
        "test accuracy beside pyRiemann's non-private MDM and writes DIR/mdm_study.csv and\n"
        "DIR/mdm_study.png. Affine-invariant releases at small ε run by MCMC (said in the\n"
        "table); KNG on the affine-invariant metric is left out unless --affine-kng.\n\n"
        + textwrap.fill(
            "Needs geomstats: " + missing_extra("geomstats") + ".", 80, break_long_words=False, break_on_hyphens=False
        ),
    )
    mdm.add_argument(
        "--dataset", choices=("emg", "connectomes", "all"), default="all", help="which data set (default: %(default)s)"
    )
    mdm.add_argument("--quick", action="store_true", help="three ε per data set and one release per cell")
    mdm.add_argument(
        "--repeats",
        type=integer_at_least(1),
        default=None,
        metavar="N",
        help="releases per (data set, metric, mechanism, ε) cell (default: 3, or 1 with --quick)",
    )
    mdm.add_argument(
        "--epsilons",
        type=positive_float,
        nargs="+",
        default=None,
        metavar="EPS",
        help="the ε grid (default: 0.1 ... 100 for EMG, 1 ... 1e4 for connectomes)",
    )
    mdm.add_argument(
        "--metrics",
        nargs="+",
        choices=("affine", "log-euclidean"),
        default=["affine", "log-euclidean"],
        help="metrics of SPD to compare (default: both)",
    )
    mdm.add_argument(
        "--affine-kng",
        action="store_true",
        help="also run KNG on the affine-invariant metric (MCMC: minutes per class mean)",
    )
    mdm.add_argument(
        "--ball-share",
        type=float,
        default=None,
        metavar="SHARE",
        help="spend this share of each ε, in (0, 1), on a private data ball (default: the public ball)",
    )
    mdm.add_argument(
        "--output-dir",
        default="geodp-mdm",
        metavar="DIR",
        help="folder for the table and the plot, created if missing (default: %(default)s)",
    )
    mdm.add_argument(
        "--seed",
        type=integer_at_least(0),
        default=0,
        metavar="SEED",
        help="seed of the releases, >= 0 (default: %(default)s)",
    )
    mdm.add_argument("--no-plot", action="store_true", help="print the table only; write nothing")
    mdm.set_defaults(handler=_run_command)
