"""Guard rails of the layout that the linters do not check: spaces own their geometry (no module
tests a space's concrete class), and an underscore means "private to its module"."""

import pathlib
import re

import pytest

SRC = pathlib.Path(__file__).resolve().parents[1] / "src" / "geodp"
SPACES = r"(Euclidean|Sphere|Hyperbolic|KendallShape|SPD|AffineInvariantSPD|LogEuclideanSPD|GeomstatsSpace)"
# The spaces themselves, the space parser of the command line, and S22's point-wise baseline,
# which is defined on Kendall landmarks only (a refusal of every other space, not a switch).
ALLOWED = {"manifolds", "cli", "mechanisms/pointwise_shape.py"}


def _modules():
    for path in sorted(SRC.rglob("*.py")):
        relative = path.relative_to(SRC).as_posix()
        if not any(relative == a or relative.startswith(a + "/") for a in ALLOWED):
            yield relative, path.read_text(encoding="utf-8")


@pytest.mark.parametrize("relative, text", list(_modules()), ids=lambda v: v if v.endswith(".py") else "")
def test_no_module_switches_on_a_concrete_space_class(relative, text):
    switches = re.findall(rf"isinstance\([^)]*\b{SPACES}\b", text)
    assert not switches, f"{relative} tests a space's class: declare a hook or a closed form in Manifold instead"


@pytest.mark.parametrize("relative, text", list(_modules()), ids=lambda v: v if v.endswith(".py") else "")
def test_no_module_calls_the_unvalidated_geometry_by_its_private_name(relative, text):
    names = "exp|log|dist|inner|norm|transport|polar_exp|clip_to_ball|random_tangent|random_unit_tangent"
    calls = [m for m in re.findall(rf"\b([\w.]+)\._({names})\(", text) if m[0] not in ("self", "super()")]
    assert not calls, f"{relative} calls {calls[:3]}: use space.unchecked.<name>(...)"
