"""Listeners, TLS and SASL: everything that decides who a connection is before it is served.

Sans-IO like the coordinators: the SASL mechanisms and the per-connection authenticator take bytes
and return bytes; only shim/server.py and shim/connection.py touch sockets (and wrap them in TLS).
"""
