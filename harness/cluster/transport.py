"""How the client may talk to the scheduler: mutual TLS, or plain TCP on the loopback.

plan(opts) runs before the run directory exists; a bad choice is a usage error
(exit 2, one line):
  tls://HOST:PORT   the client's CA, certificate and key from one directory
                    (--cluster-certs, $KSYMLAB_CLUSTER_CERTS, ~/.config/ksymlab/
                    cluster-certs): ca.pem, client.pem, client-key.pem, each
                    present, readable, parsed, and the key readable by its owner only
  tcp://HOST:PORT   only when HOST is a loopback address (127.0.0.0/8, ::1,
                    localhost), or with --insecure-cluster, which the report then states
Any other scheme is refused. No name is resolved: a host name that a resolver
maps to 127.0.0.1 is not the loopback here.
"""

import enum
import ipaddress
import os
import ssl
import stat
from dataclasses import dataclass
from pathlib import Path
from typing import Optional
from urllib.parse import urlsplit

from ..errors import HarnessError
from . import certs


class Kind(enum.Enum):
    TLS = "tls"                     # mutual TLS, encryption required
    LOOPBACK = "tcp-loopback"       # plain TCP that never leaves this machine
    INSECURE = "tcp-insecure"       # plain TCP off the loopback: --insecure-cluster


@dataclass(frozen=True)
class Transport:
    address: str
    kind: Kind
    certs: Optional[Path] = None    # the client's certificate directory (TLS)

    def to_json(self):
        return {"address": self.address, "transport": self.kind.value,
                "insecure": self.kind is Kind.INSECURE,
                "certs": str(self.certs) if self.certs else None, "note": self.describe()}

    def describe(self):
        if self.kind is Kind.TLS:
            return f"`{self.address}`, mutual TLS (certificates from `{self.certs}`)"
        if self.kind is Kind.LOOPBACK:
            return f"`{self.address}`, plain TCP on the loopback"
        return (f"`{self.address}`, **insecure**: plain TCP off the loopback "
                "(--insecure-cluster); anyone who reached that port could run code on the "
                "workers and answer as one")


def is_loopback(host):
    if host.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def _split(address):
    parts = urlsplit(address)
    try:
        port = parts.port
    except ValueError:
        port = None
    if parts.scheme not in ("tls", "tcp") or not parts.hostname or port is None \
            or parts.path not in ("", "/"):
        raise HarnessError("usage", f"--cluster {address}: want tls://HOST:PORT "
                                    "(or tcp://127.0.0.1:PORT on this machine)")
    return parts.scheme, parts.hostname


def _check_file(path, secret):
    try:
        st = os.stat(path)
        with open(path, "rb"):
            pass
    except OSError as e:
        raise HarnessError("usage", f"--cluster-certs: {path}: {e.strerror} "
                                    "(python3 -m harness cluster-certs DIR makes them)") from e
    if secret and st.st_mode & (stat.S_IRWXG | stat.S_IRWXO):
        raise HarnessError("usage", f"--cluster-certs: {path}: others may read this key "
                                    f"(mode {stat.S_IMODE(st.st_mode):04o}): chmod 600 it")


def client_files(directory):
    """(ca, certificate, key) of the client in `directory`."""
    d = Path(directory)
    return d / "ca.pem", certs.cert_file(d, "client"), certs.key_file(d, "client")


def check_certs(directory):
    """Each file there, readable, the key private, and the three a usable TLS context."""
    ca, cert, key = client_files(directory)
    for path, secret in ((ca, False), (cert, False), (key, True)):
        _check_file(path, secret)
    try:
        ctx = ssl.create_default_context(ssl.Purpose.SERVER_AUTH, cafile=str(ca))
        ctx.load_cert_chain(str(cert), str(key))
    except ssl.SSLError as e:
        raise HarnessError("usage", f"--cluster-certs: {directory}: ca.pem, client.pem and "
                                    f"client-key.pem do not make a TLS context: "
                                    f"{e.reason or e}") from e


def plan(address, certs_dir, insecure=False):
    """The Transport of `address`; HarnessError("usage") when it may not be used."""
    scheme, host = _split(address)
    if scheme == "tls":
        if insecure:
            raise HarnessError("usage", "--insecure-cluster is for a plain tcp:// address, "
                                        f"not {address}")
        check_certs(certs_dir)
        return Transport(address, Kind.TLS, Path(certs_dir))
    if is_loopback(host):
        return Transport(address, Kind.LOOPBACK)
    if not insecure:
        raise HarnessError("usage", f"--cluster {address}: plain TCP off the loopback lets "
                                    "anyone who reaches the port run code on the workers: "
                                    "use tls:// (docs/cluster.md), or --insecure-cluster")
    return Transport(address, Kind.INSECURE)


def security(transport):
    """The client's distributed.security.Security for `transport` (None: plain TCP)."""
    if transport.kind is not Kind.TLS:
        return None
    from distributed.security import Security
    ca, cert, key = client_files(transport.certs)
    return Security(tls_ca_file=str(ca), tls_client_cert=str(cert), tls_client_key=str(key),
                    require_encryption=True)
