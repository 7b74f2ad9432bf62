"""``kafka-shim ctl``: the control operations from a shell, over a broker's ``--control-listen``.

    kafka-shim ctl --control http://127.0.0.1:9644 close --api Produce --when after
    kafka-shim ctl --control http://127.0.0.1:9644            # lists the operations

Each operation of shim.control.ops is a sub-command with one ``--flag`` per argument; the broker
checks the values. The result is printed as JSON; a refusal goes to stderr with exit status 1.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import urllib.error
import urllib.request

from .args import BadArgument
from .ops import OPS

ENV = "KAFKA_SHIM_CONTROL"
TIMEOUT_S = 660.0  # longer than the longest wait an operation may ask for


def main(argv: list[str]) -> int:
    return run(_parser().parse_args(argv))


def _parser() -> argparse.ArgumentParser:
    c = argparse.ArgumentParser(prog="kafka-shim ctl", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    c.add_argument("--control", default=os.environ.get(ENV), metavar="URL",
                   help=f"the broker's control URL, as its ready line prints it (default ${ENV})")
    ops = c.add_subparsers(dest="op", metavar="OPERATION")
    for spec in OPS.values():
        o = ops.add_parser(spec.name, help=spec.help, description=spec.help)
        for arg in spec.args:
            flags = [f"--{arg.name.replace('_', '-')}"] + ([f"--{arg.name}"] if "_" in arg.name else [])
            extra = f" (one of {', '.join(arg.choices)})" if arg.choices else ""
            extra += f" (default {arg.default})" if arg.default is not None else ""
            o.add_argument(*flags, dest=f"arg_{arg.name}", metavar=arg.kind.upper(), help=arg.help + extra,
                           required=arg.required)
    return c


def run(args: argparse.Namespace) -> int:
    if not args.control:
        print(f"kafka-shim ctl: give --control URL (or set {ENV})", file=sys.stderr)
        return 2
    base = args.control.rstrip("/") + "/v1/ops"
    if args.op is None:
        status, body = _request(base, None)
        if status == 200:
            for spec in body["ops"]:
                print(f"{spec['name']:18} {spec['help']}")
            return 0
        return _refused(status, body)
    spec = OPS[args.op]
    try:
        given = {a.name: a.from_text(getattr(args, f"arg_{a.name}")) for a in spec.args
                 if getattr(args, f"arg_{a.name}") is not None}
    except BadArgument as exc:
        print(f"kafka-shim ctl {args.op}: {exc}", file=sys.stderr)
        return 2
    status, body = _request(f"{base}/{args.op}", given)
    if status != 200:
        return _refused(status, body)
    print(json.dumps(body, indent=1))
    return 0


def _request(url: str, args: dict | None) -> tuple[int, dict]:
    data = None if args is None else json.dumps(args).encode()
    request = urllib.request.Request(url, data=data, method="GET" if data is None else "POST",
                                     headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(request, timeout=TIMEOUT_S) as response:
            return response.status, json.loads(response.read() or b"{}")
    except urllib.error.HTTPError as exc:
        try:
            return exc.code, json.loads(exc.read() or b"{}")
        except ValueError:
            return exc.code, {"error": exc.reason}
    except (urllib.error.URLError, OSError) as exc:
        return 0, {"error": f"cannot reach {url}: {getattr(exc, 'reason', exc)}"}


def _refused(status: int, body: dict) -> int:
    print(f"kafka-shim ctl: {body.get('error', body)}" + (f" (HTTP {status})" if status else ""), file=sys.stderr)
    return 1
