"""A long fuzzing campaign from the command line:
    python -m fuzz.campaign SEED COUNT [WORKERS]   (from test/python)
prints each failure's shrunk reproducer."""

import sys
import time

from .runner import campaign


def main(argv):
    seed, count = int(argv[1]), int(argv[2])
    workers = int(argv[3]) if len(argv) > 3 else None
    t0 = time.time()
    stats, failures, reports = campaign(seed, count, workers, log=print)
    for r in reports:
        print(r, "\n")
    print(f"worker seconds per program: {stats['seconds'] / count:.2f}")
    print(f"seed {seed}: {stats['ok']} ok, {len(failures)} failed of {count} in "
          f"{time.time() - t0:.0f} s (mean known fraction "
          f"{stats['known'] / max(1, stats['ok']):.2f})")


if __name__ == "__main__":
    main(sys.argv)
