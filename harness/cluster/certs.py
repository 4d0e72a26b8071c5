"""Certificates for a --cluster without a PKI: `python3 -m harness cluster-certs DIR`.

One run makes a private CA and a certificate with its key for each role:

    ca.pem, ca-key.pem                 the CA (keep ca-key.pem off the cluster's machines)
    scheduler.pem, scheduler-key.pem   `dask scheduler --tls-cert/--tls-key`
    worker.pem, worker-key.pem         `dask worker --tls-cert/--tls-key`
    client.pem, client-key.pem         the harness (`--cluster-certs DIR`)

Keys are EC P-256, files 0600 in a 0700 directory. Dask checks no host names
and no roles (distributed/security.py: check_hostname off): a certificate of
this CA is what the cluster trusts. The extended key usages narrow one thing:
the client's certificate is for TLS clients only, so it cannot serve as a
scheduler or a worker that others connect to.
"""

import datetime
import os
from dataclasses import dataclass
from pathlib import Path

from ..errors import HarnessError

DAYS = 365
CA_NAME = "ca"
ROLES = ("scheduler", "worker", "client")
FILE_MODE = 0o600
DIR_MODE = 0o700


@dataclass(frozen=True)
class Issued:
    directory: Path
    files: tuple            # names written, in order
    ca_fingerprint: str     # SHA-256 of the CA certificate, hex


def cert_file(directory, role):
    return Path(directory) / f"{role}.pem"


def key_file(directory, role):
    return Path(directory) / f"{role}-key.pem"


def _x509():
    try:
        from cryptography import x509
        from cryptography.hazmat.primitives import hashes, serialization
        from cryptography.hazmat.primitives.asymmetric import ec
        from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID
    except ImportError as e:
        raise HarnessError("deps", "cluster-certs needs python3-cryptography: "
                                   "apt-get install python3-cryptography") from e
    return x509, hashes, serialization, ec, ExtendedKeyUsageOID, NameOID


def _write(path, data):
    """Create `path` with mode 0600 (never through an existing file or link)."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, FILE_MODE)
    with os.fdopen(fd, "wb") as f:
        f.write(data)


def _builder(subject, issuer, public_key, days, now):
    x509 = _x509()[0]
    return (x509.CertificateBuilder().subject_name(subject).issuer_name(issuer)
            .public_key(public_key).serial_number(x509.random_serial_number())
            .not_valid_before(now - datetime.timedelta(minutes=5))
            .not_valid_after(now + datetime.timedelta(days=days)))


def _leaf(role, ca_key, ca_name, days, now):
    """(certificate, key) of `role`, signed by the CA."""
    x509, hashes, _, ec, eku, oid = _x509()
    key = ec.generate_private_key(ec.SECP256R1())
    usages = [eku.CLIENT_AUTH] if role == "client" else [eku.SERVER_AUTH, eku.CLIENT_AUTH]
    name = x509.Name([x509.NameAttribute(oid.COMMON_NAME, f"ksymlab-cluster-{role}")])
    cert = (_builder(name, ca_name, key.public_key(), days, now)
            .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
            .add_extension(x509.KeyUsage(True, False, False, False, True, False, False,
                                         False, False), critical=True)
            .add_extension(x509.ExtendedKeyUsage(usages), critical=False)
            .sign(ca_key, hashes.SHA256()))
    return cert, key


def _ca(days, now):
    x509, hashes, _, ec, _, oid = _x509()
    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(oid.COMMON_NAME, "ksymlab-cluster-ca")])
    cert = (_builder(name, name, key.public_key(), days, now)
            .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
            .add_extension(x509.KeyUsage(False, False, False, False, False, True, True,
                                         False, False), critical=True)
            .sign(key, hashes.SHA256()))
    return cert, key


def _prepare_dir(directory):
    directory = Path(directory)
    names = [f"{r}{s}" for r in (CA_NAME, *ROLES) for s in (".pem", "-key.pem")]
    there = [n for n in names if (directory / n).exists() or (directory / n).is_symlink()]
    if there:
        raise HarnessError("usage", f"{directory}: already holds {', '.join(there)}; "
                                    "remove them or choose another directory")
    try:
        directory.mkdir(mode=DIR_MODE, parents=True, exist_ok=True)
        os.chmod(directory, DIR_MODE)
    except OSError as e:
        raise HarnessError("usage", f"{directory}: cannot create the directory: "
                                    f"{e.strerror}") from e
    return directory


def issue(directory, days=DAYS):
    """Write a new CA and a certificate and key per role into `directory`; an Issued."""
    _, hashes, ser, _, _, _ = _x509()
    directory = _prepare_dir(directory)
    now = datetime.datetime.now(datetime.timezone.utc)
    ca_cert, ca_key = _ca(days, now)
    pairs = [(CA_NAME, ca_cert, ca_key)]
    pairs += [(role, *_leaf(role, ca_key, ca_cert.subject, days, now)) for role in ROLES]
    written = []
    for role, cert, key in pairs:
        _write(cert_file(directory, role), cert.public_bytes(ser.Encoding.PEM))
        _write(key_file(directory, role), key.private_bytes(
            ser.Encoding.PEM, ser.PrivateFormat.PKCS8, ser.NoEncryption()))
        written += [cert_file(directory, role).name, key_file(directory, role).name]
    return Issued(directory, tuple(written), ca_cert.fingerprint(hashes.SHA256()).hex())
