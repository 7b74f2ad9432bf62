"""Error-code adjustments shared by the transactional APIs."""

from ..errors import ErrorCode

PRODUCER_FENCED_VERSION = 2  # AddPartitionsToTxn, AddOffsetsToTxn, EndTxn: v0-1 know only INVALID_PRODUCER_EPOCH


def for_version(code: ErrorCode, version: int) -> ErrorCode:
    if code == ErrorCode.producer_fenced and version < PRODUCER_FENCED_VERSION:
        return ErrorCode.invalid_producer_epoch
    return code
