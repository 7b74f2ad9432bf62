"""``kafka-configs.sh --alter --entity-type clients`` for the manual confluent-kafka-python run.

confluent_conftest.py puts a ``kafka-configs.sh`` running this file on PATH: the suite's
share_consumer/test_share_consumer_callbacks.py sets a client quota with the script (librdkafka
has no call for it) and skips when it finds none. As Kafka's ConfigCommand does with
``--bootstrap-server``, each ``--add-config k=v,...`` / ``--delete-config k,...`` becomes one
AlterClientQuotas request for the client-id entity; anything else is refused.

    kafka-configs.sh --bootstrap-server HOST:PORT --alter --add-config consumer_byte_rate=1024 \\
        --entity-type clients --entity-name CLIENT_ID
"""

import argparse
import socket
import struct
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[3]))


def parse(argv):
    p = argparse.ArgumentParser(prog="kafka-configs.sh")
    p.add_argument("--bootstrap-server", required=True)
    p.add_argument("--alter", action="store_true", required=True)
    p.add_argument("--entity-type", choices=["clients"], required=True)
    p.add_argument("--entity-name", required=True)
    g = p.add_mutually_exclusive_group(required=True)
    g.add_argument("--add-config")
    g.add_argument("--delete-config")
    return p.parse_args(argv)


def ops(args, m):
    if args.add_config:
        pairs = [item.split("=", 1) for item in args.add_config.split(",")]
        return tuple(m.OpData(key=k, value=float(v), remove=False) for k, v in pairs)
    return tuple(m.OpData(key=k, value=0.0, remove=True) for k in args.delete_config.split(","))


def main(argv) -> int:
    from compat.support import first_address, recv_frame
    from shim.protocol.messages import RequestHeader, decode_response, encode_request, request_module

    args = parse(argv)
    m = request_module(49, 1)
    body = m.AlterClientQuotasRequest(validate_only=False, entries=(m.EntryData(
        entity=(m.EntityData(entity_type="client-id", entity_name=args.entity_name),), ops=ops(args, m)),))
    frame = encode_request(RequestHeader(49, 1, 1, "kafka-configs"), body)
    with socket.create_connection(first_address(args.bootstrap_server), timeout=30) as sock:
        sock.sendall(struct.pack(">i", len(frame)) + frame)
        _, response = decode_response(recv_frame(sock), 49, 1)
    errors = [(e.error_code, e.error_message) for e in response.entries if e.error_code]
    if errors:
        print(f"Error while executing config command: {errors}", file=sys.stderr)
        return 1
    print(f"Completed updating config for client {args.entity_name}.")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
