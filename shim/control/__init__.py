"""The control plane: faults, crash points, a request log and coordinator levers, one operations
table (shim.control.ops) behind three front-ends -- Python (``broker.control``), HTTP/JSON
(``kafka-shim serve --control-listen``) and the CLI (``kafka-shim ctl``). README.md, Fault injection.
"""

from .args import BadArgument, ControlError
from .plane import CRASH_EXIT_CODE, CRASH_POINTS, Control

__all__ = ["BadArgument", "Control", "ControlError", "CRASH_EXIT_CODE", "CRASH_POINTS"]
