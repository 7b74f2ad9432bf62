"""Which listeners are the controller's, and what Kafka's KafkaConfig refuses about them at start-up.

A KRaft node names its controller listeners in ``controller.listener.names``; with ``process.roles``
including ``controller`` those listeners are served by the controller's SocketServer
(ControllerServer, ListenerType.CONTROLLER), the others by the broker's. kafka-shim stands for one
combined node (DescribeQuorum): an unset ``process.roles`` is taken as ``broker,controller``;
``controller`` alone is refused, as kafka-shim always plays a broker (NOT_IMPLEMENTED.md).
``process.roles=broker`` serves no controller listener: Kafka refuses one in ``listeners`` then.

The checks follow KafkaConfig.validateValues (3.9 and 4.x alike for these), with its messages.
When ``listener.security.protocol.map`` is not given and no listener nor controller listener name
is SSL or SASL, each controller listener name maps to PLAINTEXT (KafkaConfig
.effectiveListenerSecurityProtocolMap).
"""

from __future__ import annotations

from typing import NamedTuple

from .listeners import Endpoint, Listener, parse_endpoints

BROKER, CONTROLLER = "broker", "controller"
_SECURE = ("SSL", "SASL_SSL", "SASL_PLAINTEXT")


class Roles(NamedTuple):
    roles: frozenset[str]
    explicit: bool  # process.roles was given
    controller_names: tuple[str, ...]  # controller.listener.names, in order


def roles_of(extra: dict) -> Roles:
    given = [r.strip() for r in str(extra.get("process.roles") or "").split(",") if r.strip()]
    names = tuple(n.strip() for n in str(extra.get("controller.listener.names") or "").split(",") if n.strip())
    return Roles(frozenset(given or (BROKER, CONTROLLER)), bool(given), names)


def effective_protocol_map(protocol_map: str, map_given: bool, listeners: str, roles: Roles) -> str:
    """Kafka: KafkaConfig.effectiveListenerSecurityProtocolMap, the PLAINTEXT mapping it adds for
    controller listener names when the map is Kafka's default and nothing is SSL or SASL."""
    if map_given or not roles.controller_names:
        return protocol_map
    names = [e.partition("://")[0].strip().upper() for e in listeners.split(",") if e.strip()]
    if any(n in _SECURE for n in (*roles.controller_names, *names)):
        return protocol_map
    extra = [f"{n}:PLAINTEXT" for n in roles.controller_names if n != "PLAINTEXT"]
    return ",".join([protocol_map, *extra]) if extra else protocol_map


def broker_advertised(advertised: str, listeners: str, roles: Roles) -> str:
    """``advertised.listeners`` less the controller listeners this process does not bind (a
    broker-only node may name its controllers there: Kafka's effectiveAdvertisedBrokerListeners
    leaves them out)."""
    bound = {e.partition("://")[0].strip().upper() for e in listeners.split(",") if e.strip()}
    return ",".join(e for e in advertised.split(",") if e.strip() and not (
        (name := e.partition("://")[0].strip().upper()) in roles.controller_names and name not in bound))


def controller_listeners(roles: Roles, listeners: list[Listener]) -> frozenset[str]:
    """The names of the listeners the controller serves."""
    if CONTROLLER not in roles.roles:
        return frozenset()
    return frozenset(lst.name for lst in listeners if lst.name in roles.controller_names)


def check(roles: Roles, extra: dict, node_id: int, listeners: list[Listener], advertised: str) -> None:
    """ValueError with Kafka's message for what KafkaConfig refuses of these listeners and roles."""
    if roles.roles == {CONTROLLER}:
        raise ValueError("process.roles=controller is not served: kafka-shim always plays a broker "
                         "(process.roles=broker,controller)")
    names = {lst.name for lst in listeners}
    adverts = parse_endpoints(advertised, "advertised.listeners")
    if roles.explicit:
        _check_quorum(roles, extra, node_id)
    if roles.roles == {BROKER}:
        _require(roles.controller_names, "controller.listener.names must contain at least one value when running "
                                         "KRaft with just the broker role")
        _require(not names & set(roles.controller_names),
                 "controller.listener.names must not contain a value appearing in the 'listeners' configuration "
                 "when running KRaft with just the broker role")
    elif roles.controller_names or roles.explicit:  # combined
        _require(any(n in names for n in roles.controller_names),
                 "controller.listener.names must contain at least one value appearing in the 'listeners' "
                 "configuration when running the KRaft controller role")
        _require(all(n in names for n in roles.controller_names),
                 "controller.listener.names must only contain values appearing in the 'listeners' configuration "
                 "when running the KRaft controller role")
    _check_broker(roles, extra, listeners, adverts)


def _check_quorum(roles: Roles, extra: dict, node_id: int) -> None:
    voters = _voter_ids(str(extra.get("controller.quorum.voters") or ""))
    if not voters and not str(extra.get("controller.quorum.bootstrap.servers") or "").strip():
        raise ValueError("If using process.roles, either controller.quorum.bootstrap.servers must contain the set "
                         "of bootstrap controllers or controller.quorum.voters must contain a parseable set of "
                         "controllers.")
    shown = "Set(" + ", ".join(str(v) for v in voters) + ")"  # Scala's Set.toString
    if CONTROLLER in roles.roles:
        _require(not voters or node_id in voters,
                 f"If process.roles contains the 'controller' role, the node id {node_id} must be included in the "
                 f"set of voters controller.quorum.voters={shown}")
    else:
        _require(node_id not in voters,
                 f"If process.roles contains just the 'broker' role, the node id {node_id} must not be included "
                 f"in the set of voters controller.quorum.voters={shown}")


def _voter_ids(voters: str) -> list[int]:
    out = []
    for entry in (v.strip() for v in voters.split(",") if v.strip()):
        node, sep, _ = entry.partition("@")
        if not sep or not node.strip().isdigit():
            raise ValueError(f"Invalid value {voters} for configuration controller.quorum.voters: Invalid parsing "
                             f"of controller.quorum.voters entry {entry}")
        out.append(int(node))
    return out


def _check_broker(roles: Roles, extra: dict, listeners: list[Listener], adverts: list[Endpoint]) -> None:
    """KafkaConfig's checks of the broker role's advertised listeners (effectiveAdvertisedBrokerListeners:
    advertised.listeners, or listeners when it is not set, less the controller listeners)."""
    names = [lst.name for lst in listeners]
    given = [e.name for e in adverts] if adverts else names
    broker = [n for n in given if n not in roles.controller_names]
    _require(broker, "There must be at least one broker advertised listener. Perhaps all listeners appear in "
                     "controller.listener.names?")
    inter = str(extra.get("inter.broker.listener.name") or "").strip().upper()
    if inter and inter not in broker:
        raise ValueError("inter.broker.listener.name must be a listener name defined in advertised.listeners. "
                         f"The valid options based on currently configured listeners are {','.join(broker)}")
    hosts = {e.name: e.host for e in adverts}
    if any(hosts.get(n) == "0.0.0.0" for n in given):
        raise ValueError("advertised.listeners cannot use the nonroutable meta-address 0.0.0.0. Use a routable IP "
                         "address.")


def _require(ok, message: str) -> None:
    if not ok:
        raise ValueError(f"requirement failed: {message}")
