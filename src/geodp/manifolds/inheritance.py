"""What a space may inherit from its parent class: nothing derived from a metric it changes.

Checked when a :class:`~geodp.manifolds.Manifold` subclass is written (``__init_subclass__``),
so a wrong inheritance fails at import, not inside ``fit`` after the budget is charged.
"""

from __future__ import annotations

__all__ = ["METRIC", "DERIVED", "check_inherited_declarations"]

# The geometry a metric is made of, and what is derived from it: a class whose metric comes from a
# class nearer to it in the MRO than one of these does not inherit it silently (an audit gave a
# subclass with half the distances its parent's exact SPD sampler, and a scaled Euclidean plane
# its parent's identity chart: half the noise). Attributes a parent sets in __init__ are not seen
# here: a subclass that changes the metric must set them too (docs: tests/test_new_space.py).
METRIC = ("_exp", "_log", "_inner", "_dist", "_norm", "_transport", "_polar_exp")
DERIVED = (
    "closed_forms",
    "is_flat",
    "to_coordinates",
    "from_coordinates",
    "curvature_bounds",
    "injectivity_radius",
    "is_homogeneous",
    "max_representable_radius",
    "radial_log_jacobian",
    "cut_radius",
    "volume_growth_rate",
    "_adjoint_exp_derivatives",
    "_extrinsic_radius",
    "_isometry_to_reference",
    "_mean_log_norms",
    "_distances_from",
    "_prepared_records",
    "_tangent_from_coordinates",
)


def check_inherited_declarations(cls, root) -> None:
    """Refuse a class whose metric is newer (nearer to it in the MRO, mixins included) than
    closed forms, declared facts or hooks derived from a metric: each must be restated by the
    class that gives the metric, or nearer (a proof obligation), or set back to the default."""
    mro = cls.__mro__

    def supplier(name):
        return next((i for i, k in enumerate(mro) if name in k.__dict__ and k is not root), None)

    metric = [i for i in (supplier(n) for n in METRIC) if i is not None]
    if not metric:
        return
    newest = min(metric)
    stale = []
    for name in DERIVED:
        i = supplier(name)
        if i is None or i <= newest or (name == "closed_forms" and not getattr(cls, name)):
            continue
        stale.append(f"{name} (from {mro[i].__name__})")
    if stale:
        given = ", ".join(f"{n} (from {mro[i].__name__})" for n in METRIC if (i := supplier(n)) == newest)
        raise TypeError(
            f"{cls.__name__} takes its metric from {mro[newest].__name__} ({given}) but inherits what was "
            f"derived from an older one: {', '.join(stale)}. Restate each next to the metric once you have "
            "checked it holds (name = Parent.name), or set it back (closed_forms = frozenset(); "
            "name = Manifold.name). Patching a space's methods after its class is written is not supported."
        )
