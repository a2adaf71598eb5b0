"""Messages a new user meets: the Poincaré-ball hint of a hyperboloid shape error, the δ_t share
of a refused timing-safe charge."""

import numpy as np
import pytest

from geodp.cli import main
from geodp.errors import InvalidDataError
from geodp.manifolds import Hyperbolic, Sphere
from geodp.models import PrivateFrechetMean

POINCARE = np.random.default_rng(0).uniform(-0.3, 0.3, (10, 2))  # (n, d) points of the Poincaré disc


@pytest.mark.parametrize(
    "call",
    [
        lambda H: H.check_points(POINCARE),
        lambda H: H.invalid_records(POINCARE),
        lambda H: PrivateFrechetMean(H, epsilon=1.0, center=H.origin, radius=1.0).fit(POINCARE),
        lambda H: PrivateFrechetMean(H, epsilon=1.0, center=[0.0, 0.0], radius=1.0).fit(H.from_poincare(POINCARE)),
    ],
    ids=["check_points", "invalid_records", "fit", "center"],
)
def test_poincare_points_for_a_hyperboloid_get_the_converter_hint(call):
    with pytest.raises(InvalidDataError, match=r"Poincaré ball: convert them with Hyperbolic\(2\)\.from_poincare\(P\)"):
        call(Hyperbolic(2))


def test_the_hint_names_a_converter_that_exists_and_fixes_the_input():
    space = Hyperbolic(2)
    X = space.from_poincare(POINCARE)
    assert X.shape == (10, 3) and space.belongs(X).all()


@pytest.mark.parametrize(
    "call",
    [lambda: Hyperbolic(2).check_points(np.zeros((3, 4))), lambda: Sphere(2).check_points(POINCARE)],
    ids=["other-width", "sphere"],
)
def test_no_poincare_hint_where_it_would_mislead(call):
    with pytest.raises(InvalidDataError) as err:
        call()
    assert "from_poincare" not in str(err.value)


def test_the_cli_gives_the_hint_for_a_file_of_poincare_points(tmp_path, capsys):
    np.save(tmp_path / "disc.npy", POINCARE)
    argv = ["release", str(tmp_path / "disc.npy"), "--space", "hyperbolic:2", "--center", "origin"]
    argv += ["--radius", "1", "--epsilon", "1", "--output", str(tmp_path / "m.npy")]
    argv += ["--guarantee", str(tmp_path / "m.json")]
    assert main(argv) == 2
    assert "convert them with Hyperbolic(2).from_poincare(P)" in capsys.readouterr().err
