"""A loopback TCP proxy that cuts the first stream whose request line holds ``marker`` right after its
first record carrying a ``"seq"`` or ``"cursor"``: a feed reading through it must open a second
connection and go on after its last sequence number."""

from __future__ import annotations

import socket
import threading
from urllib.parse import urlsplit


class CutProxy:
    """``url`` forwards to ``target`` (``http://host:port``, with a path or not: a sandbox's daemon URL is
    the control plane's ``/v1/sandboxes/<id>/daemon``, kept in ``url``); ``streams`` counts the marked
    requests."""

    def __init__(self, target: str, marker: bytes) -> None:
        parsed = urlsplit(target)
        assert parsed.scheme == "http" and parsed.hostname is not None and parsed.port is not None
        self._target = (parsed.hostname, parsed.port)
        self._marker = marker
        self._server = socket.create_server(("127.0.0.1", 0))
        self.url = f"http://127.0.0.1:{self._server.getsockname()[1]}{parsed.path.rstrip('/')}"
        self.streams = 0
        self._lock = threading.Lock()
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while True:
            try:
                client, _ = self._server.accept()
            except OSError:
                return
            threading.Thread(target=self._serve, args=(client,), daemon=True).start()

    def _serve(self, client: socket.socket) -> None:
        upstream = socket.create_connection(self._target)
        head = client.recv(65536)
        cut = False
        if self._marker in head.split(b"\r\n", 1)[0]:
            with self._lock:
                self.streams += 1
                cut = self.streams == 1
        upstream.sendall(head)
        threading.Thread(target=self._pump, args=(client, upstream), daemon=True).start()
        try:
            while data := upstream.recv(65536):
                found = [at for at in (data.find(b'"seq"'), data.find(b'"cursor"')) if at >= 0] if cut else []
                if not found:
                    client.sendall(data)
                    continue
                # The first record goes through, whole, and the connection breaks right after it: never
                # later, or a short stream could reach its end in the same read and never be cut.
                line_end = data.find(b"\n", min(found))
                client.sendall(data if line_end < 0 else data[: line_end + 1])
                break
        except OSError:
            pass
        for end in (client, upstream):
            try:
                end.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            end.close()

    @staticmethod
    def _pump(source: socket.socket, sink: socket.socket) -> None:
        try:
            while data := source.recv(65536):
                sink.sendall(data)
        except OSError:
            pass

    def close(self) -> None:
        """Stops accepting."""
        self._server.close()
