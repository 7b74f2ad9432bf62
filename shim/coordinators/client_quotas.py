"""Client quotas: the entities and their values, as Kafka's controller keeps them
(ClientQuotaControlManager) and its brokers describe them (ClientQuotasImage.describe).

An entity maps entity types (``user``, ``client-id``, ``ip``) to a name, or to None for the
type's default entity. Values live in ``<data-dir>/__cluster_metadata/client-quotas.json``,
written whole and atomically before AlterClientQuotas answers, so they survive a restart.
"""

from __future__ import annotations

import asyncio
import ipaddress
import json
from pathlib import Path

from ..errors import ErrorCode, KafkaError
from ..storage import fs

USER, CLIENT_ID, IP = "user", "client-id", "ip"
MATCH_EXACT, MATCH_DEFAULT, MATCH_SPECIFIED = 0, 1, 2

# Kafka: QuotaConfigs.userAndClientQuotaConfigs / ipConfigs -- key -> largest integral value, None for a double
USER_CLIENT_KEYS = {"producer_byte_rate": 2**63 - 1, "consumer_byte_rate": 2**63 - 1,
                    "request_percentage": None, "controller_mutation_rate": None}
IP_KEYS = {"connection_creation_rate": 2**31 - 1}
MAX_ENTITIES = 100_000  # a bound on what clients can make the broker hold (Kafka bounds records per operation)

Entity = frozenset  # of (entity type, name or None)


def entity_of(pairs) -> Entity:
    """The entity of a request's (type, name) list; a type named twice keeps its last name, as Java's map does."""
    return Entity(dict(pairs).items())


def java_repr(entity: Entity) -> str:
    inner = ", ".join(f"{t}={n}" for t, n in sorted(entity, key=lambda p: p[0]))
    return f"ClientQuotaEntity(entries={{{inner}}})"


class ClientQuotas:
    def __init__(self, path: Path) -> None:
        self._path = path
        self.entities: dict[Entity, dict[str, float]] = {}
        self._altering = asyncio.Lock()
        if path.exists():
            for e in json.loads(path.read_text())["entities"]:
                self.entities[entity_of((t, n) for t, n in e["entity"])] = dict(e["values"])

    # -- AlterClientQuotas ------------------------------------------------------------------

    async def alter(self, alterations: list[tuple[Entity, list[tuple[str, float | None]]]],
                    validate_only: bool, pace) -> dict[Entity, KafkaError | None]:
        """Kafka: ClientQuotaControlManager.alterClientQuotas -- one result per entity, all changes at
        once. ``pace``, awaited once per entity, gives the loop up; one alteration at a time, as
        Kafka's controller applies them, and the entities as they were until the change is durable."""
        async with self._altering:
            return await self._alter(alterations, validate_only, pace)

    async def _alter(self, alterations, validate_only: bool, pace) -> dict[Entity, KafkaError | None]:
        results: dict[Entity, KafkaError | None] = {}
        changed = {}
        for e, v in self.entities.items():
            await pace()
            changed[e] = dict(v)
        for entity, ops in alterations:
            await pace()
            wanted: dict[str, float | None] = {}
            duplicate = None  # the last key named again: its error built once, not once per repeat
            for key, value in ops:
                if key in wanted:
                    duplicate = key
                else:
                    wanted[key] = value
            if duplicate is not None:
                results[entity] = KafkaError(ErrorCode.invalid_request, f"Duplicate quota key {duplicate} not "
                                             f"updating quota for this entity {java_repr(entity)}")
            if entity in results:
                results[entity] = KafkaError(ErrorCode.invalid_request, f"Ignoring duplicate entity {java_repr(entity)}")
                continue
            try:
                _apply(changed, entity, wanted)
                results[entity] = None
            except KafkaError as e:
                results[entity] = e
        if len(changed) > MAX_ENTITIES:
            return {e: KafkaError(ErrorCode.unknown_server_error, f"more than {MAX_ENTITIES} quota entities")
                    for e in results}
        if not validate_only and changed != self.entities:
            await self._save(changed, pace)
            self.entities = changed
        return results

    async def _save(self, entities: dict[Entity, dict[str, float]], pace) -> None:
        parts = []  # each entity encoded on its own: json.dumps of 45,000 at once held the loop
        for e, v in entities.items():
            await pace()
            parts.append(json.dumps({"entity": sorted(e, key=lambda p: p[0]), "values": v}))
        fs.atomic_write(self._path, f'{{"entities": [{", ".join(parts)}]}}'.encode())

    # -- DescribeClientQuotas ---------------------------------------------------------------

    def describe(self, components: list[tuple[str, int, str | None]], strict: bool) -> list[tuple[Entity, dict]]:
        """Kafka: ClientQuotasImage.describe -- (entity, values) of every entity the filter matches."""
        exact, typed = _filter(components)
        out = []
        for entity, values in self.entities.items():
            names = dict(entity)
            if strict and len(names) != len(exact) + len(typed):
                continue
            if all(t in names and names[t] == n for t, n in exact.items()) and all(t in names for t in typed):
                out.append((entity, dict(values)))
        return out

    def value(self, entity: Entity, key: str) -> float | None:
        return self.entities.get(entity, {}).get(key)


def _apply(entities: dict[Entity, dict[str, float]], entity: Entity, wanted: dict[str, float | None]) -> None:
    keys = _keys_for(entity)
    values = dict(entities.get(entity, {}))
    for key, value in wanted.items():
        if value is None:
            values.pop(key, None)
            continue
        _check_value(keys, key, value)
        values[key] = value
    if values:
        entities[entity] = values
    else:
        entities.pop(entity, None)


def _keys_for(entity: Entity) -> dict[str, int | None]:
    """Kafka: ClientQuotaControlManager.validateEntity and configKeysForEntityType."""
    if not entity:
        raise KafkaError(ErrorCode.invalid_request, "Invalid empty client quota entity")
    names = dict(entity)
    for entity_type, name in names.items():
        if entity_type not in (USER, CLIENT_ID, IP):
            raise KafkaError(ErrorCode.invalid_request, f"Unhandled client quota entity type: {entity_type}")
        if name == "":
            raise KafkaError(ErrorCode.invalid_request, f"Empty {entity_type} not supported")
    if IP in names:
        if len(names) > 1:
            raise KafkaError(ErrorCode.invalid_request, "Invalid quota entity combination, IP entity should"
                             "not be combined with User or ClientId")
        if not _valid_ip(names[IP]):
            raise KafkaError(ErrorCode.invalid_request, f"{names[IP]} is not a valid IP or resolvable host.")
        return IP_KEYS
    return USER_CLIENT_KEYS


def _valid_ip(name: str | None) -> bool:
    """An address literal or the default entity. Kafka also resolves host names; looking one up here
    would block every connection while DNS answers, so names are refused (see README)."""
    if name is None:
        return True
    try:
        ipaddress.ip_address(name)
        return True
    except ValueError:
        return False


def _check_value(keys: dict[str, int | None], key: str, value: float) -> None:
    """Kafka: ClientQuotaControlManager.validateQuotaKeyValue."""
    if key not in keys:
        raise KafkaError(ErrorCode.invalid_request, f"Invalid configuration key {key}")
    if not value > 0.0:
        raise KafkaError(ErrorCode.invalid_request, f"Quota {key} must be greater than 0")
    largest = keys[key]
    if largest is None:
        return
    if value > largest:
        kind = "a LONG" if largest == 2**63 - 1 else "an INT"
        raise KafkaError(ErrorCode.invalid_request, f"Proposed value for {key} is too large for {kind}.")
    if abs(value % 1.0) > 1e-6:
        raise KafkaError(ErrorCode.invalid_request, f"{key} cannot be a fractional value.")


def _filter(components) -> tuple[dict[str, str | None], set[str]]:
    """Kafka: ClientQuotasImage.describe's checks of the filter; (exact matches, types that must be present)."""
    exact: dict[str, str | None] = {}
    typed: set[str] = set()
    for entity_type, match_type, match in components:
        if not entity_type:
            raise KafkaError(ErrorCode.invalid_request, "Invalid empty entity type.")
        if entity_type in exact or entity_type in typed:
            raise KafkaError(ErrorCode.invalid_request,
                             f"Entity type {entity_type} cannot appear more than once in the filter.")
        if entity_type not in (IP, USER, CLIENT_ID):
            raise KafkaError(ErrorCode.unsupported_version, f"Unsupported entity type {entity_type}")
        if match_type == MATCH_EXACT:
            if match is None:
                raise KafkaError(ErrorCode.invalid_request,
                                 "Request specified MATCH_TYPE_EXACT, but set match string to null.")
            exact[entity_type] = match
        elif match_type in (MATCH_DEFAULT, MATCH_SPECIFIED):
            if match is not None:
                name = "MATCH_TYPE_DEFAULT" if match_type == MATCH_DEFAULT else "MATCH_TYPE_SPECIFIED"
                raise KafkaError(ErrorCode.invalid_request, f"Request specified {name}, but also specified a match string.")
            if match_type == MATCH_DEFAULT:
                exact[entity_type] = None
            else:
                typed.add(entity_type)
        else:
            raise KafkaError(ErrorCode.invalid_request, f"Unknown match type {match_type}")
    present = set(exact) | typed
    if IP in present and present & {USER, CLIENT_ID}:
        raise KafkaError(ErrorCode.invalid_request, "Invalid entity filter component combination. IP filter "
                         "component should not be used with user or clientId filter component.")
    return exact, typed
