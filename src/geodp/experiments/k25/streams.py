"""One computation for the K25 items that share a random stream (k25-fig2/fig3)."""

from __future__ import annotations

__all__ = ["shared_stream"]

_MEMO: dict = {}


def shared_stream(draw):
    """Items drawn by one run share a random stream (k25-fig2/fig3): within one
    process the second reads the first's result (keyed by the generator's starting state)."""

    def run(repetitions, rng, progress):
        key = (draw.__name__, repetitions, repr(rng.bit_generator.state))
        if key not in _MEMO:
            _MEMO.clear()
            _MEMO[key] = draw(repetitions, rng, progress)
        return _MEMO[key]

    return run
