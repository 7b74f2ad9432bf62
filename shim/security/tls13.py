"""The TLS 1.3 cipher suites of an ``ssl.SSLContext``: OpenSSL's SSL_CTX_set_ciphersuites.

Python's ssl module (3.11 to 3.13) has no way to choose them: ``set_ciphers`` calls
SSL_CTX_set_cipher_list, which OpenSSL applies to TLS 1.2 and older only, so a context agrees
any of OpenSSL's default three. Kafka's ``ssl.cipher.suites`` restricts TLS 1.3 as well (the JDK's
``setEnabledCipherSuites`` takes both kinds of name), so kafka-shim calls SSL_CTX_set_ciphersuites
itself, through ctypes, on the SSL_CTX the context wraps:

- the function is looked up through the ``_ssl`` extension's own handle, so it is the libssl
  Python is linked against (dlsym searches a library's dependencies), never a second copy;
- the SSL_CTX pointer is CPython's PySSLContext.ctx, the first field after the object header;
  it is trusted only if SSL_CTX_get_options on it answers the context's own options, and the
  result is read back through ``get_ciphers`` (which lists the TLS 1.3 suites too).
"""

from __future__ import annotations

import ctypes
import ssl
import sys

TLS13_PROTOCOL = "TLSv1.3"


class Unavailable(RuntimeError):
    """This Python cannot choose TLS 1.3 suites (not CPython, or no SSL_CTX_set_ciphersuites)."""


def _libssl():
    import _ssl
    if sys.implementation.name != "cpython":
        raise Unavailable(f"{sys.implementation.name} is not CPython: its SSLContext layout is unknown")
    lib = ctypes.CDLL(_ssl.__file__)
    try:
        set_suites, get_options = lib.SSL_CTX_set_ciphersuites, lib.SSL_CTX_get_options
    except AttributeError as e:  # OpenSSL before 1.1.1, LibreSSL
        raise Unavailable(f"{ssl.OPENSSL_VERSION} has no {e}") from None
    set_suites.argtypes, set_suites.restype = (ctypes.c_void_p, ctypes.c_char_p), ctypes.c_int
    get_options.argtypes, get_options.restype = (ctypes.c_void_p,), ctypes.c_uint64
    return set_suites, get_options


def _ssl_ctx(ctx: ssl.SSLContext, get_options) -> int:
    pointer = ctypes.c_void_p.from_address(id(ctx) + object.__basicsize__).value  # PySSLContext.ctx
    if not pointer or get_options(pointer) != int(ctx.options):
        raise Unavailable("the SSLContext does not hold its SSL_CTX where CPython keeps it")
    return pointer


def suites(ctx: ssl.SSLContext) -> list[str]:
    """The TLS 1.3 suites ``ctx`` agrees, in its order."""
    return [c["name"] for c in ctx.get_ciphers() if c["protocol"] == TLS13_PROTOCOL]


def set_suites(ctx: ssl.SSLContext, names: list[str]) -> None:
    """Let ``ctx`` agree only ``names`` (IANA names, which are OpenSSL's for TLS 1.3) over TLS 1.3."""
    set_ciphersuites, get_options = _libssl()
    if set_ciphersuites(_ssl_ctx(ctx, get_options), ":".join(names).encode()) != 1:
        raise ssl.SSLError(f"SSL_CTX_set_ciphersuites refused {':'.join(names)}")
    if suites(ctx) != list(names):
        raise Unavailable(f"the context agrees {suites(ctx)} after SSL_CTX_set_ciphersuites({names})")
