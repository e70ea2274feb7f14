"""A real HTTPS upstream for the gateway tests, run inside the test network namespace:
``python3 https_upstream.py CERT KEY HOST PORT RECORD``. Every request is appended to RECORD as one JSON
line (method, path, headers), and answered 200 with the method and path only. The answer also carries
``x-reflected`` holding the request's ``x-api-key``: the gateway must strip it (SPEC "In-sandbox gateway
listener" 6), so sandbox code never reads the injected value. Prints ``ready`` once listening."""

from __future__ import annotations

import json
import ssl
import sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def _answer(self) -> None:
        length = int(self.headers.get("content-length") or 0)
        if length:
            self.rfile.read(length)
        with open(sys.argv[5], "a", encoding="utf-8") as record:
            line = {"method": self.command, "path": self.path, "headers": dict(self.headers.items())}
            record.write(json.dumps(line) + "\n")
        body = json.dumps({"method": self.command, "path": self.path}).encode()
        self.send_response(200)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(body)))
        self.send_header("x-reflected", self.headers.get("x-api-key") or "none")
        self.end_headers()
        self.wfile.write(body)

    do_GET = do_POST = _answer

    def log_message(self, format: str, *args: object) -> None:
        pass


def main() -> None:
    cert, key, host, port = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(cert, key)
    server = ThreadingHTTPServer((host, port), Handler)
    server.socket = context.wrap_socket(server.socket, server_side=True)
    print("ready", flush=True)
    server.serve_forever()


if __name__ == "__main__":
    main()
