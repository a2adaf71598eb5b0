"""The cryptographically secure random generator behind ``random_state="secure"`` (docs/secure.md).

A :class:`SecureGenerator` is a :class:`numpy.random.Generator` over the ChaCha20 stream cipher
(``randomgen.ChaCha``, 20 rounds) keyed with 256 bits from the operating system
(:func:`secrets.randbits`). Every sampler of geodp keeps working unchanged on it (same laws); on
flat spaces the mechanisms also switch to the exact discrete constructions of
:mod:`geodp.mechanisms.grid`. A secure generator cannot be seeded: it has no seed argument,
refuses a new state, and a copy (``copy.deepcopy``, pickling, ``spawn`` of the generator or of
its bit generator) is a fresh generator with a fresh key from the OS, never a replay of the
stream nor a key derived from anything visible.

**Secret:** ``bit_generator.state`` (readable, not settable) holds the ChaCha key and counter:
whoever reads it can replay every later draw and so strip the noise from a release. Never log,
print or publish it, nor pickle the bit generator by hand.

It is the default: ``random_state=None`` (and ``rng=None``) means secure mode. The bit generator
comes from ``randomgen`` (a core dependency since secure mode became the default); an
installation without it raises :class:`MissingDependencyError` when asked for secure mode.
"""

from __future__ import annotations

import secrets

import numpy as np

from geodp.errors import InvalidParameterError, MissingDependencyError, missing_extra

__all__ = ["SECURE", "SecureGenerator", "is_secure", "secure_generator"]

SECURE = "secure"
_KEY_BITS = 256
_ROUNDS = 20


def _chacha_class():
    try:
        from randomgen import ChaCha
    except ImportError:
        raise MissingDependencyError(
            "secure mode (random_state=None or 'secure') needs the package randomgen (a ChaCha20 bit "
            f"generator for numpy): {missing_extra('secure')}; pass a seed for a non-secure run."
        ) from None
    return ChaCha


class SecureGenerator(np.random.Generator):
    """A numpy Generator drawing from ChaCha20 keyed with 256 fresh bits from the OS.

    It takes no seed. Use it wherever geodp accepts ``rng``/``random_state`` (or pass the string
    ``"secure"``, which makes a new one).

    Raises
    ------
    MissingDependencyError
        The optional package ``randomgen`` is not installed.

    Examples
    --------
    >>> g = SecureGenerator()
    >>> isinstance(g, np.random.Generator), 0 <= int(g.integers(0, 10)) < 10
    (True, True)
    >>> g.bit_generator.seed(0)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    geodp.errors.InvalidParameterError: a secure generator cannot be seeded or given a state; use a new ...
    """

    def __init__(self):
        chacha = _chacha_class()
        bit_generator = _unseedable(chacha)(key=secrets.randbits(_KEY_BITS), counter=0, rounds=_ROUNDS)
        super().__init__(bit_generator)

    def spawn(self, n_children: int) -> list[SecureGenerator]:
        """``n_children`` independent secure generators, each with its own fresh OS key."""
        return [SecureGenerator() for _ in range(int(n_children))]

    def __reduce__(self):
        # A copy must not replay the stream (the noise would repeat): it is a fresh generator.
        return (SecureGenerator, ())

    def __deepcopy__(self, memo):
        return SecureGenerator()

    def __repr__(self) -> str:
        return "SecureGenerator(ChaCha20, 256-bit OS key)"


_UNSEEDABLE = {}


def _refuse_seed(*args, **kwargs):
    raise InvalidParameterError(
        "a secure generator cannot be seeded or given a state; use a new SecureGenerator() "
        "(or rng=0 for a reproducible, non-secure run)."
    )


def _unseedable(chacha):
    """ChaCha whose ``seed`` (after keying) and ``state`` setter refuse (built once per class)."""
    if chacha not in _UNSEEDABLE:

        def __init__(self, **kwargs):
            chacha.__init__(self, **kwargs)  # keys the stream through seed(): allowed once
            self._keyed = True

        def seed(self, *args, **kwargs):
            if getattr(self, "_keyed", False):
                _refuse_seed()
            return chacha.seed(self, *args, **kwargs)

        def spawn(self, n_children):
            # randomgen's spawn keys children from the visible seed_seq (OS entropy, but not the
            # ChaCha key and readable by anyone holding the generator): key each from fresh OS bits.
            cls = type(self)
            return [cls(key=secrets.randbits(_KEY_BITS), counter=0, rounds=_ROUNDS) for _ in range(int(n_children))]

        _UNSEEDABLE[chacha] = type(
            "UnseedableChaCha",
            (chacha,),
            {"__init__": __init__, "seed": seed, "spawn": spawn, "state": property(chacha.state.__get__, _refuse_seed)},
        )
    return _UNSEEDABLE[chacha]


def secure_generator() -> SecureGenerator:
    """A new :class:`SecureGenerator` (what ``random_state="secure"`` gives).

    Examples
    --------
    >>> a, b = secure_generator(), secure_generator()
    >>> bool(a.integers(0, 2**62) != b.integers(0, 2**62))
    True
    """
    return SecureGenerator()


def is_secure(rng) -> bool:
    """Whether ``rng`` asks for secure mode: ``None`` (the default: an unseeded release is
    floating-point safe wherever a construction exists), the string ``"secure"`` or a
    :class:`SecureGenerator`. A seed or a seeded numpy Generator keeps the fast floating-point
    path (tests and reproductions), and its guarantee says ``floating_point_safe: False``.

    Examples
    --------
    >>> is_secure("secure"), is_secure(0), is_secure(None)
    (True, False, True)
    """
    return rng is None or isinstance(rng, SecureGenerator) or (isinstance(rng, str) and rng == SECURE)
