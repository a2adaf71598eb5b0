"""``geodp release``: the private Fréchet mean of the records in a file, written with its guarantee.

The command checks everything it can before it touches the budget or releases anything: the
options, the space spec, the public centre, the output files, the input file and each record
(see docs/release.md). It then releases with :class:`geodp.models.PrivateFrechetMean`, charging
the budget ledger first if one is given, and writes the release (``.npy``) and the publishable
guarantee (``.json``, described by the schema :func:`guarantee_schema`) atomically.
"""

from __future__ import annotations

import json
import sys
import warnings
from contextlib import nullcontext
from importlib import resources
from pathlib import Path

import numpy as np

from geodp.cli.common import (
    CommandError,
    HelpFormatter,
    atomic_write,
    check_new_file,
    deadline_seconds,
    integer_at_least,
    positive_float,
    probability,
)
from geodp.cli.ledger import open_ledger
from geodp.cli.records import FORMATS, check_records, read_point, read_records
from geodp.cli.specs import NAMED_POINTS, SPACE_GRAMMAR, parse_space, space_spec
from geodp.models import PrivateFrechetMean
from geodp.models.frechet_mean import MECHANISMS

__all__ = ["GUARANTEE_FORMAT", "add_parser", "guarantee_record", "guarantee_schema"]

GUARANTEE_FORMAT = ("geodp-guarantee", 1)
_ESTIMATOR = "geodp.models.PrivateFrechetMean"


def guarantee_schema() -> dict:
    """The JSON schema (draft 2020-12) of the guarantee ``geodp release`` writes.

    It is shipped with geodp as ``geodp/cli/guarantee.schema.json``; each field has a
    ``description``. Validate a guarantee with any JSON-schema validator, e.g.
    ``jsonschema.validate(json.load(f), guarantee_schema())``.

    Examples
    --------
    >>> schema = guarantee_schema()
    >>> schema["properties"]["format"]["const"], sorted(schema["$defs"]["report"]["properties"])[:3]
    ('geodp-guarantee', ['adjacency', 'assumptions', 'center'])
    """
    text = resources.files("geodp.cli").joinpath("guarantee.schema.json").read_text(encoding="utf-8")
    return json.loads(text)


def guarantee_record(model: PrivateFrechetMean, *, mechanism: str, release_file: str) -> dict:
    """The publishable guarantee of a fitted :class:`~geodp.models.PrivateFrechetMean`, as
    ``geodp release`` writes it: the privacy report (``privacy_report_.to_dict()`` and its text)
    with the geodp version, the space spec, the mechanism and the release's file name. Nothing in
    it is computed from the private data: the curator diagnostics are never included.

    Examples
    --------
    >>> import numpy as np
    >>> from geodp.manifolds import Sphere
    >>> space = Sphere(2)
    >>> model = PrivateFrechetMean(space, epsilon=1.0, center=[0.0, 0.0, 1.0], radius=0.5,
    ...                            random_state=0).fit(np.tile([0.0, 0.0, 1.0], (20, 1)))
    >>> record = guarantee_record(model, mechanism="laplace", release_file="mean.npy")
    >>> record["space"], record["report"]["epsilon"], record["report"]["n_samples"]
    ('sphere:2', 1.0, 20)
    """
    import geodp

    report = model.privacy_report_
    return {
        "format": GUARANTEE_FORMAT[0],
        "format_version": GUARANTEE_FORMAT[1],
        "geodp_version": geodp.__version__,
        "estimator": _ESTIMATOR,
        "space": space_spec(model.space),
        "mechanism": mechanism,
        "release_file": release_file,
        "release_shape": list(model.space.point_shape),
        "report": report.to_dict(),
        "report_text": str(report),
    }


def _show_warning(message, category, filename, lineno, file=None, line=None) -> None:
    text = " ".join(str(message).split())
    print(f"geodp: warning: {text} ({category.__name__})", file=sys.stderr)


def _write_outputs(release: np.ndarray, record: dict, output: Path, guarantee: Path) -> None:
    """The guarantee, then the release, each atomically; a release is never left without its
    guarantee (if writing the release fails, the guarantee just written is removed)."""
    text = json.dumps(record, indent=2, ensure_ascii=False, allow_nan=False) + "\n"
    try:
        atomic_write(guarantee, lambda f: f.write(text.encode("utf-8")))
        try:
            atomic_write(output, lambda f: np.save(f, release, allow_pickle=False))
        except BaseException:
            guarantee.unlink()
            raise
    except OSError as err:
        raise CommandError(
            f"the outputs could not be written ({err.strerror or err}); the budget was charged, the release is lost"
        ) from None


def _curator_notes(facts, path) -> None:
    """Write the curator-only diagnostics (records clipped onto the ball or replaced by the
    centre, the mean's convergence) to ``path``, apart from every publishable output; without a
    path, say (in words that do not depend on the data) how to get them: a ball that clips most
    records (data in other units than the centre, say) is noticed only there."""
    if path is None:
        print(
            "curator   : the diagnostics (records clipped or replaced) are curator-only and not shown: "
            "write them with --diagnostics FILE"
        )
        return
    print(f"curator   : {path} (CURATOR-ONLY diagnostics: do not publish)")
    _write_curator_file(path, facts.to_dict(), "the release and its guarantee were written")


def _write_curator_file(path, facts: dict, outcome: str) -> None:
    """Write curator-only ``facts`` to ``path`` as JSON under the do-not-publish banner;
    ``outcome`` says, if the write fails, what happened otherwise."""
    text = (
        json.dumps(
            {"curator_only": "DO NOT PUBLISH: computed from the private data without noise", **facts},
            indent=2,
            default=str,
        )
        + "\n"
    )
    try:
        atomic_write(path, lambda f: f.write(text.encode("utf-8")))
    except OSError as err:
        raise CommandError(
            f"--diagnostics {str(path)!r} could not be written ({err.strerror or err}); {outcome}"
        ) from None


def _run_command(args) -> None:
    if args.secure and args.seed is not None:
        raise CommandError("--secure and --seed exclude each other: a secure generator cannot be seeded")
    space = parse_space(args.space)
    spec = space_spec(space)
    center = read_point(args.center, space)
    output = check_new_file(args.output, "--output", suffix=".npy", overwrite=args.overwrite)
    guarantee = check_new_file(args.guarantee, "--guarantee", suffix=".json", overwrite=args.overwrite)
    diagnostics = (
        None
        if args.diagnostics is None
        else check_new_file(args.diagnostics, "--diagnostics", suffix=".json", overwrite=args.overwrite)
    )
    if diagnostics is not None and diagnostics.resolve() in {
        Path(p).resolve() for p in (output, guarantee, args.input, args.budget_file) if p is not None
    }:
        raise CommandError(
            "--diagnostics must differ from INPUT, --output, --guarantee and --budget-file "
            "(it must never be published, nor replace the records or the ledger)"
        )
    for path, option in ((args.input, "INPUT"), (args.budget_file, "--budget-file")):
        if path is not None and Path(path).resolve() in (output.resolve(), guarantee.resolve()):
            raise CommandError(
                f"{option} {str(path)!r} is also an output file; choose other --output/--guarantee names"
            )
    X, lines = read_records(args.input, space, key=args.key, header=args.header)
    if args.on_invalid == "raise":
        check_records(
            X,
            space,
            str(args.input),
            lines,
            hint=". Fix or drop such records, or pass --on-invalid center to replace each by the public centre.",
            curator=None
            if diagnostics is None
            else lambda detail: _write_curator_file(
                diagnostics, {"refused": detail}, "the records were refused: nothing was released or charged"
            ),
        )
    model = PrivateFrechetMean(
        space,
        epsilon=args.epsilon,
        delta=args.delta,
        center=center,
        radius=args.radius,
        mechanism=args.mechanism,
        on_invalid=args.on_invalid,
        random_state="secure" if args.secure else args.seed,
        timing_safe=args.timing_safe,
    )
    entry = {"output": str(args.output), "guarantee": str(args.guarantee), "space": spec, "mechanism": args.mechanism}
    ledger = open_ledger(args.budget_file, entry) if args.budget_file is not None else nullcontext()
    with ledger as accountant:
        model.set_params(accountant=accountant)
        with warnings.catch_warnings():
            # Only public warnings reach here (about the sampler, or a release beyond float64):
            # one line each, as they come.
            warnings.simplefilter("always")
            warnings.showwarning = _show_warning
            model.fit(X)
        record = guarantee_record(model, mechanism=args.mechanism, release_file=output.name)
        _write_outputs(model.mean_, record, output, guarantee)
    print(model.privacy_report_)
    print(f"\nrelease   : {args.output} (shape {model.mean_.shape})\nguarantee : {args.guarantee}")
    if accountant is not None:
        eps, delta = (float(f"{x:.12g}") for x in accountant.total_spent)
        r_eps, r_delta = accountant.remaining
        rule = (
            ""
            if accountant.composition == "sequential"
            else f" (composition {accountant.composition!r}: the spends' epsilon at the ledger's delta)"
        )
        print(
            f"budget    : {args.budget_file}: spent epsilon = {eps!r}, delta = {delta!r}{rule} of "
            f"epsilon = {accountant.epsilon!r}, delta = {accountant.delta!r}; remaining epsilon = {r_eps!r}, "
            f"delta = {r_delta!r}"
        )
    _curator_notes(model.curator_diagnostics_, diagnostics)


def add_parser(sub) -> None:
    """Add the ``release`` subcommand to the subparsers ``sub`` of the ``geodp`` parser.

    Examples
    --------
    >>> import argparse
    >>> parser = argparse.ArgumentParser(prog="geodp")
    >>> add_parser(parser.add_subparsers(dest="command"))
    >>> args = parser.parse_args(["release", "covs.npy", "--space", "spd:8", "--center", "identity",
    ...                           "--radius", "2", "--epsilon", "1", "--output", "mean.npy",
    ...                           "--guarantee", "mean.json"])
    >>> args.mechanism, args.delta, args.seed, args.on_invalid, args.timing_safe
    ('laplace', 0.0, None, 'raise', False)
    >>> parser.parse_args(["release", "covs.npy", "--space", "spd:8", "--center", "identity", "--radius", "2",
    ...                    "--epsilon", "1", "--output", "m.npy", "--guarantee", "m.json",
    ...                    "--timing-safe", "2.5"]).timing_safe
    2.5
    """
    release = sub.add_parser(
        "release",
        formatter_class=HelpFormatter,
        help="release the private Fréchet mean of the records in a file, with its guarantee",
        description="Release the differentially private Fréchet mean of the records in INPUT (replace-one\n"
        "adjacency, n public) and write it (--output, .npy) with its publishable guarantee\n"
        "(--guarantee, .json). Bad files and records are refused before anything is released\n"
        "or charged; a refusal of records neither counts nor locates them (which, why and how\n"
        "many go to the curator-only --diagnostics file only).\n"
        "Guide: docs/release.md.",
        epilog="examples:\n"
        "  geodp release covs.npy --space spd:8 --center identity --radius 2 --epsilon 1 \\\n"
        "      --output mean.npy --guarantee mean.json\n"
        "  geodp release dirs.csv --space sphere:2 --center north --radius 0.5 --epsilon 0.5 \\\n"
        "      --mechanism kng --budget-file budget.json --output m.npy --guarantee m.json",
    )
    release.add_argument(
        "input", metavar="INPUT", help=f"the records, one per row or along the first axis: {', '.join(FORMATS)}"
    )
    release.add_argument("--space", required=True, metavar="SPEC", help=f"the space: {SPACE_GRAMMAR}")
    release.add_argument(
        "--center",
        required=True,
        metavar="POINT",
        help=f"public centre of the data ball: a named point ({', '.join(NAMED_POINTS)}) or a "
        "file holding one point; never computed from the private data",
    )
    release.add_argument(
        "--radius",
        required=True,
        type=positive_float,
        metavar="R",
        help="public radius of the data ball (records outside are clipped onto it)",
    )
    release.add_argument("--epsilon", required=True, type=positive_float, metavar="E", help="privacy budget ε > 0")
    release.add_argument(
        "--delta",
        type=probability,
        default=0.0,
        metavar="D",
        help="δ in [0, 1): needed (> 0) by the Gaussian mechanisms; Laplace and KNG are pure ε-DP "
        "(default: %(default)s)",
    )
    release.add_argument(
        "--mechanism",
        choices=MECHANISMS,
        default="laplace",
        help="noise mechanism; tangent-gaussian needs a flat space (euclidean, "
        "spd:K:log-euclidean); wrapped-laplace and wrapped-gaussian add the noise in the tangent space "
        "at the centre, on every space; riemannian-gaussian takes every space; gradient is private Riemannian "
        "gradient descent on every space (needs --delta > 0) (default: %(default)s)",
    )
    release.add_argument(
        "--seed",
        type=integer_at_least(0),
        default=None,
        metavar="S",
        help="seed >= 0, for tests and reproductions (the fast floating-point path, not "
        "floating-point safe); leave it out for a real release (secure mode, the default): anyone "
        "who knows the seed can remove the noise",
    )
    release.add_argument(
        "--secure",
        action="store_true",
        help="secure mode, the default without --seed (said explicitly): a cryptographically "
        "secure generator, and on flat spaces exact discrete noise on a public grid "
        "(floating-point safe; docs/secure.md); not with --seed",
    )
    release.add_argument(
        "--timing-safe",
        nargs="?",
        const=True,
        default=False,
        type=deadline_seconds,
        metavar="SECONDS",
        help="pad the release's private work to a public deadline: SECONDS if given (e.g. the "
        "report's timing_deadline of an earlier run), else one calibrated on public stand-in records "
        "(SECURITY.md); its wall time then depends on public inputs only, unless it overruns",
    )
    release.add_argument("--output", required=True, metavar="OUT.npy", help="the release, a .npy file")
    release.add_argument(
        "--guarantee", required=True, metavar="OUT.json", help="the publishable guarantee, a .json file"
    )
    release.add_argument(
        "--budget-file",
        metavar="LEDGER.json",
        help='a budget ledger, {"epsilon": E, "delta": D} to start; the release is charged to it '
        "and refused if it would overspend",
    )
    release.add_argument(
        "--key",
        metavar="NAME",
        help="the array of a .npz file or the variable of a .mat file "
        "that holds the records (needed if it holds several)",
    )
    release.add_argument(
        "--header",
        action="store_true",
        help="INPUT (.csv, .txt) has a header: its first line is skipped, whatever it holds. "
        "Without it every line is a record (a header is never guessed)",
    )
    release.add_argument(
        "--on-invalid",
        choices=("raise", "center"),
        default="raise",
        help="a record that is not a point of the space: refuse the file (raise) or replace the "
        "record by the public centre (center) (default: %(default)s)",
    )
    release.add_argument(
        "--diagnostics",
        metavar="CURATOR.json",
        help="also write the curator-only diagnostics (records clipped or replaced, the mean's "
        "convergence; or, when the records are refused, which record is bad, why and how many are) "
        "to this .json file: computed from the private data, never publish it",
    )
    release.add_argument(
        "--overwrite", action="store_true", help="replace existing --output, --guarantee and --diagnostics files"
    )
    release.set_defaults(handler=_run_command)
