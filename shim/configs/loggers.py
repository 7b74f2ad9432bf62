"""BROKER_LOGGER resources: the broker's Python loggers under log4j's level names (Kafka:
LoggingController, RuntimeLoggerManager)."""

from __future__ import annotations

import logging

from ..errors import ErrorCode, KafkaError

ROOT = "root"
VALID_LEVELS = ("FATAL", "ERROR", "WARN", "INFO", "DEBUG", "TRACE")  # Kafka: LogLevelConfig.VALID_LOG_LEVELS
_TO_PYTHON = {"FATAL": logging.CRITICAL, "ERROR": logging.ERROR, "WARN": logging.WARNING, "INFO": logging.INFO,
              "DEBUG": logging.DEBUG, "TRACE": 5}
_FROM_PYTHON = {v: k for k, v in _TO_PYTHON.items()}
SET, DELETE, APPEND, SUBTRACT = 0, 1, 2, 3
_OP_NAMES = {APPEND: "APPEND", SUBTRACT: "SUBTRACT"}
# String.join(", ", LogLevelConfig.VALID_LOG_LEVELS): the iteration order of Java's HashSet of them
VALID_LEVELS_STRING = "TRACE, ERROR, INFO, FATAL, DEBUG, WARN"


def _logger(name: str) -> logging.Logger:
    return logging.getLogger() if name == ROOT else logging.getLogger(name)


def levels() -> dict[str, str]:
    names = [n for n, lg in logging.root.manager.loggerDict.items() if isinstance(lg, logging.Logger)]
    return {n: _level_name(_logger(n).getEffectiveLevel()) for n in [ROOT, *names]}


def _level_name(level: int) -> str:
    return _FROM_PYTHON.get(level) or next((v for k, v in sorted(_FROM_PYTHON.items()) if k >= level), "FATAL")


def validate(changes: list[tuple[str, int, str | None]]) -> None:
    """Kafka: RuntimeLoggerManager.validateLogLevelConfigs, its checks in its order."""
    known = levels()
    for name, op, value in changes:
        if op in (APPEND, SUBTRACT):
            raise KafkaError(ErrorCode.invalid_request,
                             f"{_OP_NAMES[op]} operation is not allowed for the BROKER_LOGGER resource")
        if op not in (SET, DELETE):
            raise KafkaError(ErrorCode.invalid_request,
                             f"Unknown operation type {op} is not allowed for the BROKER_LOGGER resource")
        if name not in known:
            raise KafkaError(ErrorCode.invalid_config, f"Logger {name} does not exist!")
        if op == SET and value not in VALID_LEVELS:
            raise KafkaError(ErrorCode.invalid_config, f"Cannot set the log level of {name} to {value} as it is "
                             f"not a supported log level. Valid log levels are {VALID_LEVELS_STRING}")
        if op == DELETE and name == ROOT:
            raise KafkaError(ErrorCode.invalid_request, "Removing the log level of the root logger is not allowed")


def apply(changes: list[tuple[str, int, str | None]]) -> None:
    for name, op, value in changes:
        # DELETE: back to the parent's level, as log4j's unset level inherits it
        _logger(name).setLevel(_TO_PYTHON[value] if op == SET else logging.NOTSET)
