"""Write tests/slow_tests.txt from a ``pytest --durations=0`` log: every test whose setup, call
and teardown take 0.5 s or more on the machine that ran it (conftest.py marks them ``slow``).

    python -m pytest -q --durations=0 > durations.log; python tests/mark_slow.py durations.log [more.log ...]
"""

import collections
import pathlib
import re
import sys

THRESHOLD = 0.5  # seconds


def main(*logs: str) -> None:
    seconds = collections.defaultdict(float)  # the largest time of a test over the logs
    for log in logs:
        per_log = collections.defaultdict(float)
        for line in pathlib.Path(log).read_text(encoding="utf-8").splitlines():
            match = re.match(r"\s*([\d.]+)s (call|setup|teardown)\s+(\S.*?)\s*$", line)
            if match:
                per_log[match.group(3)] += float(match.group(1))
        for node, value in per_log.items():
            seconds[node] = max(seconds[node], value)
    slow = sorted(node for node, s in seconds.items() if s >= THRESHOLD)
    header = f"# tests taking >= {THRESHOLD} s (python tests/mark_slow.py on a --durations=0 log)\n"
    target = pathlib.Path(__file__).with_name("slow_tests.txt")
    target.write_text(header + "".join(f"{node}\n" for node in slow), encoding="utf-8")
    print(f"{len(slow)} slow tests of {len(seconds)} timed, written to {target.name}")


if __name__ == "__main__":
    main(*sys.argv[1:])
