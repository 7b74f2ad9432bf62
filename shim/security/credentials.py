"""Who may authenticate: PLAIN users and SCRAM credentials.

Users given in the configuration (``sasl_users``, ``name:password``) authenticate with PLAIN (as
Kafka's ``user_<name>="<password>"`` JAAS entries) and with both SCRAM mechanisms (as
``kafka-storage format --add-scram``); their SCRAM credentials are salted in memory at start-up.
Credentials set with AlterUserScramCredentials are durable in ``__cluster_metadata/scram-credentials.json``
(salted, never the password) and take precedence over the configured ones.
"""

from __future__ import annotations

import hmac
import json
from pathlib import Path

from ..storage import fs
from .scram import HASHES, ScramCredential, make_credential

FILE_NAME = "scram-credentials.json"


def parse_user(spec: str) -> tuple[str, str]:
    name, sep, password = spec.partition(":")
    if not sep or not name or not password:
        raise ValueError(f"a SASL user is name:password, not {spec!r}")
    return name, password


class CredentialStore:
    def __init__(self, meta_dir: Path, users: tuple[str, ...] = (), iterations: int = 4096) -> None:
        self.path = meta_dir / FILE_NAME
        self.plain = dict(parse_user(u) for u in users)
        self.configured = {(m, name): make_credential(m, pw, iterations)
                           for name, pw in self.plain.items() for m in HASHES}
        self.stored: dict[tuple[str, str], ScramCredential] = {}
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

    def apply(self, upserts: dict, deletions: list) -> None:
        """Compute the change, persist it, then apply it in memory."""
        changed = dict(self.stored)
        for key in deletions:
            changed.pop(key, None)
            self.configured.pop(key, None)
        changed.update(upserts)
        entries = [{"mechanism": m, "user": u, **c.to_json()} for (m, u), c in sorted(changed.items())]
        fs.atomic_write(self.path, json.dumps(entries).encode())
        self.stored = changed
