"""Byte-rate quotas enforced as Kafka's ClientQuotaManager enforces them.

A client's bytes (a Produce request's size, a Fetch response's records) are recorded in a sampled
rate (Kafka's Rate over a WindowedSum: ``quota.window.num`` samples of ``quota.window.size.seconds``);
when the rate passes the quota, the throttle time is the delay that brings it back under
(QuotaUtils.throttleTime: (observed - quota) / quota * window). The caller answers with that
``throttle_time_ms`` and does not read the connection's next request for as long (the muted channel).

Which quota applies, and which clients share a rate, follows Kafka's DefaultQuotaCallback: the most
specific of user+client-id, user+default client, user, default user+client-id, default
user+default client, default user, client-id, default client-id. Without SASL every client is the
user ``ANONYMOUS``. Nothing here reads the clock: every call takes ``now_ms``.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from .client_quotas import CLIENT_ID, USER, ClientQuotas, Entity

ANONYMOUS = "ANONYMOUS"
MAX_SENSORS = 10_000
MAX_THROTTLE_MS = 2**31 - 1  # rates of distinct (user, client-id) tags kept; Kafka expires idle sensors after an hour


@dataclass(slots=True)
class _Sample:
    start_ms: int
    last_event_ms: int
    value: float = 0.0


@dataclass(slots=True)
class Rate:
    """Kafka's Rate(WindowedSum) with ``samples`` windows of ``window_ms`` (SampledStat, Rate.windowSize)."""

    samples: int
    window_ms: int
    _samples: list[_Sample] = field(default_factory=list)
    _current: int = 0

    def record(self, value: float, now_ms: int) -> None:
        if not self._samples:
            self._samples.append(_Sample(now_ms, now_ms))
        sample = self._samples[self._current]
        if now_ms - sample.start_ms >= self.window_ms:
            sample = self._advance(now_ms)
        sample.value += value
        sample.last_event_ms = now_ms

    def _advance(self, now_ms: int) -> _Sample:
        self._current = (self._current + 1) % (self.samples + 1)  # one extra for the overlapping sample
        if self._current >= len(self._samples):
            self._samples.append(_Sample(now_ms, now_ms))
        else:
            s = self._samples[self._current]
            s.start_ms, s.last_event_ms, s.value = now_ms, now_ms, 0.0
        return self._samples[self._current]

    def _purge(self, now_ms: int) -> None:
        expire = self.samples * self.window_ms
        for s in self._samples:
            if now_ms - s.last_event_ms >= expire:
                s.start_ms, s.last_event_ms, s.value = now_ms, now_ms, 0.0

    def window_size_ms(self, now_ms: int) -> int:
        self._purge(now_ms)
        if not self._samples:
            self._samples.append(_Sample(now_ms, now_ms))
        elapsed = now_ms - min(s.start_ms for s in self._samples)
        full = elapsed // self.window_ms
        if full < self.samples - 1:
            elapsed += (self.samples - 1 - full) * self.window_ms
        return max(elapsed, 1)

    def measure(self, now_ms: int) -> float:
        """Per second."""
        window = self.window_size_ms(now_ms)
        return sum(s.value for s in self._samples) / (window / 1000)


def throttle_time_ms(rate: Rate, bound: float, now_ms: int) -> int:
    """Kafka: QuotaUtils.throttleTime, 0 when the rate is within the quota (Quota.acceptable)."""
    observed = rate.measure(now_ms)
    if observed <= bound:
        return 0
    # throttle_time_ms is an int32 on the wire (Kafka's .toInt would wrap a larger value)
    return min(round((observed - bound) / bound * rate.window_size_ms(now_ms)), MAX_THROTTLE_MS)


def _entity(user, client_id) -> Entity:
    pairs = []
    if user is not False:
        pairs.append((USER, user))
    if client_id is not False:
        pairs.append((CLIENT_ID, client_id))
    return Entity(pairs)


class ByteRateQuota:
    """One quota type (``producer_byte_rate`` or ``consumer_byte_rate``) over the stored quotas."""

    def __init__(self, quotas: ClientQuotas, key: str, samples: int = 11, window_ms: int = 1000) -> None:
        self.quotas, self.key = quotas, key
        self.samples, self.window_ms = samples, window_ms
        self._rates: dict[tuple[str, str], Rate] = {}

    @property
    def active(self) -> bool:
        """Whether any quota is stored: without one, :meth:`record` records nothing and returns 0."""
        return bool(self.quotas.entities)

    def record(self, client_id: str | None, value: float, now_ms: int, user: str = ANONYMOUS) -> int:
        """Record ``value`` bytes for this client; the throttle time in ms (0 within the quota)."""
        if not self.quotas.entities:
            return 0
        # A changed quota applies to the rate measured so far (Kafka: updateQuotaMetricConfigs)
        tags = self._tags(user, client_id or "")
        bound = self._bound(*tags)
        if bound is None:
            return 0
        rate = self._rates.get(tags)
        if rate is None:
            if len(self._rates) >= MAX_SENSORS:
                self._rates.pop(next(iter(self._rates)))
            rate = self._rates[tags] = Rate(self.samples, self.window_ms)
        rate.record(value, now_ms)
        return throttle_time_ms(rate, bound, now_ms)

    def window_bytes(self, client_id: str | None, user: str = ANONYMOUS) -> float:
        """Kafka: ClientQuotaManager.getMaxValueInQuotaWindow -- what the quota allows over the window
        less one sample (infinite without a quota): an answer capped to it can be sent unthrottled."""
        bound = self._bound(*self._tags(user, client_id or "")) if self.quotas.entities else None
        return float("inf") if bound is None else bound * (self.samples - 1) * self.window_ms / 1000

    def unrecord(self, client_id: str | None, value: float, now_ms: int, user: str = ANONYMOUS) -> None:
        """Kafka: ClientQuotaManager.unrecordQuotaSensor -- a throttled Fetch returns nothing."""
        rate = self._rates.get(self._tags(user, client_id or ""))
        if rate is not None:
            rate.record(-value, now_ms)

    def _has(self, user, client_id) -> bool:
        return self.quotas.value(_entity(user, client_id), self.key) is not None

    def _tags(self, user: str, client_id: str) -> tuple[str, str]:
        """Kafka: DefaultQuotaCallback.quotaMetricTags -- which clients share one rate."""
        if self._has(user, client_id) or self._has(user, None):
            return user, client_id
        if self._has(user, False):
            return user, ""
        if self._has(None, client_id) or self._has(None, None):
            return user, client_id
        if self._has(None, False):
            return user, ""
        return "", client_id

    def _bound(self, user: str, client_id: str) -> float | None:
        """Kafka: DefaultQuotaCallback.quotaLimit for the tags."""
        if user and client_id:
            order = [(user, client_id), (user, None), (None, client_id), (None, None)]
        elif user:
            order = [(user, False), (None, False)]
        elif client_id:
            order = [(False, client_id), (False, None)]
        else:
            return None
        for u, c in order:
            found = self.quotas.value(_entity(u, c), self.key)
            if found is not None:
                return found
        return None
