"""``PrivateMDM``: classification by minimum distance to class means released privately."""

from __future__ import annotations

import warnings

import numpy as np
from scipy.special import softmax
from sklearn.base import BaseEstimator, ClassifierMixin, TransformerMixin
from sklearn.utils.multiclass import type_of_target
from sklearn.utils.validation import check_is_fitted

from geodp.accountant import check_accountant
from geodp.errors import ApproximateSamplerWarning, InvalidDataError, InvalidParameterError, InvalidTypeError
from geodp.manifolds.base import check_space
from geodp.models.frechet_mean import PrivateFrechetMean, public_records
from geodp.models.report import PerClassDiagnostics, PrivacyReport
from geodp.records import is_dask
from geodp.release import ReleasePlan, announce_and_charge
from geodp.secure import SECURE, is_secure
from geodp.validation import as_generator

__all__ = ["PrivateMDM"]

_ADJACENCY = (
    "replace-one: one record's point is replaced, its label kept; n, the labels and the class counts are public"
)
_COMPOSITION = (
    "parallel: every record is in exactly one class, its label is kept by the adjacency, and each "
    "class mean is computed from the records of its class only, so a replaced record changes one "
    "class's release: the class means together are as private as the least private of them, "
    "charged once (epsilon and delta: the largest over the classes; gdp_mu: the largest when every "
    "class is mu-GDP; zcdp_rho: the largest when every class is rho-zCDP, as a secure-mode discrete "
    "Gaussian is)"
)
_LABELS = (
    "the labels are public by assumption: in BCI and fMRI studies the class of each trial or "
    "subject is set by the protocol. If they were private, replacing one record could move it "
    "between classes, change two means and the class counts; this guarantee does not cover that"
)


class PrivateMDM(ClassifierMixin, TransformerMixin, BaseEstimator):
    """Minimum distance to mean classifier whose class means are released privately.

    pyRiemann's ``MDM`` with private centroids: ``fit`` releases the Fréchet mean of each
    class's records with :class:`~geodp.models.PrivateFrechetMean` (same space, mechanism,
    public ball and ε, δ for every class); ``predict`` assigns each point the class of the
    nearest released mean in the space's geodesic distance. Predicting, transforming and
    scoring use the released means only, so they cost the *training* records no privacy
    (post-processing); their outputs are functions of the ``X`` (and ``y``) you pass, so
    ``fit_predict``, or ``score`` on the training records, is not private: publish only what
    is computed from the released means and public data.

    Parameters
    ----------
    space : Manifold
        Any geodp space: ``SPD(k)`` for pyRiemann's ``metric="riemann"``, ``SPD(k,
        metric="log-euclidean")`` for ``metric="logeuclid"``, or any other space whose points
        you classify.
    epsilon : float
        Privacy budget of the whole fit, > 0 (each class mean is released at this ε: see the
        Privacy notes).
    delta : float, default 0.0
        Needed (in (0, 1)) by ``"tangent-gaussian"`` and ``"wrapped-gaussian"``; the other
        mechanisms are pure ε-DP.
    center : array_like, shape space.point_shape
        Public centre of the data ball, one for all classes. Must not be computed from the
        private data.
    radius : float
        Public radius of the data ball, one for all classes; records outside it are clipped onto
        its boundary.
    ball : PrivateBall, optional
        Instead of ``center`` and ``radius``: one ball for all classes, released by
        :func:`geodp.domain.private_ball` on the same records (its cost adds to the fit's).
    mechanism : {"laplace", "tangent-gaussian", "kng", "wrapped-laplace", "wrapped-gaussian"}, default "laplace"
        How each class mean is released (see :class:`~geodp.models.PrivateFrechetMean`).
    calibration : {"analytic", "classical"}, default "analytic"
        Gaussian calibration, for ``"tangent-gaussian"`` and ``"wrapped-gaussian"``.
    on_invalid : {"raise", "center"}, default "raise"
        What to do with a record that is not a point of the space, as in
        :class:`~geodp.models.PrivateFrechetMean`.
    project_to_ball : bool, default False
        Project each released mean onto the public ball (post-processing).
    debias : bool, default False
        Predict with the squared distances minus each class's expected squared noise norm
        ``E‖Z_c‖²`` (``noise_offsets_``), a function of public parameters only: post-processing
        (docs/math.md, "Debiased MDM prediction"). Without it (pyRiemann's rule), the class with
        fewer records (more noise) looks farther from every point, and at small ε nearly every
        point goes to the larger class. That preference scored more accuracy and less balanced
        accuracy on the connectomes (docs/mdm_gaussian.md), hence the default; choose ``True``
        when every class matters. ``project_to_ball=True`` keeps pyRiemann's rule (a projected
        release no longer carries the additive noise the offset is for).
    classes : array_like or None, default None
        The public class labels. ``None`` takes the labels that occur in ``y`` (public by
        assumption). Declared classes must each have at least one record in ``y``, and ``y`` may
        hold no other label.
    accountant : BudgetAccountant, optional
        Charged ``(epsilon, delta)`` once for the whole fit, before any class mean is released.
    random_state : None, int or numpy.random.Generator
        ``None`` draws fresh OS entropy (use this in production). One independent child stream
        is derived per class, in the order of ``classes_``, so the release of one class does not
        depend on the records of another.
    timing_safe : bool or float, default False
        Timing-safe mode for each class's release, as in :class:`PrivateFrechetMean`: each is
        padded to its public deadline (given in seconds, or calibrated on public stand-ins), which
        the report gives in the class's entry (``to_dict()["per_class"][i]["timing_deadline"]``).

    Attributes
    ----------
    classes_ : numpy.ndarray, shape (n_classes,)
        The class labels, sorted.
    covmeans_ : numpy.ndarray, shape (n_classes, *space.point_shape)
        The released class means (pyRiemann's name), in the order of ``classes_``.
    noise_offsets_ : numpy.ndarray, shape (n_classes,)
        ``E‖Z_c‖²`` of each class's noise (chart or tangent space at the centre), computed from
        public parameters only; ``predict`` subtracts it from the squared distances. 0 where the
        mechanism adds no noise of known law in a chart (the Riemannian Laplace, KNG and
        Riemannian Gaussian on curved spaces), with ``project_to_ball=True``, and when
        ``debias`` is false.
    privacy_report_ : PrivacyReport
        The **publishable** guarantee of the whole fit: text (``str``) and
        ``privacy_report_.to_dict()``, with the composition, the adjacency, and each class's n,
        sensitivity, noise scale and sampler. It holds nothing computed from the private data.
    curator_diagnostics_ : PerClassDiagnostics
        **Curator-only** diagnostics of every class's release (records clipped, solver
        convergence, withheld warnings). Never publish them.

    See Also
    --------
    PrivateFrechetMean : the release of each class mean.
    pyriemann.classification.MDM : the non-private classifier this one mirrors.

    Notes
    -----
    **Privacy.** Replace-one adjacency in which the labels are public: a neighbouring dataset
    replaces the point of one record and keeps its label, so n, the labels and the class
    counts are public. This fits studies where the protocol sets the class of each trial or
    subject (a BCI cue, a diagnosis group). If the labels were private, one replacement could
    move a record between classes, change two means and the counts, and this guarantee would
    not apply. Under that adjacency each record lies in exactly one class, and each class mean
    is an (ε, δ)-DP release of its class's records (its sensitivity uses that class's public
    count). By parallel composition the whole fit is (ε, δ)-DP, and the accountant is charged
    (ε, δ) once, with the fit's event (``privacy_report_.dp_event()``: the class guarantee with
    the largest ε, δ or μ, since a replaced record changes one class's release). Parallel
    composition rests on the kept label: under an adjacency that could relabel a record, one
    replacement would change two classes' releases, which then compose sequentially (and the
    public class counts would no longer be public). Every public parameter is checked, and the
    budget charged, before any record is touched; the warnings that reach the caller are about
    the samplers (public) or the releases. The labels are public, so error messages about ``y``
    may name classes. The running time of a release may depend on the data (docs/guide.md,
    Pitfalls).

    References: Barachant et al. 2012 for MDM; R21, S22 and U23 for the mechanisms
    (docs/references.md). The user guide's section "Classifying covariance matrices privately
    (PrivateMDM)" (docs/guide.md) has measured timings.

    Examples
    --------
    >>> import numpy as np
    >>> from geodp.manifolds import SPD
    >>> space = SPD(2, metric="log-euclidean")
    >>> rng = np.random.default_rng(0)
    >>> X = np.concatenate([space.random_point(40, rng=rng) * s for s in (0.5, 2.0)])
    >>> y = np.repeat(["rest", "task"], 40)
    >>> model = PrivateMDM(space, epsilon=1.0, center=np.eye(2), radius=4.0,
    ...                    random_state=0).fit(X, y)
    >>> model.classes_.tolist(), model.covmeans_.shape
    (['rest', 'task'], (2, 2, 2))
    >>> model.predict(X[:3]).shape, model.predict_proba(X[:3]).sum(axis=1).round(12).tolist()
    ((3,), [1.0, 1.0, 1.0])
    >>> print(model.privacy_report_.splitlines()[0])
    geodp privacy report: PrivateMDM (publishable: nothing in it is computed from the private data)
    """

    def __init__(
        self,
        space,
        *,
        epsilon,
        delta=0.0,
        center=None,
        radius=None,
        ball=None,
        mechanism="laplace",
        calibration="analytic",
        on_invalid="raise",
        project_to_ball=False,
        debias=False,
        classes=None,
        accountant=None,
        random_state=None,
        timing_safe=False,
    ):
        self.space = space
        self.epsilon = epsilon
        self.delta = delta
        self.center = center
        self.radius = radius
        self.ball = ball
        self.mechanism = mechanism
        self.calibration = calibration
        self.on_invalid = on_invalid
        self.project_to_ball = project_to_ball
        self.debias = debias
        self.classes = classes
        self.accountant = accountant
        self.random_state = random_state
        self.timing_safe = timing_safe

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.non_deterministic = True
        return tags

    def fit(self, X, y, sample_weight=None):
        """Release the private mean of each class.

        Parameters
        ----------
        X : array_like or dask.array.Array, shape (n, *space.point_shape)
            A Dask array is never materialised: each class's rows stay a Dask array, whose mean
            :class:`~geodp.models.PrivateFrechetMean` computes chunk by chunk (not with
            ``mechanism="kng"``, refused before the charge).
        y : array_like or dask.array.Array, shape (n,)
            Class labels (public by assumption; a Dask array of labels is computed).
        sample_weight : None
            Accepted for pyRiemann compatibility; weights are refused (non-uniform weights
            change the sensitivity of the means).

        Returns
        -------
        self

        Raises
        ------
        InvalidParameterError, InvalidTypeError, AssumptionError
            A parameter is invalid (public); raised before anything is charged.
        InvalidDataError
            ``X`` does not have shape ``(n, *space.point_shape)``, ``y`` is not one label per
            record, holds fewer than two classes, or does not match ``classes`` (public).
        NotOnManifoldError
            With ``on_invalid="raise"``, some record is not a point of the space. Raised after
            the accountant is charged (whether it happens depends on the data).
        BudgetExceededError
            The accountant cannot pay for the fit (nothing is released, nothing charged).

        Warns
        -----
        ApproximateSamplerWarning
            Once, before sampling, when some class mean will be sampled by MCMC (decided from
            public quantities: space, scale, ball, class counts).
        """
        _refuse_weights(sample_weight)
        data, labels, classes = self._public_input(X, y)
        rng = as_generator(self.random_state)
        # One independent stream per class, in the order of classes_: a class's release depends
        # on its own records and on the seed only.
        if is_secure(rng):  # secure mode: every class draws from its own fresh secure generator
            models = [self._class_model(SECURE) for _ in classes]
        else:
            streams = np.random.SeedSequence(rng.integers(0, 2**63, size=4).tolist()).spawn(len(classes))
            models = [self._class_model(np.random.default_rng(s)) for s in streams]
        subsets = [data[labels == c] for c in classes]

        plan = self._compose(models, subsets, classes)
        announce_and_charge(plan, self.accountant)
        for model, subset in zip(models, subsets, strict=True):  # every deadline before any private part
            model._calibrate_deadline(subset)
        released = []
        for label, model, subset in zip(classes, models, subsets):
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                model.fit(subset)
            released += [(label, w) for w in caught]
        # PrivateFrechetMean lets through public warnings only; the sampler's was said once. They
        # are said after every class is released: a record that makes a later class raise must
        # not reveal, through the warnings of earlier classes, which class it is in.
        for label, w in released:
            if not issubclass(w.category, ApproximateSamplerWarning):
                warnings.warn(f"class {_plain(label)!r}: {w.message}", w.category, stacklevel=2)

        self.classes_ = classes
        self.covmeans_ = np.stack([model.mean_ for model in models])
        # Public: each mechanism's noise law is fixed by (space, ε, δ, ball, class count). A release
        # projected onto the ball no longer carries that additive noise: no offset then.
        moments = [model.mechanism_.noise_second_moment(self.space.dim) for model in models]
        use = self.debias and not self.project_to_ball
        self.noise_offsets_ = np.array([m if (use and m is not None) else 0.0 for m in moments])
        if self.debias and not (use and all(m is not None for m in moments)):  # public: say it did nothing
            warnings.warn(
                "debias=True has no effect here: "
                + (
                    "project_to_ball=True removes the additive noise it corrects for."
                    if self.project_to_ball
                    else f"the {self.mechanism!r} mechanism on {self.space!r} has no closed-form noise second "
                    "moment (a Riemannian law on a curved space); the log-Euclidean Laplace or tangent Gaussian "
                    "and the wrapped mechanisms have one."
                ),
                UserWarning,
                stacklevel=2,
            )
        # On flat spaces the release is exact in the isometric chart; a release too far out for
        # float64 matrices (small ε on log-Euclidean SPD) still classifies through its coordinates.
        self._mean_coordinates = np.stack([model.mean_coordinates_ for model in models]) if self.space.is_flat else None
        self.curator_diagnostics_ = PerClassDiagnostics(
            classes=tuple(_plain(c) for c in classes),
            per_class=tuple(model.curator_diagnostics_ for model in models),
        )
        # Timing-safe: each class's public deadline (known once its fit has calibrated it) joins
        # its entry of the report; the rest is the plan's report.
        reports = [model.privacy_report_ for model in models]
        self.privacy_report_ = (
            plan.report
            if self.timing_safe is False
            else self._report(reports, classes, plan.epsilon, plan.delta, plan.gdp_mu, plan.zcdp_rho)
        )
        return self

    def _class_model(self, rng) -> PrivateFrechetMean:
        return PrivateFrechetMean(
            self.space,
            epsilon=self.epsilon,
            delta=self.delta,
            center=self.center,
            radius=self.radius,
            ball=self.ball,
            mechanism=self.mechanism,
            calibration=self.calibration,
            on_invalid=self.on_invalid,
            project_to_ball=self.project_to_ball,
            random_state=rng,
            timing_safe=self.timing_safe,
        )

    def _check_labels(self, y, n: int):
        """``y`` as a label array of length n, and the sorted classes (labels are public)."""
        labels = np.asarray(y)
        if labels.ndim != 1 or labels.shape[0] != n:
            raise InvalidDataError(f"y must hold one label per record of X, shape ({n},), got shape {labels.shape}.")
        try:
            kind = type_of_target(labels, input_name="y")
        except ValueError as error:
            raise InvalidDataError(f"y must hold class labels: {error}") from None
        if kind not in ("binary", "multiclass"):
            raise InvalidDataError(f"y must hold class labels, got a target of type {kind!r}.")
        found = np.unique(labels)
        if self.classes is None:
            classes = found
        else:
            classes = np.unique(np.asarray(self.classes))
            unknown = found[~np.isin(found, classes)]
            if unknown.size:
                raise InvalidDataError(
                    f"y holds labels that are not in classes: {unknown.tolist()}. Add them to classes or drop their "
                    "records."
                )
            empty = classes[~np.isin(classes, found)]
            if empty.size:
                raise InvalidDataError(
                    f"classes {empty.tolist()} have no records in y: a class mean cannot be released "
                    "from no records. Drop them from classes."
                )
        if classes.size < 2:
            raise InvalidDataError(
                f"y holds a single class ({classes.tolist()[0]!r}): a classifier needs at least two classes."
            )
        return labels, classes

    def plan(self, X, y, sample_weight=None) -> ReleasePlan:
        """What :meth:`fit` will do on ``(X, y)``: the class plans composed (parallel composition:
        the classes' records are disjoint and the labels public, so the fit costs one class's ε
        and the largest δ). Reads the shape of ``X`` and the public labels only.

        Returns
        -------
        ReleasePlan
            ``facts["classes"]`` holds the class plans, in the order of the classes.

        Examples
        --------
        >>> import numpy as np
        >>> from geodp.manifolds import SPD
        >>> clf = PrivateMDM(SPD(2), epsilon=1.0, center=np.eye(2), radius=2.0)
        >>> plan = clf.plan(np.tile(np.eye(2), (6, 1, 1)), [0, 0, 0, 1, 1, 1])
        >>> plan.epsilon, len(plan.facts["classes"])
        (1.0, 2)
        """
        _refuse_weights(sample_weight)
        data, labels, classes = self._public_input(X, y)
        secure = is_secure(as_generator(self.random_state))  # the report names the construction
        # The plan's class models only name the construction: any seeded stream stands for the fit's.
        models = [self._class_model(SECURE if secure else 0) for _ in classes]
        return self._compose(models, [data[labels == c] for c in classes], classes)

    def _public_input(self, X, y):
        check_space(self.space)
        check_accountant(self.accountant)
        if not isinstance(self.debias, (bool, np.bool_)):
            raise InvalidTypeError(f"debias must be a bool, got {type(self.debias).__name__}.")
        if is_dask(X):  # lazy: its public metadata are checked, each class's rows stay a Dask array
            data = public_records(self.space, X)
        else:
            data = self.space.unchecked.dataset_array(X, "X")
        if is_dask(y):  # the labels are public (and small): read them
            y = y.compute()
        labels, classes = self._check_labels(y, data.shape[0])
        return data, labels, classes

    def _compose(self, models, subsets, classes) -> ReleasePlan:
        """The class plans composed into the fit's plan: the sampler notice once for all
        classes, any other notice once."""
        plans = [model.plan(subset) for model, subset in zip(models, subsets)]
        notices, approximate = [], [_plain(c) for c, p in zip(classes, plans) if not p.exact]
        for p in plans:
            for category, text in p.notices:
                if not issubclass(category, ApproximateSamplerWarning) and (category, text) not in notices:
                    notices.append((category, text))
        if approximate:
            notices.append(
                (
                    ApproximateSamplerWarning,
                    f"The means of classes {approximate} (of {len(classes)}) are sampled by MCMC: DP "
                    "then holds only approximately, and the run can take a while. The reason is in "
                    "the privacy report.",
                )
            )
        # Parallel composition: the fit's privacy curve is the largest of the classes' (a class
        # event dominates the others when its ε, δ or μ is the largest; every class shares the
        # mechanism and its ε, so these maxima are one class's guarantee).
        epsilon, delta = max(p.epsilon for p in plans), max(p.delta for p in plans)
        mus, rhos = [p.gdp_mu for p in plans], [p.zcdp_rho for p in plans]
        gdp_mu = None if None in mus else max(mus)
        # ρ-zCDP: a replaced record moves one class's release, whose Rényi divergences are ≤ α·max ρ
        zcdp_rho = None if gdp_mu is not None or None in rhos else max(rhos)
        return ReleasePlan(
            estimator=type(self).__name__,
            n_samples=sum(p.n_samples for p in plans),
            epsilon=epsilon,
            delta=delta,
            sensitivity=max(p.sensitivity for p in plans),
            scale=max(p.scale for p in plans),
            exact=all(p.exact for p in plans),
            sampler="; ".join(dict.fromkeys(p.sampler for p in plans)),
            report=self._report([p.report for p in plans], classes, epsilon, delta, gdp_mu, zcdp_rho),
            notices=tuple(notices),
            facts={"classes": tuple(plans)},
            gdp_mu=gdp_mu,
            zcdp_rho=zcdp_rho,
            timing_delta=max(p.timing_delta for p in plans),
        )

    def _report(self, reports, classes, epsilon: float, delta: float, gdp_mu, zcdp_rho) -> PrivacyReport:
        first = reports[0].to_dict()
        per_class = [dict(report.to_dict(), label=_plain(c)) for c, report in zip(classes, reports)]
        assumptions = list(dict.fromkeys(a for entry in per_class for a in entry["assumptions"]))
        n = sum(entry["n_samples"] for entry in per_class)
        kind = "ε-DP" if delta == 0.0 else "(ε, δ)-DP"
        lines = [
            "geodp privacy report: PrivateMDM (publishable: nothing in it is computed from the private data)",
            f"{kind}: epsilon = {epsilon!r}, delta = {delta!r} for the whole fit ({len(classes)} class means)"
            + ("" if gdp_mu is None else f"; mu-GDP with mu = {gdp_mu!r}")
            + ("" if zcdp_rho is None else f"; rho-zCDP with rho = {zcdp_rho!r}"),
            f"adjacency   : {_ADJACENCY}",
            f"composition : {_COMPOSITION}",
            f"labels      : {_LABELS}",
            f"n           : {n} records (public)",
            f"mechanism   : {first['mechanism']} on {first['space']}, one release per class",
            f"data domain : public geodesic ball of radius {first['radius']!r} around the given center "
            "(to_dict()['center']); records outside it are clipped onto its boundary",
            "per class   : each mean released at (epsilon, delta) from its own records:",
        ]
        # Facts shared by every class are said once; the others per class.
        facts = {
            "bound": "sensitivity_bound",
            "scale rule": "scale_rule",
            "sampler": "sampler",
            "fp-safe": "construction",
        }
        shared = {name: key for name, key in facts.items() if len({entry[key] for entry in per_class}) == 1}
        for entry in per_class:
            lines.append(
                f"  class {entry['label']!r}: n = {entry['n_samples']}, sensitivity = {entry['sensitivity']!r}, "
                f"noise scale = {entry['scale']!r}"
            )
            lines += [f"    {name:<10} : {entry[key]}" for name, key in facts.items() if name not in shared]
        lines += [f"  {name:<12} : {first[key]} (every class)" for name, key in shared.items()]
        lines.append("assumptions checked (merged over the classes):")
        lines += [f"  - {a}" for a in assumptions]
        data = {
            "model": "PrivateMDM",
            "epsilon": epsilon,
            "delta": delta,
            "gdp_mu": gdp_mu,
            "zcdp_rho": zcdp_rho,
            "adjacency": _ADJACENCY,
            "composition": _COMPOSITION,
            "labels": _LABELS,
            "n_samples": n,
            "classes": [entry["label"] for entry in per_class],
            "class_counts": [entry["n_samples"] for entry in per_class],
            "mechanism": self.mechanism,
            "space": first["space"],
            "center": first["center"],
            "radius": first["radius"],
            "exact": all(entry["exact"] for entry in per_class),
            "floating_point_safe": all(entry["floating_point_safe"] for entry in per_class),
            "assumptions": assumptions,
            "per_class": per_class,
        }
        return PrivacyReport("\n".join(lines), data)

    def transform(self, X):
        """Distance of each point to each released class mean (not debiased).

        Parameters
        ----------
        X : array_like, shape (n, *space.point_shape)

        Returns
        -------
        numpy.ndarray, shape (n, n_classes)
            Geodesic distances, columns in the order of ``classes_``.
        """
        check_is_fitted(self, "covmeans_")
        points = self.space.check_points(X, "X", batch_ndim=1)
        if self.space.is_flat:
            offsets = self.space.to_coordinates(points)[:, None] - self._mean_coordinates[None]
            return np.linalg.norm(offsets, axis=-1)
        return self.space.dist(self.covmeans_[None], points[:, None])

    def _scores(self, X):
        """Squared distances to the released means, minus ``noise_offsets_``."""
        return self.transform(X) ** 2 - self.noise_offsets_

    def predict(self, X):
        """The class of the nearest released mean (with ``debias``: of the smallest squared
        distance minus the class's ``noise_offsets_``).

        Parameters
        ----------
        X : array_like, shape (n, *space.point_shape)

        Returns
        -------
        numpy.ndarray, shape (n,)
        """
        scores = self._scores(X)  # checks that the model is fitted
        return self.classes_[np.argmin(scores, axis=1)]

    def predict_proba(self, X):
        """Softmax of the negative squared distances to the class means (pyRiemann's formula),
        minus ``noise_offsets_`` with ``debias``.

        Parameters
        ----------
        X : array_like, shape (n, *space.point_shape)

        Returns
        -------
        numpy.ndarray, shape (n, n_classes)
            Rows sum to 1; columns in the order of ``classes_``.
        """
        return softmax(-self._scores(X), axis=1)

    def fit_predict(self, X, y, sample_weight=None):
        """Fit, then predict the classes of ``X``.

        Parameters
        ----------
        X : array_like, shape (n, *space.point_shape)
        y : array_like, shape (n,)
        sample_weight : None

        Returns
        -------
        numpy.ndarray, shape (n,)
        """
        return self.fit(X, y, sample_weight=sample_weight).predict(X)


def _refuse_weights(sample_weight) -> None:
    if sample_weight is not None:
        raise InvalidParameterError(
            "sample_weight is not supported: non-uniform weights change the sensitivity of "
            "the class means. Drop sample_weight (or repeat records in the data instead)."
        )


def _plain(label):
    """A numpy scalar label as the Python scalar it holds (JSON-friendly)."""
    return label.item() if isinstance(label, np.generic) else label
