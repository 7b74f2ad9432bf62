"""``python -m shim`` and the ``kafka-shim`` console script."""

import sys


def run() -> int:
    # kio registers hypothesis strategies for its types when hypothesis is importable (a test
    # dependency, so present wherever tests run): a quarter of a second of every start that a
    # kafka-shim process never needs. Blocked here, before the first import of kio, and only in
    # a process that is kafka-shim itself.
    if "hypothesis" not in sys.modules:
        sys.modules["hypothesis"] = None  # type: ignore[assignment]
    from .cli import main

    return main()


if __name__ == "__main__":
    sys.exit(run())
