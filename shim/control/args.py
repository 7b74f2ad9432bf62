"""Typed, validated arguments of the control operations, the same for every front-end.

JSON (HTTP) and keyword (Python) values are checked strictly; the CLI's text goes through
:meth:`Arg.from_text` first. A bad value raises :class:`BadArgument` naming the argument.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..errors import ErrorCode


class ControlError(Exception):
    """An operation refused: ``status`` is the HTTP status the control listener answers with."""

    status = 400

    def __init__(self, message: str, status: int | None = None) -> None:
        super().__init__(message)
        if status is not None:
            self.status = status


class BadArgument(ControlError):
    status = 400


@dataclass(frozen=True)
class Arg:
    name: str
    kind: str  # int | str | bool | choice | api | error
    help: str
    required: bool = False
    default: Any = None
    minimum: int | None = None
    maximum: int | None = None
    choices: tuple[str, ...] = ()

    def check(self, value: Any) -> Any:
        """The value as the operation takes it, or BadArgument."""
        if value is None:
            if self.required:
                raise BadArgument(f"{self.name} is required")
            return self.default
        return getattr(self, f"_check_{self.kind}")(value)

    def from_text(self, text: str) -> Any:
        """The CLI's text as the JSON value the check expects."""
        if self.kind == "int" or (self.kind in ("api", "error") and text.lstrip("-").isdigit()):
            try:
                return int(text)
            except ValueError:
                raise BadArgument(f"{self.name} must be an integer, not {text!r}") from None
        if self.kind == "bool":
            if text.lower() not in ("true", "false", "1", "0", "yes", "no"):
                raise BadArgument(f"{self.name} must be true or false, not {text!r}")
            return text.lower() in ("true", "1", "yes")
        return text

    def _check_int(self, value: Any) -> int:
        if isinstance(value, bool) or not isinstance(value, int):
            raise BadArgument(f"{self.name} must be an integer, not {value!r}")
        if self.minimum is not None and value < self.minimum:
            raise BadArgument(f"{self.name} must be at least {self.minimum}, not {value}")
        if self.maximum is not None and value > self.maximum:
            raise BadArgument(f"{self.name} must be at most {self.maximum}, not {value}")
        return value

    def _check_str(self, value: Any) -> str:
        if not isinstance(value, str):
            raise BadArgument(f"{self.name} must be a string, not {value!r}")
        return value

    def _check_bool(self, value: Any) -> bool:
        if not isinstance(value, bool):
            raise BadArgument(f"{self.name} must be true or false, not {value!r}")
        return value

    def _check_choice(self, value: Any) -> str:
        if value not in self.choices:
            raise BadArgument(f"{self.name} must be one of {', '.join(self.choices)}, not {value!r}")
        return value

    def _check_api(self, value: Any) -> int:
        from ..apis.registry import REGISTRY

        by_name = {s.name.lower(): k for k, s in REGISTRY.items()}
        if isinstance(value, str) and value.lower() in by_name:
            return by_name[value.lower()]
        if isinstance(value, int) and not isinstance(value, bool) and value in REGISTRY:
            return value
        raise BadArgument(f"{self.name} must name an API kafka-shim serves (e.g. Produce, Fetch, EndTxn, "
                          f"or its key), not {value!r}")

    def _check_error(self, value: Any) -> ErrorCode:
        if isinstance(value, str):
            code = ErrorCode.__members__.get(value.lower())
        elif isinstance(value, int) and not isinstance(value, bool):
            code = next((c for c in ErrorCode if c.value == value), None)
        else:
            code = None
        if code is None or code == ErrorCode.none:
            raise BadArgument(f"{self.name} must be a Kafka error name (e.g. NOT_LEADER_OR_FOLLOWER) or code, "
                              f"not {value!r}")
        return code

    def describe(self) -> dict:
        out = {"name": self.name, "type": self.kind, "help": self.help, "required": self.required}
        if not self.required and self.default is not None:
            out["default"] = self.default
        if self.choices:
            out["choices"] = list(self.choices)
        return out


def check_all(args: tuple[Arg, ...], given: dict[str, Any], op: str) -> dict[str, Any]:
    if not isinstance(given, dict):
        raise BadArgument(f"the arguments of {op} must be a JSON object")
    known = {a.name for a in args}
    unknown = sorted(set(given) - known)
    if unknown:
        raise BadArgument(f"{op} has no argument {', '.join(unknown)} (it takes: {', '.join(sorted(known)) or 'none'})")
    return {a.name: a.check(given.get(a.name)) for a in args}
