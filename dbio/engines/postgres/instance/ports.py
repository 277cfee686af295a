"""A TCP port for a member of the embedded instance: below embedded.py and standbys.py, which both
ask for one."""

from __future__ import annotations

import socket


def free_port() -> int:
    # The socket lives in a private directory, so the port only has to be free for TCP,
    # should the user ever enable a loopback listener. Skip the well-known ports.
    while True:
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        if port not in (5432, 3306, 5433) and port < 65000:
            return port
