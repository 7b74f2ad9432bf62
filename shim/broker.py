"""The public in-process broker: ``async with Broker(data_dir=..., listen="127.0.0.1:0") as b``."""

from __future__ import annotations

import asyncio
import dataclasses
import threading

from .config import BrokerConfig
from .configs.properties import unapplied_properties
from .event_loops import loop_factory
from .cluster import GROUP, TRANSACTION
from .node import Node, now_ms
from .server import Server


_KINDS = {"group": GROUP, "transaction": TRANSACTION}


class Broker:
    def __init__(self, config: BrokerConfig | None = None, **overrides) -> None:
        self.config = config.replace(**overrides) if config else BrokerConfig(**overrides)
        unapplied = unapplied_properties(self.config)
        if unapplied:
            raise ValueError("extra holds properties its fields contradict: " + "; ".join(unapplied))
        self.node: Node | None = None
        self._server: Server | None = None
        self._control_listener = None
        self.control_address: tuple[str, int] | None = None  # (host, port) of --control-listen
        # tests: the coordinators stay loading after start until release_coordinator_load()
        self.hold_coordinator_load = False
        self._loader: asyncio.Task | None = None

    async def start(self) -> "Broker":
        """Open the listeners; the coordinators load after that (shim.coordinators.loader)."""
        self.node = Node(self.config, load_later=True)
        self._server = Server(self.node)
        try:
            await self._server.start()
            if self.config.control_listen:
                await self._start_control()
        except BaseException:
            await self._server.stop()
            self.node.close()
            raise
        if not self.node.loading.done:
            if self.hold_coordinator_load:
                self.node.loading.hold()
            self._loader = asyncio.get_running_loop().create_task(self._load())
        return self

    async def _load(self) -> None:
        await self.node.loading.run()
        if self._server is not None and self._server.timer is not None:
            self._server.timer.earlier(0)  # the coordinators' deadlines count from now

    def release_coordinator_load(self) -> None:
        self.node.loading.release()

    async def coordinators_loaded(self) -> None:
        """Return once the group and transaction coordinators are loaded."""
        await self.node.loading.wait()

    async def _start_control(self) -> None:
        from .control.http import ControlListener

        host, _, port = self.config.control_listen.rpartition(":")
        self._control_listener = ControlListener(self.node.control)
        self.control_address = await self._control_listener.start(host.strip("[]"), int(port))

    @property
    def control_url(self) -> str | None:
        """``http://host:port`` of the control listener, when there is one."""
        if self.control_address is None:
            return None
        host, port = self.control_address
        return f"http://[{host}]:{port}" if ":" in host else f"http://{host}:{port}"

    async def stop(self) -> None:
        if self._loader is not None:
            self._loader.cancel()
            await asyncio.gather(self._loader, return_exceptions=True)
            self._loader = None
        if self._control_listener is not None:
            await self._control_listener.stop()
            self._control_listener = None
        if self._server is not None:
            await self._server.stop()
            self._server = None
        if self.node is not None:
            self.node.close()

    @property
    def bootstrap_servers(self) -> str:
        """host:port of every broker (the first listener's), comma-separated."""
        node = self.node
        return ",".join(f"{host}:{port}" for host, port in (node.endpoint(None, n) for n in node.node_ids))

    # -- the simulated cluster (shim.cluster); each returns once the change is applied -----------

    async def node_down(self, node_id: int) -> None:
        """Broker ``node_id`` goes away: leadership and coordinators move to other ISR members
        (leader epochs bumped), then its listeners and connections close."""
        await self._server.node_down(node_id)

    async def node_up(self, node_id: int) -> None:
        """Broker ``node_id`` comes back on its ports, caught up (its followers slowed before it
        went down no longer are), and rejoins the ISR of its partitions."""
        await self._server.node_up(node_id)

    def move_leader(self, topic: str, partition: int, node_id: int) -> int:
        """Elect ``node_id`` (an in-sync replica) leader; returns the new leader epoch."""
        return self.node.cluster.move_leader(topic, partition, node_id, now_ms())

    def move_coordinator(self, kind: str, key: str, node_id: int) -> int:
        """Move the coordinator of a group (kind "group") or transactional id ("transaction")."""
        return self.node.cluster.move_coordinator(_KINDS[kind], key, node_id, now_ms())

    def slow_follower(self, topic: str, partition: int, node_id: int) -> None:
        """The follower on ``node_id`` stops replicating: the high watermark stays where it is."""
        self.node.cluster.slow_follower(topic, partition, node_id, now_ms())

    def unslow_follower(self, topic: str, partition: int, node_id: int) -> None:
        self.node.cluster.unslow_follower(topic, partition, node_id, now_ms())

    def partition_state(self, topic: str, partition: int):
        """The partition's row of the state table: leader, leader_epoch, replicas, isr."""
        return self.node.cluster.state(topic, partition)

    def coordinator(self, kind: str, key: str) -> int:
        return self.node.cluster.coordinator(_KINDS[kind], key)

    @property
    def control(self):
        """The control plane (README.md, Fault injection): ``await broker.control.error(api="Produce", ...)``."""
        from .control.client import AsyncControl

        return AsyncControl(self)

    async def clean_logs(self, now_ms: int | None = None) -> int:
        """Run the log cleaner over every compacted log that qualifies now; how many it cleaned.
        ``now_ms`` stands for the clock (delete horizons and compaction lags are judged by it)."""
        return await self._server.cleaner.clean_now(now_ms)

    @property
    def cleaner(self):
        return self._server.cleaner

    def sessions(self) -> list:
        """The sessions of the open connections: ``.listener``, ``.principal`` (``User:...``)."""
        return [c.session for c in self._server.connections if c.session is not None] if self._server else []

    def add_acls(self, *bindings) -> None:
        """Create ACLs (``shim.security.acls.acl(...)``) as CreateAcls would (ValueError with its
        INVALID_REQUEST message otherwise); durable, and in force at once when the broker has an authorizer."""
        from .security.acls import creation_error
        for b in bindings:
            if (error := creation_error(b)) is not None:
                raise ValueError(error)
        self.node.acls.change(add=list(bindings))

    def remove_acls(self, *bindings) -> None:
        self.node.acls.change(remove=set(bindings))

    def bootstrap(self, listener: str) -> str:
        """host:port advertised by the listener named ``listener`` (e.g. "SASL_SSL")."""
        host, port = self.node.endpoints[listener]
        return f"{host}:{port}"

    async def __aenter__(self) -> "Broker":
        return await self.start()

    async def __aexit__(self, *exc) -> None:
        await self.stop()


class BrokerThread:
    """A broker on its own event loop in a background thread, for synchronous code and tests; the
    loop is the one ``config.event_loop`` names (uvloop when installed, by default)."""

    def __init__(self, config: BrokerConfig | None = None, **overrides) -> None:
        self.broker = Broker(config, **overrides)
        self.loop = loop_factory(self.broker.config.event_loop)()
        self._thread = threading.Thread(target=self.loop.run_forever, name="kafka-shim", daemon=True)

    def start(self) -> "BrokerThread":
        self._thread.start()
        asyncio.run_coroutine_threadsafe(self.broker.start(), self.loop).result(timeout=30)
        return self

    def stop(self) -> None:
        asyncio.run_coroutine_threadsafe(self.broker.stop(), self.loop).result(timeout=30)
        self.loop.call_soon_threadsafe(self.loop.stop)
        self._thread.join(timeout=30)
        self.loop.close()

    def call(self, fn, *args):
        """Run ``fn(*args)`` on the broker's loop (the node is not thread-safe) and return its result."""
        async def run():
            return fn(*args)
        return asyncio.run_coroutine_threadsafe(run(), self.loop).result(timeout=30)

    def release_coordinator_load(self) -> None:
        self.call(self.broker.release_coordinator_load)

    def coordinators_loaded(self, timeout: float = 120) -> None:
        """Block until the coordinators are loaded (Broker.coordinators_loaded)."""
        asyncio.run_coroutine_threadsafe(self.broker.coordinators_loaded(), self.loop).result(timeout=timeout)

    def clean_logs(self, now_ms: int | None = None) -> int:
        """Run the log cleaner now (see Broker.clean_logs) and wait for it."""
        return asyncio.run_coroutine_threadsafe(self.broker.clean_logs(now_ms), self.loop).result(timeout=120)

    @property
    def bootstrap_servers(self) -> str:
        return self.broker.bootstrap_servers

    def bootstrap(self, listener: str) -> str:
        return self.broker.bootstrap(listener)

    def principals(self, listener: str) -> set[str]:
        """Principals of the connections now open on ``listener``."""
        return self.call(lambda: {s.principal for s in self.broker.sessions() if s.listener == listener})

    def add_acls(self, *bindings) -> None:
        """:meth:`Broker.add_acls` on the broker's loop."""
        self.call(self.broker.add_acls, *bindings)

    def remove_acls(self, *bindings) -> None:
        self.call(self.broker.remove_acls, *bindings)

    @property
    def node(self) -> Node:
        return self.broker.node

    @property
    def control(self):
        """The control plane, blocking: ``broker.control.close(api="Produce", when="after")``."""
        from .control.client import ThreadControl

        return ThreadControl(self)

    def run(self, coro_fn, *args):
        """Run ``await coro_fn(*args)`` on the broker's loop and return its result."""
        return asyncio.run_coroutine_threadsafe(coro_fn(*args), self.loop).result(timeout=30)

    def node_down(self, node_id: int) -> None:
        self.run(self.broker.node_down, node_id)

    def node_up(self, node_id: int) -> None:
        self.run(self.broker.node_up, node_id)

    def move_leader(self, topic: str, partition: int, node_id: int) -> int:
        return self.call(self.broker.move_leader, topic, partition, node_id)

    def move_coordinator(self, kind: str, key: str, node_id: int) -> int:
        return self.call(self.broker.move_coordinator, kind, key, node_id)

    def slow_follower(self, topic: str, partition: int, node_id: int) -> None:
        self.call(self.broker.slow_follower, topic, partition, node_id)

    def unslow_follower(self, topic: str, partition: int, node_id: int) -> None:
        self.call(self.broker.unslow_follower, topic, partition, node_id)

    def partition_state(self, topic: str, partition: int):
        """A copy of the partition's row of the state table (taken on the broker's loop)."""
        return self.call(lambda: dataclasses.replace(self.broker.partition_state(topic, partition),
                                                     epochs=[list(e) for e in
                                                             self.broker.partition_state(topic, partition).epochs]))

    def coordinator(self, kind: str, key: str) -> int:
        return self.call(self.broker.coordinator, kind, key)

    def __enter__(self) -> "BrokerThread":
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()


SECURE_USER = ("alice", "alice-secret")
ADMIN_USER = ("admin", "admin-secret")
STANDARD_AUTHORIZER = "org.apache.kafka.metadata.authorizer.StandardAuthorizer"


def secure_broker(directory, client_auth: str = "requested", **overrides) -> BrokerThread:
    """A :class:`BrokerThread` with all four protocols on free ports of 127.0.0.1, certificates from
    a throwaway CA under ``directory/certs`` (``.certs``), and the SASL user :data:`SECURE_USER`."""
    from pathlib import Path

    from .security.certs import make_certs

    directory = Path(directory)
    certs = make_certs(directory / "certs")
    settings = dict(
        data_dir=directory / "kafka-shim",
        listeners="PLAINTEXT://127.0.0.1:0,SASL_PLAINTEXT://127.0.0.1:0,SSL://127.0.0.1:0,SASL_SSL://127.0.0.1:0",
        ssl_keystore_location=str(certs["broker.pem"]), ssl_truststore_location=str(certs["ca.pem"]),
        ssl_client_auth=client_auth, sasl_users=(":".join(SECURE_USER),),
    )
    thread = BrokerThread(**{**settings, **overrides})
    thread.certs = {name.removesuffix(".pem"): str(path) for name, path in certs.items()}
    return thread


def authorized_broker(directory, **overrides) -> BrokerThread:
    """:func:`secure_broker` with Kafka's StandardAuthorizer: :data:`ADMIN_USER` is a super user,
    :data:`SECURE_USER` (``User:alice``) holds no ACLs until ``add_acls`` gives it some."""
    settings = dict(sasl_users=(":".join(SECURE_USER), ":".join(ADMIN_USER)), authorizer_class_name=STANDARD_AUTHORIZER,
                    super_users=f"User:{ADMIN_USER[0]}")
    return secure_broker(directory, **{**settings, **overrides})
