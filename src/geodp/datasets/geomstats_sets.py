"""Real data sets shipped inside geomstats, as points of geodp's spaces (the ``geomstats`` extra).

* :func:`load_connectomes` — 86 fMRI functional-connectivity matrices in SPD(28), schizophrenia
  vs control;
* :func:`load_emg_covariances` — 8-channel surface EMG of four hand signs cut into windows, one
  shrunk 8×8 covariance per window in SPD(8);
* :func:`load_cities` — the 50 cities of geomstats' world-cities sample as unit vectors of S²;
* :func:`load_optical_nerves` — 5 landmarks in 3-D on 22 optic nerve heads of 11 monkeys, normal
  vs glaucoma (raw landmarks: 3-D shape spaces are not geodp spaces).

Nothing is downloaded: the files are inside the installed geomstats package (2.8.0, MIT licence).
Sizes, units and preprocessing below were read from geomstats' loaders and checked on its files.
The guide lists them under "Real data sets" (docs/guide.md).

**What a record is.** A replace-one guarantee protects one record. A connectome is one subject
and an optic nerve head one eye, but an EMG window is about one second of one of two people's
signals (each person gives thousands of windows), so a private mean of EMG windows protects a
window, not a person.
"""

from __future__ import annotations

import importlib
import math
import numbers
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from geodp.errors import InvalidDataError, InvalidParameterError, InvalidTypeError, missing_extra
from geodp.manifolds import SPD
from geodp.manifolds.matrix_functions import rounding_level

__all__ = [
    "Cities",
    "Connectomes",
    "EMGCovariances",
    "OpticalNerves",
    "load_cities",
    "load_connectomes",
    "load_emg_covariances",
    "load_optical_nerves",
]

_CONNECTOME_SIZE = 28  # 28 ICA components: 378 = 28·27/2 correlations per subject
_EMG_CHANNELS = 8
_EMG_SHRINKAGE_ESTIMATORS = ("ledoit-wolf", "oas")
_EMG_CHUNK_ROWS = 1 << 18  # rows gathered at once when windows are cut (16 MB as float64)


def geomstats_datasets(caller: str):
    """``geomstats.datasets.utils``, or an ImportError naming ``caller`` and how to install the extra.

    Covers both failures: geomstats missing, and an installed geomstats that does not import
    (geomstats 2.8.0 fails with numpy >= 2.4).
    """
    try:
        return importlib.import_module("geomstats.datasets.utils")
    except ImportError as err:
        raise ImportError(f"{caller} needs the optional dependency geomstats: {missing_extra('geomstats')}") from err
    except Exception as err:
        raise ImportError(
            f"{caller} needs geomstats, which is installed but does not import ({type(err).__name__}: "
            f"{err}); the [geomstats] extra pins geomstats==2.8.0 with numpy<2.4: {missing_extra('geomstats')}"
        ) from err


def _check_integer(value, name: str, minimum: int) -> int:
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise InvalidTypeError(f"{name} must be an integer, got {type(value).__name__} {value!r}.")
    if value < minimum:
        raise InvalidParameterError(f"{name} must be an integer >= {minimum}, got {value!r}.")
    return int(value)


def _check_shrinkage_coefficient(value) -> float:
    """A fixed shrinkage coefficient in [0, 1) (1 would replace every record by the target)."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise InvalidTypeError(f"shrinkage must be a number in [0, 1), got {type(value).__name__} {value!r}.")
    if not 0.0 <= float(value) < 1.0:
        raise InvalidParameterError(
            "shrinkage must lie in [0, 1) (0 keeps the matrices, 1 would replace all of them by the "
            f"target), got {value!r}."
        )
    return float(value)


def _require_spd(matrices: np.ndarray, what: str, fix: str) -> None:
    """Refuse matrices that are not SPD or whose smallest eigenvalue float64 does not determine
    (below ``k·eps·max|λ|``: ``SPD.belongs`` accepts those as rounding of a PD matrix)."""
    w = np.linalg.eigvalsh(matrices)
    good = SPD(matrices.shape[-1]).belongs(matrices) & (w[:, 0] > rounding_level(w)[:, 0])
    bad = int(np.count_nonzero(~good))
    if bad:
        raise InvalidDataError(
            f"{bad} of {len(matrices)} {what} are not positive definite (smallest eigenvalue at the "
            f"rounding level or below); {fix}."
        )


# ---------------------------------------------------------------------------------------------
# Connectomes


@dataclass(frozen=True)
class Connectomes:
    """Functional-connectivity matrices of 86 subjects, schizophrenia vs healthy control.

    Source: the training set of the Kaggle *MLSP 2014 Schizophrenia Classification Challenge*
    (https://www.kaggle.com/c/mlsp-2014-mri; R. F. Silva et al., "The tenth annual MLSP
    competition: schizophrenia classification challenge", IEEE MLSP 2014), collected at the Mind
    Research Network (COBRE), as shipped in ``geomstats.datasets.utils.load_connectomes``. Each
    subject's resting-state fMRI was decomposed into 28 ICA components; the 378 "FNC" features are
    the Pearson correlations between the components' time courses.

    Attributes
    ----------
    matrices : numpy.ndarray, shape (86, 28, 28)
        ``(1 − shrinkage)·C + shrinkage·I`` with ``C`` the correlation matrix (unit diagonal).
    labels : numpy.ndarray of int, shape (86,)
        1 = schizophrenic patient (40 subjects), 0 = healthy control (46), the challenge's coding.
    subject_ids : numpy.ndarray of int, shape (86,)
        The challenge's subject identifiers.
    shrinkage : float
    radius : float or None
        Public, data-independent radius of a ball around the identity holding every such matrix,
        in the affine-invariant and the log-Euclidean distance (both equal ``‖Log M‖_F`` from
        the identity): the eigenvalues of a 28×28 correlation matrix lie in [0, 28], so those of
        the shrunk matrix lie in ``[α, 28 − 27α]`` and ``r = √28 · max(−ln α, ln(28 − 27α))``.
        None when ``shrinkage = 0`` (no lower eigenvalue bound).
    """

    matrices: np.ndarray
    labels: np.ndarray
    subject_ids: np.ndarray
    shrinkage: float
    radius: float | None


def load_connectomes(shrinkage: float = 0.0) -> Connectomes:
    """Load the 86 schizophrenia-challenge connectomes as SPD(28) matrices.

    geomstats' ``load_connectomes()`` returns ``(C + I)/2`` rather than the correlation matrix
    ``C`` (its vector-to-matrix conversion halves the off-diagonal entries). This loader rebuilds
    ``C`` from geomstats' feature vectors (``as_vectors=True``, placed row by row in the upper
    triangle as geomstats does) and returns ``(1 − α) C + α I``; ``shrinkage=0.5`` reproduces
    geomstats' matrices exactly.

    All 86 correlation matrices are positive definite as published: their smallest eigenvalues
    run from 2.3e-3 and their condition numbers from 137 to 6,117 (median 679). A fixed
    ``shrinkage`` α > 0 is a data-independent curator step that bounds the eigenvalues in
    ``[α, 28 − 27α]``, hence a public radius (:class:`Connectomes`); α = 0.5 brings the
    condition numbers to 6–16.

    Needs the optional dependency geomstats (the ``geomstats`` extra: ``pip install -e
    ".[geomstats]"`` in the root of a checkout of geodp); the data ship inside it.

    Parameters
    ----------
    shrinkage : float in [0, 1), default 0.0
        Weight α of the identity.

    Returns
    -------
    Connectomes

    Raises
    ------
    ImportError
        geomstats is missing or does not import.

    Notes
    -----
    One record is one subject. Labels and the class sizes (40 patients, 46 controls) are the
    challenge's.

    Examples
    --------
    >>> import numpy as np
    >>> data = load_connectomes(shrinkage=0.5)
    >>> data.matrices.shape, np.bincount(data.labels).tolist()
    ((86, 28, 28), [46, 40])
    >>> round(data.radius, 2)  # √28 · ln 14.5
    14.15
    """
    alpha = _check_shrinkage_coefficient(shrinkage)
    vectors, subject_ids, labels = geomstats_datasets("load_connectomes").load_connectomes(as_vectors=True)
    vectors = np.asarray(vectors, dtype=float)
    k = _CONNECTOME_SIZE
    rows, cols = np.triu_indices(k, 1)
    corr = np.broadcast_to(np.eye(k), (len(vectors), k, k)).copy()
    corr[:, rows, cols] = vectors
    corr[:, cols, rows] = vectors
    matrices = (1.0 - alpha) * corr + alpha * np.eye(k)
    _require_spd(matrices, "connectomes", "pass shrinkage > 0")
    radius = None if alpha == 0.0 else math.sqrt(k) * max(-math.log(alpha), math.log(k - (k - 1) * alpha))
    return Connectomes(matrices, np.asarray(labels, dtype=int), np.asarray(subject_ids, dtype=int), alpha, radius)


# ---------------------------------------------------------------------------------------------
# EMG covariances


@dataclass(frozen=True)
class EMGCovariances:
    """Shrunk 8×8 covariance matrices of windows of surface-EMG recordings of hand signs.

    Source: geomstats' ``load_emg()``, acquired with the somOS-interface sEMG armband and
    described in geomstats' notebook "Hand gesture classification with EMG data using Riemannian
    metrics" (M. Guerard): 731,682 rows of 8 electrode readings (8-bit values in arbitrary units,
    centred near 128), a time stamp in ms, the sign being held and the experiment. Two users
    (``mg``, ``rr``) in two sessions each (``s1``, ``s2``; the armband is put on anew for each
    session) give 4 experiments; each holds 6 cycles of the 5 signs ``rest, rock, paper,
    scissors, ok``, 25 s per sign: 120 runs of 6,024–6,175 rows, 24 per sign.

    Attributes
    ----------
    covariances : numpy.ndarray, shape (N, 8, 8)
        In squared units of the readings.
    labels : numpy.ndarray of str, shape (N,)
        ``"rock"``, ``"paper"``, ``"scissors"``, ``"ok"`` (and ``"rest"`` if included).
    experiments : numpy.ndarray of str, shape (N,)
        ``"mg_s1"``, ``"mg_s2"``, ``"rr_s1"``, ``"rr_s2"`` (user and session).
    runs : numpy.ndarray of int, shape (N,)
        Index (0–119, in file order) of the 25-s run the window was cut from; windows of one run
        are strongly dependent, so split data for validation by run or experiment.
    starts : numpy.ndarray of int, shape (N,)
        Row of the window's first sample in ``geomstats.datasets.utils.load_emg()``.
    shrinkage : numpy.ndarray, shape (N,)
        The shrinkage coefficient of each window (fixed, or chosen per window by the estimator).
    window, step, margin : int
        The settings, in rows (samples).
    """

    covariances: np.ndarray
    labels: np.ndarray
    experiments: np.ndarray
    runs: np.ndarray
    starts: np.ndarray
    shrinkage: np.ndarray
    window: int
    step: int
    margin: int


@lru_cache(maxsize=1)
def _emg_recording():
    """The EMG table as read-only arrays: readings (int16), then label and experiment codes with
    their names (``names[codes]`` is the column)."""
    table = geomstats_datasets("load_emg_covariances").load_emg()
    readings = table[[f"c{i}" for i in range(_EMG_CHANNELS)]].to_numpy(dtype=np.int16)
    label_codes, label_names = table["label"].factorize()
    experiment_codes, experiment_names = table["exp"].factorize()
    arrays = (
        readings,
        label_codes.astype(np.int8),
        np.asarray(label_names, dtype=str),
        experiment_codes.astype(np.int8),
        np.asarray(experiment_names, dtype=str),
    )
    for array in arrays:
        array.flags.writeable = False
    return arrays


def _shrunk_covariances(windows: np.ndarray, shrinkage) -> tuple[np.ndarray, np.ndarray]:
    """Shrunk covariances ``(1 − s) S + s (tr S / p) I`` of a batch of windows (m, n, p).

    ``S`` is the empirical covariance of the centred window (divided by n); ``s`` is fixed or
    chosen per window by Ledoit–Wolf or OAS, the formulas of ``sklearn.covariance.ledoit_wolf``
    and ``sklearn.covariance.oas``, vectorised over windows.
    """
    m, n, p = windows.shape
    x = windows - windows.mean(axis=1, keepdims=True)
    cov = np.swapaxes(x, 1, 2) @ x / n
    cov = 0.5 * (cov + np.swapaxes(cov, 1, 2))  # exactly symmetric whatever order BLAS sums in
    mu = np.trace(cov, axis1=1, axis2=2) / p
    if shrinkage == "ledoit-wolf":
        frobenius2 = np.sum(cov**2, axis=(1, 2))
        # sklearn: beta = (Σ_t |x_t|⁴ / n − ‖S‖²_F) / (p n), delta = ‖S − μI‖²_F / p,
        # s = min(beta, delta) / delta
        beta = (np.mean(np.sum(x**2, axis=2) ** 2, axis=1) - frobenius2) / (p * n)
        delta = np.sum((cov - mu[:, None, None] * np.eye(p)) ** 2, axis=(1, 2)) / p
        beta = np.minimum(beta, delta)
        coefficient = np.where(beta == 0, 0.0, beta / np.where(delta == 0, 1.0, delta))
    elif shrinkage == "oas":
        mean_square = np.mean(cov**2, axis=(1, 2))
        numerator = mean_square + mu**2
        denominator = (n + 1) * (mean_square - mu**2 / p)
        ratio = numerator / np.where(denominator == 0, 1.0, denominator)
        coefficient = np.where(denominator == 0, 1.0, np.minimum(ratio, 1.0))
    else:
        coefficient = np.full(m, float(shrinkage))
    shrunk = (1.0 - coefficient)[:, None, None] * cov + (coefficient * mu)[:, None, None] * np.eye(p)
    return shrunk, coefficient


def load_emg_covariances(
    *,
    window: int = 250,
    step: int = 250,
    margin: int = 0,
    shrinkage: str | float = "ledoit-wolf",
    include_rest: bool = False,
) -> EMGCovariances:
    """Cut geomstats' EMG recordings into windows and return one shrunk covariance per window.

    The recording is split into its 120 runs (maximal blocks of consecutive rows with the same
    experiment and sign); ``margin`` rows are dropped at both ends of each run (the transition
    between signs); windows of ``window`` consecutive rows start every ``step`` rows from there
    and must end inside the run, so no window crosses a change of sign or experiment. Each window
    is centred and its covariance shrunk towards ``(tr S / 8) I``.

    **Time.** geomstats gives an acquisition every ~4 ms (250 Hz) with time in ms; in the file a
    25-s run holds 6,024–6,175 rows, i.e. about 244 rows per second, and the time stamps jitter
    (steps of 2–124 ms, and about 2,900 backward steps of up to 46 ms), so windows count rows,
    not milliseconds. The
    default window of 250 rows is about 1.0 s; ``step = window`` gives disjoint windows (each
    reading in one record at most), and the defaults give 2,304 windows of the four signs
    (2,880 with rest; 24 per run). geomstats' tests of its own preprocessing use
    ``window=100, step=100, margin=1000`` (0.4-s windows, 4 s dropped at each end).

    Needs the optional dependency geomstats (the ``geomstats`` extra: ``pip install -e
    ".[geomstats]"`` in the root of a checkout of geodp); the data ship inside it. The table is
    read once per process (about 0.8 s on 2 cores) and kept in memory (13 MB); cutting and
    estimating then take about 0.2 s at the defaults.

    Parameters
    ----------
    window : int, default 250
        Rows per window, at least 2.
    step : int, default 250
        Rows between the starts of consecutive windows of a run, at least 1.
    margin : int, default 0
        Rows dropped at each end of every run.
    shrinkage : {"ledoit-wolf", "oas"} or float in [0, 1), default "ledoit-wolf"
        Ledoit–Wolf (Ledoit & Wolf 2004) or OAS (Chen et al. 2010) coefficient per window, as
        ``sklearn.covariance.ledoit_wolf`` / ``oas`` compute it, or a fixed coefficient (0 = the
        empirical covariance, which is singular for a window of fewer than 9 rows).
    include_rest : bool, default False
        Keep the windows of the ``"rest"`` sign.

    Returns
    -------
    EMGCovariances

    Raises
    ------
    InvalidParameterError
        No window fits in a run, or a setting is out of range.
    InvalidDataError
        Some window's covariance is not positive definite (only with a fixed coefficient and a
        flat or too short window): choose a shrinkage estimator or a longer window.
    ImportError
        geomstats is missing or does not import.

    Examples
    --------
    >>> data = load_emg_covariances()
    >>> data.covariances.shape
    (2304, 8, 8)
    >>> sorted(set(data.labels.tolist()))
    ['ok', 'paper', 'rock', 'scissors']
    """
    window = _check_integer(window, "window", 2)
    step = _check_integer(step, "step", 1)
    margin = _check_integer(margin, "margin", 0)
    if isinstance(shrinkage, str):
        if shrinkage not in _EMG_SHRINKAGE_ESTIMATORS:
            raise InvalidParameterError(
                f"shrinkage must be one of {_EMG_SHRINKAGE_ESTIMATORS} or a number in [0, 1), got {shrinkage!r}."
            )
    else:
        shrinkage = _check_shrinkage_coefficient(shrinkage)
    if not isinstance(include_rest, (bool, np.bool_)):
        raise InvalidTypeError(f"include_rest must be True or False, got {include_rest!r}.")

    readings, labels, label_names, experiments, experiment_names = _emg_recording()
    change = (labels[1:] != labels[:-1]) | (experiments[1:] != experiments[:-1])
    run_start = np.concatenate([[0], np.flatnonzero(change) + 1])
    run_end = np.append(run_start[1:], len(labels))
    run_id = np.arange(len(run_start))
    if not include_rest:
        keep = label_names[labels[run_start]] != "rest"
        run_start, run_end, run_id = run_start[keep], run_end[keep], run_id[keep]
    counts = np.maximum((run_end - run_start - 2 * margin - window) // step + 1, 0)
    total = int(counts.sum())
    if total == 0:
        raise InvalidParameterError(
            f"window={window} with margin={margin} leaves no window in any run (runs hold "
            f"{int(np.min(run_end - run_start))}–{int(np.max(run_end - run_start))} rows); "
            "use a shorter window or a smaller margin."
        )
    position = np.arange(total) - np.repeat(np.cumsum(counts) - counts, counts)
    starts = np.repeat(run_start + margin, counts) + step * position

    covariances = np.empty((total, _EMG_CHANNELS, _EMG_CHANNELS))
    coefficients = np.empty(total)
    chunk = max(1, _EMG_CHUNK_ROWS // window)
    offsets = np.arange(window)
    for lo in range(0, total, chunk):
        rows = starts[lo : lo + chunk, None] + offsets
        covariances[lo : lo + chunk], coefficients[lo : lo + chunk] = _shrunk_covariances(
            readings[rows].astype(float), shrinkage
        )
    _require_spd(covariances, "window covariances", "use shrinkage='ledoit-wolf' or a longer window")
    return EMGCovariances(
        covariances,
        label_names[labels[starts]],
        experiment_names[experiments[starts]],
        np.repeat(run_id, counts),
        starts,
        coefficients,
        window,
        step,
        margin,
    )


# ---------------------------------------------------------------------------------------------
# Cities


@dataclass(frozen=True)
class Cities:
    """Fifty large cities as points of the unit sphere S².

    Source: geomstats' ``load_cities()``, a 50-city sample of the SimpleMaps World Cities
    Database (https://simplemaps.com/data/world-cities; latitude and longitude in degrees with
    4 decimals).

    Attributes
    ----------
    points : numpy.ndarray, shape (50, 3)
        ``(cos φ cos λ, cos φ sin λ, sin φ)`` for latitude φ and longitude λ: the usual
        Earth-centred axes (x through (0°, 0°), z through the North Pole), Earth radius 1.
    names : numpy.ndarray of str, shape (50,)
    latitudes, longitudes : numpy.ndarray, shape (50,)
        Degrees; longitude in (−180, 180].
    """

    points: np.ndarray
    names: np.ndarray
    latitudes: np.ndarray
    longitudes: np.ndarray


def load_cities() -> Cities:
    """Load geomstats' 50 world cities as unit vectors on S².

    geomstats' ``load_cities()`` returns unit vectors in its own axes: it maps longitude λ to
    the azimuth λ + π, so its x and y are the negatives of the usual ones. This loader undoes
    that rotation (an isometry of the sphere: distances and means are unaffected, only the
    coordinates change) and recovers the latitudes and longitudes.

    Needs the optional dependency geomstats (the ``geomstats`` extra); the data ship inside it.

    Returns
    -------
    Cities

    Examples
    --------
    >>> cities = load_cities()
    >>> from geodp.manifolds import Sphere
    >>> cities.points.shape, str(cities.names[0])
    ((50, 3), 'Tokyo')
    >>> bool(Sphere(2).belongs(cities.points).all())
    True
    """
    points, names = geomstats_datasets("load_cities").load_cities()
    points = np.asarray(points, dtype=float) * np.array([-1.0, -1.0, 1.0])
    latitudes = np.degrees(np.arctan2(points[:, 2], np.hypot(points[:, 0], points[:, 1])))
    longitudes = np.degrees(np.arctan2(points[:, 1], points[:, 0]))
    return Cities(points, np.asarray(names, dtype=str), latitudes, longitudes)


# ---------------------------------------------------------------------------------------------
# Optic nerve heads


@dataclass(frozen=True)
class OpticalNerves:
    """Five 3-D landmarks on each of 22 optic nerve heads of 11 rhesus monkeys.

    Source: geomstats' ``load_optical_nerves()``, the data of V. Patrangenaru and L. Ellingson,
    *Nonparametric Statistics on Manifolds and Their Applications to Object Data*, CRC Press
    2015 (https://doi.org/10.1201/b18969). In each monkey one eye was given experimental glaucoma
    and the other kept as control. The source file holds 12 monkeys; geomstats drops one
    (files ``laljn103.12b``, ``lalj0103.12b``) without stating why.

    Attributes
    ----------
    landmarks : numpy.ndarray, shape (22, 5, 3)
        Coordinates as recorded; geomstats gives no unit. x and y lie on a grid of 20 units
        (about 700–4,300), z has two decimals (about −680 to 250): the axes may not share a unit.
    labels : numpy.ndarray of int, shape (22,)
        0 = normal eye, 1 = glaucoma, alternating (the two eyes of a monkey are consecutive).
    monkeys : numpy.ndarray of int, shape (22,)
        0–10, the monkey each eye belongs to.
    landmark_names : tuple of str
        ``("S", "T", "N", "I", "V")``: superior aspect of the retina, temporal side, nasal side,
        inferior point, deepest point of the optic nerve head (the column order of the file).
    """

    landmarks: np.ndarray
    labels: np.ndarray
    monkeys: np.ndarray
    landmark_names: tuple


def load_optical_nerves() -> OpticalNerves:
    """Load geomstats' optic-nerve-head landmarks (raw 3-D configurations, 11 glaucoma/normal pairs).

    The landmarks are returned as recorded, neither centred nor scaled: they are configurations
    of 5 points in R³ for a 3-D shape space (e.g. geomstats' Kendall shape space through a
    geomstats adapter), not points of a geodp space.

    Needs the optional dependency geomstats (the ``geomstats`` extra); the data ship inside it.

    Returns
    -------
    OpticalNerves

    Notes
    -----
    One record is one eye; the two eyes of a monkey are paired, so a per-eye guarantee does not
    protect a monkey.

    Examples
    --------
    >>> import numpy as np
    >>> nerves = load_optical_nerves()
    >>> nerves.landmarks.shape, np.bincount(nerves.labels).tolist(), nerves.landmark_names
    ((22, 5, 3), [11, 11], ('S', 'T', 'N', 'I', 'V'))
    """
    landmarks, labels, monkeys = geomstats_datasets("load_optical_nerves").load_optical_nerves()
    return OpticalNerves(
        np.asarray(landmarks, dtype=float),
        np.asarray(labels, dtype=int),
        np.asarray(monkeys, dtype=int),
        ("S", "T", "N", "I", "V"),
    )
