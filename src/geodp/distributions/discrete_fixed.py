"""Fixed-work versions of the exact discrete Laplace and Gaussian samplers (timing-safe mode).

:mod:`geodp.distributions.discrete` runs Canonne, Kamath & Steinke's (2020) loops until they
stop, so its work follows the noise drawn (the geometric part runs one coin per unit of
|noise|/scale). Under :func:`geodp.work.fixed_work` those samplers call this module instead:
every loop runs a fixed public number of iterations, its coins drawn in one vectorised call
whatever the outcome, and the result is that of the default algorithm on the same coins. Each
loop's cap is chosen from its exact tail (docs/math.md §15, "Fixed work"):

* Bernoulli(exp(−γ)), γ ≤ 1 (CKS20 Alg. 1): ``C`` coins, ``P(K > C) = γ^C/C! ≤ 1/C!``;
* a run of Bernoulli(exp(−1)) successes (the geometric's unit loop and the per-unit loop of
  Bernoulli(exp(−γ)) for γ > 1): ``U`` coins, ``P(U successes in a row) = e^−U``;
* the geometric's trials and the outer rejections: :func:`geodp.work.fixed_proposals` at the
  proven acceptance floor (1 − 1/e for the trials, 1/2 for the Laplace, the closed form of
  :func:`gaussian_acceptance_floor` for the Gaussian);
* a uniform below ``m > 2^63 − 1`` (bytes): one round over ``64·L ≥ log2 m + s`` bits keeping the
  largest multiple of ``m``, ``P(reject) < 2^−s``.

A sampler call takes one share of δ_t (:meth:`geodp.work.FixedWork.next_delta`), times e^−ε for
the ε of the release the noise serves (a truncated tail costs e^ε times its probability: the
lemma of §15), and splits it equally over every capped event of every sample (a public count,
union bound). Any cap exceeded in a loop the default algorithm would have run raises
:class:`~geodp.work.NoAcceptance` after the call's whole fixed work.

Bernoulli(num/(den·k)) is the default's coin (a uniform below den·k, compared with num) while
den·C fits in 63 bits, else Bernoulli(num/den) ∧ Bernoulli(1/k) (same law); Bernoulli(1/k) alone
is ``w mod k == 0`` for ``w`` uniform below lcm(1, …, C). The moduli never depend on the noise.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction
from functools import lru_cache

import numpy as np

from geodp.errors import InvalidParameterError
from geodp.work import NoAcceptance, count, fixed_proposals, fixed_work

__all__ = ["fixed_discrete_gaussian", "fixed_discrete_laplace", "gaussian_acceptance_floor"]

_INT64_BOUND = 2**63 - 1
_TRIAL_RATE = 1.0 - math.exp(-1.0)  # E exp(−u/den) over u uniform below den ≥ ∫₀¹ e^−x dx


@dataclass(frozen=True)
class _Caps:
    coins: int  # C: coins of one Bernoulli(exp(−γ)), γ ≤ 1
    run: int  # U: unit coins of a run of Bernoulli(exp(−1)) successes
    trials: int  # the geometric's trials
    proposals: int  # the outer rejection's proposals
    extra_bits: int  # s: spare bits of a uniform below a modulus past 2^63
    eta: float  # each capped event's failure probability

    @property
    def lcm(self) -> int:
        return math.lcm(*range(1, self.coins + 1))


def _caps_at(eta: float, rate: float) -> _Caps:
    log_inv = math.log(1.0 / eta)
    coins = 1
    while math.lgamma(coins + 1) < log_inv:  # 1/C! ≤ η
        coins += 1
    return _Caps(
        coins=coins,
        run=math.ceil(log_inv),  # e^−U ≤ η
        trials=fixed_proposals(_TRIAL_RATE, 1, eta),
        proposals=fixed_proposals(rate, 1, eta),
        extra_bits=math.ceil(log_inv / math.log(2.0)),  # 2^−s ≤ η
        eta=eta,
    )


def _events(caps: _Caps, gaussian: bool, big: tuple[bool, bool]) -> int:
    """The capped events of one sample (union bound): geometric trials, their coins, the unit run
    and its coins, per proposal; the Gaussian's acceptance coin; big-modulus uniforms."""
    geometric = 1 + caps.trials + 1 + caps.run + (caps.trials * (1 + caps.coins) if big[0] else 0)
    accept = (1 + caps.run + 1 + (caps.coins if big[1] else 0)) if gaussian else 0
    return 1 + caps.proposals * (geometric + accept)


@lru_cache(maxsize=256)
def _caps(share: float, rate: float, gaussian: bool, big: tuple[bool, bool]) -> _Caps:
    """The caps whose events, each failing with probability ``eta``, fail below ``share`` in all."""
    budgeted = 1  # the number of events η was divided among (integers: no rounding in the test)
    while True:
        eta = share / budgeted * (1.0 - 1e-12)
        caps = _caps_at(eta, rate)
        events = _events(caps, gaussian, big)
        if events <= budgeted:
            return caps
        budgeted = events


def _uniforms(m: int, shape: tuple, rng, caps: _Caps):
    """Uniform integers below ``m`` (public), exactly: int64 array by ``rng.integers``, or for
    ``m > 2^63 − 1`` an object array from one ``rng.bytes`` call, with a failure mask (one round
    of rejection keeping the largest multiple of m below 2^(64L))."""
    if m <= _INT64_BOUND:
        return rng.integers(0, m, size=shape), np.zeros(shape, dtype=bool)
    limbs = -(-(m.bit_length() + caps.extra_bits) // 64)
    size = math.prod(shape)
    words = np.frombuffer(rng.bytes(8 * limbs * size), dtype="<u8").reshape(size, limbs)
    value = words[:, 0].astype(object)
    for j in range(1, limbs):
        value = (value << 64) | words[:, j].astype(object)
    top = (2 ** (64 * limbs) // m) * m
    failed = (value >= top).astype(bool)
    return (value % m).reshape(shape), failed.reshape(shape)


def _bernoulli_exp(num, den: int, shape: tuple, rng, caps: _Caps):
    """Bernoulli(exp(−num/den)) for num ≤ den (``num=None``: γ = 1), C coins each:
    (success, cap exceeded or a uniform rejected)."""
    k = np.arange(1, caps.coins + 1)
    failed = np.zeros(shape + (caps.coins,), dtype=bool)
    if num is not None and den * caps.coins <= _INT64_BOUND:  # the default's coin: uniform below den·k
        coin = (rng.integers(0, den * k, size=shape + (caps.coins,)) < np.asarray(num)[..., None]).astype(bool)
    else:
        coin = rng.integers(0, caps.lcm, size=shape + (caps.coins,)) % k == 0  # Bernoulli(1/k)
    if num is not None and den * caps.coins > _INT64_BOUND:  # ∧ Bernoulli(num/den)
        v, failed = _uniforms(den, shape + (caps.coins,), rng, caps)
        coin &= (v < np.asarray(num)[..., None]).astype(bool)
    first_false = np.argmin(coin, axis=-1)  # K − 1 (0 when every coin is 1: the cap)
    used = np.arange(caps.coins) <= first_false[..., None]
    return first_false % 2 == 0, coin.all(axis=-1) | (failed & used).any(axis=-1)


def _run(shape: tuple, rng, caps: _Caps, stop):
    """A run of Bernoulli(exp(−1)) unit coins that the default stops at its first failure or after
    ``stop`` coins (an int array; above ``run``: only a failure stops it). Returns the number of
    leading successes (capped at ``run``), whether the run reached ``stop`` and the failure mask."""
    success, cap = _bernoulli_exp(None, 1, shape + (caps.run,), rng, caps)
    leading = np.where(success.all(axis=-1), caps.run, np.argmin(success, axis=-1))
    stop = np.minimum(stop, caps.run + 1)
    used = np.arange(caps.run) < np.minimum(leading + 1, stop)[..., None]
    failed = (cap & used).any(axis=-1) | ((leading == caps.run) & (stop > caps.run))
    return leading, leading >= stop, failed


def _geometric(num: int, den: int, shape: tuple, rng, caps: _Caps):
    """Geometric(1 − exp(−num/den)) (CKS20 Alg. 2's inner part), fixed work: (value, failed)."""
    u, u_failed = _uniforms(den, shape + (caps.trials,), rng, caps)
    accepted, trial_failed = _bernoulli_exp(u, den, shape + (caps.trials,), rng, caps)
    first = np.argmax(accepted, axis=-1)
    used = np.arange(caps.trials) <= first[..., None]
    failed = ~accepted.any(axis=-1) | ((trial_failed | u_failed) & used).any(axis=-1)
    u_star = np.take_along_axis(u, first[..., None], axis=-1)[..., 0].astype(object)
    v, _, run_failed = _run(shape, rng, caps, np.full(shape, caps.run + 1))
    return (v.astype(object) * den + u_star) // num, failed | run_failed


def _first_accepted(values, accepted, failed, caps: _Caps):
    """The first accepted proposal of each sample, and whether any sample accepted none or failed
    in a proposal the default would have run."""
    first = np.argmax(accepted, axis=-1)
    used = np.arange(caps.proposals) <= first[..., None]
    failed = (~accepted.any(axis=-1) | (failed & used).any(axis=-1)).any()
    return np.take_along_axis(values, first[..., None], axis=-1)[..., 0], bool(failed)


_CHUNK_COINS = 2**20  # coins drawn at once: bounds the arrays (object ints on the byte path)


def _in_chunks(one_chunk, n: int, caps: _Caps) -> np.ndarray:
    """``one_chunk(m)`` over chunks of samples (a public split); NoAcceptance after all the work
    if any failed."""
    count("discrete samples", n)
    size = max(1, _CHUNK_COINS // (caps.proposals * (caps.trials + 2 * caps.run) * caps.coins))
    parts = [one_chunk(min(size, n - start)) for start in range(0, n, size)]
    if any(failed for _, failed in parts):
        raise NoAcceptance
    return np.concatenate([values for values, _ in parts])


def _signed(n: int, scale: Fraction, rng, caps: _Caps):
    """Proposals of the discrete Laplace: (value, valid = not "−0", failed), shape (n, proposals)."""
    shape = (n, caps.proposals)
    negative = rng.integers(0, 2, size=shape) < 1
    magnitude, failed = _geometric(scale.denominator, scale.numerator, shape, rng, caps)
    zero = (magnitude == 0).astype(bool)
    return np.where(negative, -magnitude, magnitude), ~(negative & zero), failed


_LARGEST_EPSILON = 600.0  # e^−ε·δ_t share stays a normal float64


def _share(epsilon: float) -> float:
    if not 0.0 <= float(epsilon) <= _LARGEST_EPSILON:
        raise InvalidParameterError(
            f"timing-safe exact discrete noise needs 0 <= epsilon <= {_LARGEST_EPSILON:g}, got {epsilon!r}."
        )
    return fixed_work().next_delta() * math.exp(-float(epsilon))


def fixed_discrete_laplace(scale: Fraction, n: int, rng, epsilon: float = 0.0) -> np.ndarray:
    """``n`` exact discrete Laplace draws (scale ``scale``) with fixed public work; call inside
    :func:`geodp.work.fixed_work_section`.

    Examples
    --------
    >>> from fractions import Fraction
    >>> from geodp.work import fixed_work_section
    >>> with fixed_work_section(1e-10):
    ...     x = fixed_discrete_laplace(Fraction(3), 200, np.random.default_rng(0))
    >>> q = np.exp(-1/3)  # E|X| = 2q/(1 − q²)
    >>> bool(abs(np.abs(x.astype(float)).mean() - 2 * q / (1 - q**2)) < 0.6)
    True
    """
    big = (scale.numerator > _INT64_BOUND, False)
    caps = _caps(_share(epsilon) / n, 0.5, False, big)

    def one_chunk(m):
        return _first_accepted(*_signed(m, scale, rng, caps), caps)

    return _in_chunks(one_chunk, n, caps)


def gaussian_acceptance_floor(sigma2: Fraction) -> float:
    """A proven lower bound on the probability that one proposal of CKS20 Alg. 3 (a discrete
    Laplace draw of scale t = ⌊σ⌋ + 1, "−0" included, then the acceptance coin) is accepted:
    ``½(1 − e^−1/t)·e^−σ²/(2t²)·Σ_y e^−y²/(2σ²) ≥ ½(1 − e^−1/t)·e^−σ²/(2t²)·√(2πσ²)`` (Poisson
    summation), less a relative 10⁻⁹ for rounding.

    Examples
    --------
    >>> round(gaussian_acceptance_floor(Fraction(400)), 3)
    0.741
    """
    t = math.isqrt(sigma2.numerator // sigma2.denominator) + 1
    s2 = float(sigma2)
    return 0.5 * -math.expm1(-1.0 / t) * math.exp(-s2 / (2.0 * t * t)) * math.sqrt(2.0 * math.pi * s2) * (1 - 1e-9)


def fixed_discrete_gaussian(sigma2: Fraction, n: int, rng, epsilon: float = 0.0) -> np.ndarray:
    """``n`` exact discrete Gaussian draws (parameter σ²) with fixed public work; call inside
    :func:`geodp.work.fixed_work_section`. The default's nested loops (a discrete Laplace loop
    inside the acceptance loop) run as one loop over (sign, magnitude, coin) proposals, accepted
    when not "−0" and the coin is 1: the same coins in the same order, one fixed count.

    Examples
    --------
    >>> from fractions import Fraction
    >>> from geodp.work import fixed_work_section
    >>> with fixed_work_section(1e-10):
    ...     x = fixed_discrete_gaussian(Fraction(16), 200, np.random.default_rng(0))
    >>> bool(abs(x.astype(float).std() - 4.0) < 0.6)
    True
    """
    a, b = sigma2.numerator, sigma2.denominator
    t = math.isqrt(a // b) + 1
    den = 2 * a * b * t * t
    caps = _caps(_share(epsilon) / n, gaussian_acceptance_floor(sigma2), True, (False, den > _INT64_BOUND))
    return _in_chunks(lambda m: _gaussian_chunk(m, a, b, t, rng, caps), n, caps)


def _gaussian_chunk(n: int, a: int, b: int, t: int, rng, caps: _Caps):
    y, valid, failed = _signed(n, Fraction(t), rng, caps)
    # accept with exp(−γ), γ = (|y|·b·t − a)²/(2abt²): ⌈γ⌉ − 1 unit coins (the default's "while
    # num > den"), then Bernoulli(exp(−(γ − units)))
    den = 2 * a * b * t * t
    num = (np.abs(y) * (b * t) - a) ** 2
    units = np.where((num > den).astype(bool), (num - 1) // den, 0)
    _, run_reached, run_failed = _run(y.shape, rng, caps, np.minimum(units, caps.run + 1).astype(np.int64))
    frac_ok, frac_failed = _bernoulli_exp(num - units * den, den, y.shape, rng, caps)
    accept = valid & run_reached & frac_ok
    failed |= valid & (run_failed | (run_reached & frac_failed))
    return _first_accepted(y, accept, failed, caps)
