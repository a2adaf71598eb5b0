"""Private minimum-distance-to-mean classification of real covariance matrices: accuracy against ε.

Two real data sets shipped with geomstats (:mod:`geodp.datasets.geomstats_sets`):

* **EMG** — 8×8 covariances of 1-s windows of surface EMG while a hand holds one of four signs
  (rock, paper, scissors, ok), 2,304 windows. Each window is scaled to unit determinant (a
  per-record map, so replace-one adjacency is kept; it removes the overall gain of the armband,
  which differs between sessions). Public domain: the ball of radius 3 around the identity (a
  public choice; windows farther out are clipped). Split by time: in each of the four recordings,
  the first four of the six cycles of signs train and the last two test. A record is one window,
  not a person (each of the two people gives over a thousand windows).
* **Connectomes** — 28×28 fMRI functional-connectivity matrices of 86 subjects, schizophrenia
  vs control. Each is shrunk halfway to the identity (``(C + I)/2``), which bounds its eigenvalues
  in ``[0.5, 14.5]`` and so gives a *provable* public radius around the identity
  (:func:`geodp.datasets.load_connectomes`). A fixed stratified split (seed 0) keeps a third of the
  subjects for testing. A record is one subject.

For each metric (affine-invariant, log-Euclidean), mechanism and ε, :class:`geodp.models.PrivateMDM`
releases the class means of the training records ``repeats`` times; the table reports the test
accuracy (mean and standard error over releases) beside pyRiemann's non-private MDM on the same
split (the oracle) and chance. KNG on the affine-invariant metric is left out by default: it runs
by MCMC there, about three minutes per class mean on SPD(8).
"""

from __future__ import annotations

import csv
import sys
import time
import warnings
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from geodp.errors import ApproximateSamplerWarning, InvalidParameterError
from geodp.experiments.plotting import agg_pyplot
from geodp.manifolds import SPD
from geodp.models import PrivateMDM
from geodp.validation import as_generator, check_epsilon

__all__ = ["DATASETS", "QUICK_EPSILONS", "QUICK_REPEATS", "STUDY_EPSILONS", "load_study_data", "run_mdm_study"]

DATASETS = ("emg", "connectomes")
METRICS = ("affine", "log-euclidean")
MECHANISMS = ("laplace", "kng", "tangent-gaussian", "wrapped-gaussian")
GAUSSIANS = ("tangent-gaussian", "wrapped-gaussian")
DELTA = 1e-5  # for the Gaussian mechanisms
STUDY_EPSILONS = {"emg": (0.1, 0.3, 1.0, 3.0, 10.0, 30.0, 100.0), "connectomes": (1.0, 10.0, 100.0, 1e3, 1e4)}
# ``geodp mdm --quick`` (and the tables of docs/mdm.md, :mod:`geodp.experiments.mdm_docs`)
QUICK_EPSILONS = {"emg": (0.3, 3.0, 30.0), "connectomes": (10.0, 1e3, 1e4)}
QUICK_REPEATS = 1
_PYRIEMANN_METRIC = {"affine": "riemann", "log-euclidean": "logeuclid"}
_EMG_RADIUS = 3.0
_EMG_TEST_CYCLES = (4, 5)  # the last two of the six cycles of each recording


@dataclass(frozen=True)
class StudyData:
    """One data set of the study, split, with its public domain.

    Attributes
    ----------
    name : str
    X_train, X_test : numpy.ndarray, shape (n, k, k)
    y_train, y_test : numpy.ndarray
    radius : float
        Public radius of the data ball around the identity.
    description : str
        How the data were prepared and split (public choices only).
    """

    name: str
    X_train: np.ndarray
    y_train: np.ndarray
    X_test: np.ndarray
    y_test: np.ndarray
    radius: float
    description: str

    @property
    def k(self) -> int:
        return self.X_train.shape[-1]


def _emg_cycles(experiments: np.ndarray, labels: np.ndarray, runs: np.ndarray) -> np.ndarray:
    """The cycle (0–5) of each window's run: the rank of its run among the runs of the same
    recording and sign, in time order."""
    cycle = np.empty(len(runs), dtype=int)
    for key in set(zip(experiments.tolist(), labels.tolist())):
        mask = (experiments == key[0]) & (labels == key[1])
        order = np.unique(runs[mask])
        cycle[mask] = np.searchsorted(order, runs[mask])
    return cycle


def load_study_data(name: str) -> StudyData:
    """The prepared, split data of one study data set (needs geomstats).

    Parameters
    ----------
    name : {"emg", "connectomes"}

    Returns
    -------
    StudyData

    Examples
    --------
    >>> data = load_study_data("connectomes")
    >>> data.X_train.shape, data.X_test.shape, round(data.radius, 2)
    ((57, 28, 28), (29, 28, 28), 14.15)
    """
    from geodp.datasets import load_connectomes, load_emg_covariances

    if name == "emg":
        emg = load_emg_covariances()
        X = emg.covariances / np.linalg.det(emg.covariances)[:, None, None] ** (1.0 / emg.covariances.shape[-1])
        test = np.isin(_emg_cycles(emg.experiments, emg.labels, emg.runs), _EMG_TEST_CYCLES)
        return StudyData(
            "emg",
            X[~test],
            emg.labels[~test],
            X[test],
            emg.labels[test],
            _EMG_RADIUS,
            f"EMG: {len(X)} one-second windows (8 channels, Ledoit-Wolf covariances), 4 signs; each "
            f"scaled to unit determinant; public ball of radius {_EMG_RADIUS} around I (a public choice: "
            "farther windows are clipped); train = cycles 1-4 of each recording, test = cycles 5-6",
        )
    if name == "connectomes":
        from sklearn.model_selection import train_test_split

        conn = load_connectomes(shrinkage=0.5)
        train, test = train_test_split(
            np.arange(len(conn.labels)), test_size=1 / 3, stratify=conn.labels, random_state=0
        )
        return StudyData(
            "connectomes",
            conn.matrices[train],
            conn.labels[train],
            conn.matrices[test],
            conn.labels[test],
            conn.radius,
            f"connectomes: {len(conn.labels)} subjects (28x28 correlations shrunk halfway to I), schizophrenia "
            f"vs control; provable public ball of radius {conn.radius:.4g} around I; fixed stratified split "
            "(seed 0), a third for testing",
        )
    raise InvalidParameterError(f"dataset must be one of {DATASETS}, got {name!r}.")


def _combinations(metrics, mechanisms, with_affine_kng: bool):
    for metric in metrics:
        for mechanism in mechanisms:
            if mechanism == "tangent-gaussian" and metric != "log-euclidean":
                continue  # the tangent Gaussian needs a flat space
            if mechanism == "wrapped-gaussian" and metric != "affine":
                continue  # on the log-Euclidean metric at I it is the tangent Gaussian
            if mechanism == "kng" and metric == "affine" and not with_affine_kng:
                continue
            yield metric, mechanism


def _oracle_accuracy(data: StudyData, metric: str) -> float:
    from pyriemann.classification import MDM

    return float(MDM(metric=_PYRIEMANN_METRIC[metric]).fit(data.X_train, data.y_train).score(data.X_test, data.y_test))


def run_mdm_study(
    datasets=DATASETS,
    *,
    epsilons=None,
    repeats: int = 3,
    metrics=METRICS,
    mechanisms=MECHANISMS,
    with_affine_kng: bool = False,
    ball_share=None,
    seed=0,
    output_dir=None,
    out=None,
    progress: bool = True,
) -> list[dict]:
    """Run the study, print its table, and write ``mdm_study.csv`` and ``mdm_study.png``.

    Parameters
    ----------
    datasets : sequence of {"emg", "connectomes"}
    epsilons : sequence of float or dict, optional
        The ε grid of every data set, or a dict of grids by data set; default
        :data:`STUDY_EPSILONS`.
    repeats : int
        Releases of the class means per (data set, metric, mechanism, ε), ≥ 1.
    metrics : sequence of {"affine", "log-euclidean"}
    mechanisms : sequence of {"laplace", "kng", "tangent-gaussian", "wrapped-gaussian"}
        The Gaussian mechanisms run at δ = 1e-5: the tangent Gaussian on the log-Euclidean
        metric, the wrapped Gaussian (at the public centre I) on the affine-invariant one.
    with_affine_kng : bool
        Also run KNG on the affine-invariant metric (MCMC, minutes per class mean).
    ball_share : float, optional
        Spend this share of each ε on :func:`geodp.domain.private_ball` (on the training
        records, in the public ball) and release the class means in the ball it returns with
        the rest (sequential composition: the total stays ε). Default: the public ball.
    seed : int or numpy.random.Generator
    output_dir : str or Path, optional
        Where the CSV and the plot (needs matplotlib) go; nothing is written when None.
    out : file-like, optional
        Default: the current ``sys.stdout``.
    progress : bool
        A progress bar on a terminal (needs tqdm).

    Returns
    -------
    list of dict
        One row per (data set, metric, mechanism, ε): mean and standard error of the test
        accuracy, pyRiemann's non-private accuracy, chance, whether every release was exact,
        seconds per fit.

    Examples
    --------
    >>> import io
    >>> rows = run_mdm_study(["connectomes"], epsilons=[1e4], repeats=1, metrics=["log-euclidean"],
    ...                      mechanisms=["laplace"], out=io.StringIO(), progress=False)
    >>> [(r["dataset"], r["metric"], r["mechanism"], r["epsilon"]) for r in rows]
    [('connectomes', 'log-euclidean', 'laplace', 10000.0)]
    >>> 0.0 <= rows[0]["accuracy"] <= 1.0
    True
    """
    out = sys.stdout if out is None else out
    if isinstance(repeats, bool) or not isinstance(repeats, (int, np.integer)) or repeats < 1:
        raise InvalidParameterError(f"repeats must be an integer >= 1, got {repeats!r}.")
    if ball_share is not None and not (isinstance(ball_share, (int, float)) and 0.0 < ball_share < 1.0):
        raise InvalidParameterError(f"ball_share must be a number in (0, 1) or None, got {ball_share!r}.")
    for values, allowed, what in (
        (datasets, DATASETS, "dataset"),
        (metrics, METRICS, "metric"),
        (mechanisms, MECHANISMS, "mechanism"),
    ):
        bad = [v for v in values if v not in allowed]
        if bad or not values:
            raise InvalidParameterError(f"each {what} must be one of {allowed}, got {list(values)!r}.")
    if epsilons is None or isinstance(epsilons, dict):
        epsilons = STUDY_EPSILONS | (epsilons or {})
    else:
        epsilons = dict.fromkeys(datasets, epsilons)
    grid = {name: tuple(check_epsilon(e) for e in epsilons[name]) for name in datasets}
    rng = as_generator(seed)
    combos = list(_combinations(metrics, mechanisms, with_affine_kng))
    total = sum(len(grid[name]) for name in datasets) * len(combos) * repeats
    bar = _progress_bar(total, progress)
    rows = []
    try:
        for name in datasets:
            data = load_study_data(name)
            chance = float(np.max(np.unique(data.y_test, return_counts=True)[1]) / len(data.y_test))
            print(
                f"\n{data.description}\n  train n = {len(data.y_train)}, test n = {len(data.y_test)}; "
                f"chance (majority class) = {chance:.3f}",
                file=out,
            )
            header = (
                f"{'metric':>13} {'mechanism':>16} {'epsilon':>8} {'accuracy':>8} {'s.e.':>6} "
                f"{'non-private':>11} {'exact':>5} {'s/fit':>6}"
            )
            print(header + "\n" + "-" * len(header), file=out)
            for metric, mechanism in combos:
                oracle = _oracle_accuracy(data, metric)
                space = SPD(data.k, metric=metric)
                for eps in grid[name]:
                    scores, exact, start = [], True, time.perf_counter()
                    for _ in range(repeats):
                        with warnings.catch_warnings(record=True) as caught:
                            warnings.simplefilter("always")
                            model = PrivateMDM(
                                space,
                                epsilon=eps if ball_share is None else (1.0 - ball_share) * eps,
                                delta=DELTA if mechanism in GAUSSIANS else 0.0,
                                mechanism=mechanism,
                                random_state=rng,
                                **_ball(space, data, eps, ball_share, rng),
                            )
                            model.fit(data.X_train, data.y_train)
                        exact &= not any(issubclass(w.category, ApproximateSamplerWarning) for w in caught)
                        scores.append(model.score(data.X_test, data.y_test))
                        bar.update(1)
                    seconds = (time.perf_counter() - start) / repeats
                    se = float(np.std(scores, ddof=1) / np.sqrt(repeats)) if repeats > 1 else float("nan")
                    row = dict(
                        dataset=name,
                        metric=metric,
                        mechanism=mechanism,
                        epsilon=eps,
                        repeats=repeats,
                        accuracy=float(np.mean(scores)),
                        accuracy_se=se,
                        non_private=oracle,
                        chance=chance,
                        exact=exact,
                        seconds_per_fit=seconds,
                    )
                    rows.append(row)
                    se_text = "—" if repeats == 1 else f"{se:.3f}"
                    print(
                        f"{metric:>13} {mechanism:>16} {eps:>8g} {row['accuracy']:>8.3f} {se_text:>6} {oracle:>11.3f} "
                        f"{'yes' if exact else 'MH':>5} {seconds:>6.2f}",
                        file=out,
                    )
    finally:
        bar.close()
    if output_dir is not None:
        _write_csv(rows, Path(output_dir) / "mdm_study.csv", out)
        _plot(rows, Path(output_dir) / "mdm_study.png", out)
    return rows


def _ball(space, data: StudyData, epsilon: float, share, rng) -> dict:
    """The data ball of one fit: the public one, or a private ball bought with ``share·epsilon``."""
    if share is None:
        return dict(center=np.eye(data.k), radius=data.radius)
    from geodp.domain import private_ball

    found = private_ball(space, data.X_train, epsilon=share * epsilon, center=np.eye(data.k), radius=data.radius,
                         random_state=rng)  # fmt: skip
    return dict(ball=found)


class _NoBar:
    def update(self, n):
        pass

    def close(self):
        pass


def _progress_bar(total: int, progress: bool):
    if not progress:
        return _NoBar()
    try:
        from tqdm.auto import tqdm
    except ImportError:  # a convenience, not a dependency
        return _NoBar()
    return tqdm(total=total, desc="PrivateMDM fits", unit="fit", disable=None)  # shown on a terminal only


def _write_csv(rows: list[dict], path: Path, out) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w", newline="", encoding="utf-8") as f:
        writer = csv.DictWriter(f, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    print(f"\ntable written to {path}", file=out)


_STYLE = {
    ("affine", "laplace"): ("tab:blue", "-", "o"),
    ("affine", "kng"): ("tab:purple", "-", "s"),
    ("log-euclidean", "laplace"): ("tab:green", "--", "^"),
    ("log-euclidean", "kng"): ("tab:red", "--", "v"),
    ("log-euclidean", "tangent-gaussian"): ("tab:orange", "--", "D"),
    ("affine", "wrapped-gaussian"): ("tab:brown", "-", "P"),
}


def _plot(rows: list[dict], path: Path, out) -> None:
    try:
        plt = agg_pyplot()
    except ImportError:
        print("\n(plot skipped: matplotlib is not installed; it is in the experiments extra)", file=out)
        return
    names = list(dict.fromkeys(r["dataset"] for r in rows))
    fig, axes = plt.subplots(1, len(names), figsize=(6.0 * len(names), 4.4), squeeze=False)
    for ax, name in zip(axes[0], names):
        sub = [r for r in rows if r["dataset"] == name]
        marked = False
        for metric, mechanism in dict.fromkeys((r["metric"], r["mechanism"]) for r in sub):
            cell = [r for r in sub if (r["metric"], r["mechanism"]) == (metric, mechanism)]
            color, line, marker = _STYLE[(metric, mechanism)]
            eps = np.array([r["epsilon"] for r in cell])
            acc = np.array([r["accuracy"] for r in cell])
            se = np.nan_to_num(np.array([r["accuracy_se"] for r in cell]))
            mcmc = ~np.array([r["exact"] for r in cell], dtype=bool)
            ax.errorbar(
                eps,
                acc,
                yerr=se,
                color=color,
                linestyle=line,
                marker=marker,
                ms=4,
                capsize=2,
                label=f"private, {metric}, {mechanism}",
            )
            if mcmc.any():  # hollow rings: sampled by MCMC, DP only approximately
                ax.plot(
                    eps[mcmc],
                    acc[mcmc],
                    linestyle="none",
                    marker="o",
                    ms=10,
                    mfc="none",
                    mec="black",
                    label="sampled by MCMC (approximate)" if not marked else None,
                )
                marked = True
        for metric, line in (("affine", "-"), ("log-euclidean", "--")):
            oracle = [r["non_private"] for r in sub if r["metric"] == metric]
            if oracle:
                ax.axhline(
                    oracle[0],
                    color="black",
                    linestyle=line,
                    linewidth=1,
                    label=f"non-private MDM (pyRiemann), {metric}",
                )
        ax.axhline(sub[0]["chance"], color="grey", linestyle=":", label="chance (majority class)")
        ax.set_xscale("log")
        ax.set_ylim(0, 1)
        ax.set_xlabel("epsilon (per fit; classes by parallel composition)")
        ax.set_ylabel("test accuracy")
        ax.set_title(
            {"emg": "EMG hand signs, SPD(8), 4 classes", "connectomes": "fMRI connectomes, SPD(28), 2 classes"}[name]
        )
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=7, loc="lower right")
    fig.suptitle("PrivateMDM: test accuracy of private class means against epsilon (mean ± s.e. over releases)")
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=120)
    plt.close(fig)
    print(f"plot written to {path}", file=out)
