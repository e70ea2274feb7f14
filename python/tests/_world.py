"""What the gateway and secret-store tests stand on, made at test time and removed afterwards: a test CA
with a server certificate (openssl), a network namespace joined to the host by a veth pair with
addresses of the benchmarking range 198.18.0.0/15 (as ``test/integration/support/test-network.ts``), the
HTTPS upstream inside it (``https_upstream.py``), and moto's server for Secrets Manager."""

from __future__ import annotations

import ipaddress
import json
import os
import socket
import subprocess
import sys
import time
import urllib.request
from dataclasses import dataclass
from pathlib import Path


def sh(*args: str) -> str:
    return subprocess.run(args, check=True, capture_output=True, text=True).stdout


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


@dataclass(frozen=True)
class Pki:
    """A CA (``ca_file``) and a server certificate for ``ns_address`` it signs."""

    ca_file: str
    cert_file: str
    key_file: str
    host_address: str
    ns_address: str


def pick_subnet() -> tuple[str, str]:
    """A /30 of 198.18.0.0/15 that no interface uses, derived from this process's id."""
    used = sh("ip", "-4", "-o", "addr", "show")
    base = int(ipaddress.IPv4Address("198.18.0.0"))
    for i in range(2**15):
        start = base + ((os.getpid() * 64 + 7 + i) % 2**15) * 4
        host, ns = str(ipaddress.IPv4Address(start + 1)), str(ipaddress.IPv4Address(start + 2))
        if f" {host}/" not in used and f" {ns}/" not in used:
            return host, ns
    raise RuntimeError("no free test subnet")


def make_pki(folder: str) -> Pki:
    host, ns = pick_subnet()
    ec = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes"]

    def f(name: str) -> str:
        return str(Path(folder, name))

    sh("openssl", "req", "-x509", *ec, "-days", "2", "-subj", "/CN=python test CA",
       "-keyout", f("ca-key.pem"), "-out", f("ca.pem"))
    sh("openssl", "req", *ec, "-subj", "/CN=upstream", "-keyout", f("key.pem"), "-out", f("csr.pem"))
    Path(f("ext.cnf")).write_text(f"subjectAltName=IP:{ns}\nextendedKeyUsage=serverAuth\n")
    sh("openssl", "x509", "-req", "-in", f("csr.pem"), "-CA", f("ca.pem"), "-CAkey", f("ca-key.pem"),
       "-CAcreateserial", "-days", "2", "-extfile", f("ext.cnf"), "-out", f("cert.pem"))
    return Pki(f("ca.pem"), f("cert.pem"), f("key.pem"), host, ns)


class Upstream:
    """The HTTPS upstream in its own namespace: ``origin`` and the requests it received."""

    def __init__(self, pki: Pki, folder: str) -> None:
        tag = f"{os.getpid() % 100_000}p"
        self.ns, self._host_veth, ns_veth = f"sdkpy-{tag}", f"vh{tag}", f"vn{tag}"
        self.record = str(Path(folder, "requests.jsonl"))
        Path(self.record).touch()
        sh("ip", "netns", "add", self.ns)
        self._process: subprocess.Popen[str] | None = None
        try:
            sh("ip", "link", "add", self._host_veth, "type", "veth", "peer", "name", ns_veth, "netns", self.ns)
            sh("ip", "addr", "add", f"{pki.host_address}/30", "dev", self._host_veth)
            sh("ip", "link", "set", self._host_veth, "up")
            sh("ip", "-n", self.ns, "addr", "add", f"{pki.ns_address}/30", "dev", ns_veth)
            sh("ip", "-n", self.ns, "link", "set", ns_veth, "up")
            sh("ip", "-n", self.ns, "link", "set", "lo", "up")
            script = str(Path(__file__).with_name("https_upstream.py"))
            self._process = subprocess.Popen(
                ["ip", "netns", "exec", self.ns, sys.executable, script,
                 pki.cert_file, pki.key_file, pki.ns_address, "8443", self.record],
                stdout=subprocess.PIPE, text=True,
            )
            assert self._process.stdout is not None
            if self._process.stdout.readline().strip() != "ready":
                raise RuntimeError("the HTTPS upstream did not start")
        except BaseException:
            self.stop()
            raise
        self.origin = f"https://{pki.ns_address}:8443"

    def requests(self) -> list[dict[str, object]]:
        """Every request so far: method, path, headers (header names as received)."""
        lines = Path(self.record).read_text().splitlines()
        return [json.loads(line) for line in lines if line]

    def stop(self) -> None:
        if self._process is not None:
            self._process.terminate()
            self._process.wait(timeout=10)
            if self._process.stdout is not None:
                self._process.stdout.close()
        subprocess.run(["ip", "netns", "del", self.ns], check=False, capture_output=True)


class Moto:
    """moto in server mode on a loopback port (Secrets Manager for ``SecretStore(region=...)``)."""

    def __init__(self) -> None:
        port = free_port()
        self.endpoint = f"http://127.0.0.1:{port}"
        self._process = subprocess.Popen(
            ["moto_server", "-H", "127.0.0.1", "-p", str(port)],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        )
        for _ in range(400):
            try:
                urllib.request.urlopen(f"{self.endpoint}/moto-api/", timeout=2).close()
                return
            except OSError:
                if self._process.poll() is not None:
                    break
                time.sleep(0.05)
        self.stop()
        raise RuntimeError("moto_server did not start")

    def stop(self) -> None:
        if self._process.poll() is None:
            self._process.terminate()
            self._process.wait(timeout=10)
