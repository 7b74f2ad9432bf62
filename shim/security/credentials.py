"""Who may authenticate: PLAIN users and SCRAM credentials.

Users given in the configuration (``sasl_users``, ``name:password``) authenticate with PLAIN (as
Kafka's ``user_<name>="<password>"`` JAAS entries) and with both SCRAM mechanisms (as
``kafka-storage format --add-scram``); their SCRAM credentials are salted in memory at start-up.
Credentials set with AlterUserScramCredentials are durable in ``__cluster_metadata/scram-credentials.json``
(salted, never the password) and take precedence over the configured ones.
"""

from __future__ import annotations

import asyncio
import hmac
import json
import re
from pathlib import Path

from ..errors import ErrorCode
from ..storage import fs
from .scram import HASHES, MAX_ITERATIONS, MIN_ITERATIONS, ScramCredential, credential_from_salted, make_credential

FILE_NAME = "scram-credentials.json"
MECHANISM_TYPES = {1: "SCRAM-SHA-256", 2: "SCRAM-SHA-512"}  # Kafka: org.apache.kafka.clients.admin.ScramMechanism
TYPE_OF = {name: kind for kind, name in MECHANISM_TYPES.items()}


_JAAS_USER = re.compile(r'user_([^=\s"]+)\s*=\s*"([^"]*)"')


def plain_jaas_users(jaas: str) -> dict[str, str]:
    """The ``user_NAME="PASSWORD"`` entries of a PlainLoginModule JAAS configuration (Kafka's
    ``listener.name.<listener>.plain.sasl.jaas.config``): PLAIN users only, as in Kafka."""
    if not jaas.strip():
        return {}
    if "PlainLoginModule" not in jaas:
        raise ValueError("plain.sasl.jaas.config must configure org.apache.kafka.common.security.plain.PlainLoginModule")
    return dict(_JAAS_USER.findall(jaas))


def parse_user(spec: str) -> tuple[str, str]:
    name, sep, password = spec.partition(":")
    if not sep or not name or not password:
        raise ValueError(f"a SASL user is name:password, not {spec!r}")
    return name, password


class CredentialStore:
    def __init__(self, meta_dir: Path, users: tuple[str, ...] = (), iterations: int = 4096,
                 plain_jaas: str = "") -> None:
        self.path = meta_dir / FILE_NAME
        configured = dict(parse_user(u) for u in users)
        self.plain = {**plain_jaas_users(plain_jaas), **configured}
        self.configured = {(m, name): make_credential(m, pw, iterations)
                           for name, pw in configured.items() for m in HASHES}
        self.stored: dict[tuple[str, str], ScramCredential] = {}
        self._altering = asyncio.Lock()
        if self.path.exists():
            for entry in json.loads(self.path.read_bytes()):
                self.stored[(entry["mechanism"], entry["user"])] = ScramCredential.from_json(entry)

    def verify_plain(self, user: str, password: str) -> bool:
        expected = self.plain.get(user)
        return expected is not None and hmac.compare_digest(expected.encode(), password.encode())

    def scram(self, mechanism: str, user: str) -> ScramCredential | None:
        key = (mechanism, user)
        return self.stored.get(key) or self.configured.get(key)

    def users(self) -> dict[str, list[tuple[str, int]]]:
        """user -> [(mechanism, iterations)] of every SCRAM credential, stored or configured."""
        out: dict[str, list[tuple[str, int]]] = {}
        for (mechanism, user), cred in sorted({**self.configured, **self.stored}.items()):
            out.setdefault(user, []).append((mechanism, cred.iterations))
        return out

    async def describe(self, users: list[str] | None, pace) -> list[tuple[str, ErrorCode, str | None, list]]:
        """DescribeUserScramCredentials as Kafka's ScramImage.describe answers it:
        (user, error_code, error_message, [(mechanism type, iterations)]), of the credentials known
        when it began. ``pace``, awaited once per user named and once per result, gives the loop up
        (shim.apis._pace.Pacer)."""
        known = self.users()
        counts: dict[str, int] = {}
        for user in (users if users else known):
            await pace()
            counts[user] = counts.get(user, 0) + 1
        out = []
        for user, count in counts.items():
            await pace()
            if count > 1:
                out.append((user, ErrorCode.duplicate_resource,
                            f"Cannot describe SCRAM credentials for the same user twice in a single request: {user}", []))
            elif user not in known:
                out.append((user, ErrorCode.resource_not_found,
                            f"Attempt to describe a user credential that does not exist: {user}", []))
            else:
                out.append((user, ErrorCode.none, None, [(TYPE_OF[m], i) for m, i in known[user]]))
        return out

    async def alter(self, deletions: list[tuple[str, int]], upsertions: list[tuple[str, int, int, bytes, bytes]],
                    pace):
        """AlterUserScramCredentials as Kafka's ScramControlManager.alterCredentials validates it:
        a user named twice fails whole, each result is (user, error_code, error_message). ``pace``,
        awaited once per deletion and upsertion, gives the loop up; one alteration at a time, as
        Kafka's controller applies them, so none validates against what another is changing."""
        async with self._altering:
            return await self._alter(deletions, upsertions, pace)

    async def _alter(self, deletions, upsertions, pace):
        deletes: dict[str, tuple[str, str]] = {}
        upserts: dict[str, tuple[tuple[str, str], ScramCredential]] = {}
        errors: dict[str, tuple[ErrorCode, str]] = {}
        for name, kind in deletions:
            await pace()
            if name in errors:
                continue
            if deletes.pop(name, None) is not None:
                errors[name] = (ErrorCode.duplicate_resource, "A user credential cannot be altered twice in the same request")
            elif (error := self._check(name, kind)) or (error := self._exists(name, kind)):
                errors[name] = error
            else:
                deletes[name] = (MECHANISM_TYPES[kind], name)
        for name, kind, iterations, salt, salted_password in upsertions:
            await pace()
            if name in errors:
                continue
            if deletes.pop(name, None) is not None or upserts.pop(name, None) is not None:
                errors[name] = (ErrorCode.duplicate_resource, "A user credential cannot be altered twice in the same request")
            elif error := self._check(name, kind) or _check_iterations(iterations):
                errors[name] = error
            else:
                mechanism = MECHANISM_TYPES[kind]
                upserts[name] = ((mechanism, name), credential_from_salted(mechanism, salted_password, salt, iterations))
        if deletes or upserts:
            await self.apply(dict(upserts.values()), list(deletes.values()), pace)
        return ([(u, ErrorCode.none, None) for u in deletes] + [(u, ErrorCode.none, None) for u in upserts]
                + [(u, code, message) for u, (code, message) in errors.items()])

    @staticmethod
    def _check(name: str, kind: int):
        if not name:
            return ErrorCode.unacceptable_credential, "Username must not be empty"
        if kind not in MECHANISM_TYPES:
            return ErrorCode.unsupported_sasl_mechanism, "Unknown SCRAM mechanism"
        return None

    def _exists(self, name: str, kind: int):
        if self.scram(MECHANISM_TYPES[kind], name) is None:
            return ErrorCode.resource_not_found, "Attempt to delete a user credential that does not exist"
        return None

    async def apply(self, upserts: dict, deletions: list, pace) -> None:
        """Compute the change, persist it, then apply it in memory. ``pace``, awaited once per
        credential written, gives the loop up; until the write the credentials are as they were."""
        changed = dict(self.stored)
        for key in deletions:
            changed.pop(key, None)
        changed.update(upserts)
        entries = []  # each encoded on its own: json.dumps of 95,000 credentials at once took 0.19 CPU s
        for (m, u), c in sorted(changed.items()):
            await pace()
            entries.append(json.dumps({"mechanism": m, "user": u, **c.to_json()}))
        fs.atomic_write(self.path, f"[{', '.join(entries)}]".encode())
        self.stored = changed
        for key in deletions:
            self.configured.pop(key, None)


def _check_iterations(iterations: int):
    if iterations < MIN_ITERATIONS:
        return ErrorCode.unacceptable_credential, "Too few iterations"
    if iterations > MAX_ITERATIONS:
        return ErrorCode.unacceptable_credential, "Too many iterations"
    return None
