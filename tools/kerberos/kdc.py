"""A throwaway MIT Kerberos realm: KDC on loopback, database and keytabs in one directory.

Typical use::

    kdc = MiniKdc(tmp_dir).start()
    broker_keytab = kdc.add_principal("kafka/localhost")
    client_keytab = kdc.add_principal("client")
    os.environ.update(kdc.client_env(client_keytab))  # KRB5_CONFIG, KRB5_CLIENT_KTNAME, ...
    ...
    kdc.stop()

Everything comes from Debian's ``krb5-kdc`` / ``krb5-admin-server`` packages
(``kdb5_util``, ``kadmin.local``, ``krb5kdc``); nothing touches ``/etc``: the KDC reads
``kdc.conf`` through ``KRB5_KDC_PROFILE``, every tool and client reads ``krb5.conf``
through ``KRB5_CONFIG`` (Java through ``-Djava.security.krb5.conf``). The KDC listens
on 127.0.0.1 only, on a free port, and runs in the foreground as our child process.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import shutil
import socket
import subprocess
import time
from pathlib import Path
from types import TracebackType

__all__ = ["KdcUnavailable", "MiniKdc", "kdc_missing_reason"]

HOST = "127.0.0.1"
DEFAULT_REALM = "AIOKAFKA.TEST"
_TOOLS = ("krb5kdc", "kdb5_util", "kadmin.local")
# Debian installs the KDC tools in /usr/sbin, which is not on every user's PATH.
_SEARCH_PATH = os.pathsep.join([os.environ.get("PATH", ""), "/usr/sbin", "/usr/local/sbin"])


class KdcUnavailable(RuntimeError):
    """The KDC could not be set up or started; the message says why."""


def _which(tool: str) -> str | None:
    return shutil.which(tool, path=_SEARCH_PATH)


def kdc_missing_reason() -> str | None:
    """Why no KDC can run here (a missing program), or ``None`` if one can."""
    missing = [tool for tool in _TOOLS if _which(tool) is None]
    if missing:
        return (
            f"MIT Kerberos KDC programs not installed ({', '.join(missing)}); "
            "`make install-kerberos` installs krb5-kdc krb5-admin-server krb5-user libkrb5-dev"
        )
    return None


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind((HOST, 0))
        port: int = sock.getsockname()[1]
        return port


class MiniKdc:
    """One realm, one KDC process, all state in ``work_dir``.

    Args:
        work_dir: An empty or new directory owned by the caller (e.g. a pytest tmp dir).
        realm: The realm name.
    """

    def __init__(self, work_dir: Path, realm: str = DEFAULT_REALM) -> None:
        self.dir = Path(work_dir)
        self.realm = realm
        self.port = 0
        self._process: subprocess.Popen[bytes] | None = None

    @property
    def krb5_conf(self) -> Path:
        """The client/Java configuration naming this realm's KDC."""
        return self.dir / "krb5.conf"

    @property
    def kdc_conf(self) -> Path:
        return self.dir / "kdc.conf"

    @property
    def log_file(self) -> Path:
        return self.dir / "kdc.log"

    @property
    def running(self) -> bool:
        return self._process is not None and self._process.poll() is None

    def _env(self) -> dict[str, str]:
        return {
            **os.environ,
            "KRB5_CONFIG": str(self.krb5_conf),
            "KRB5_KDC_PROFILE": str(self.kdc_conf),
        }

    def _run(self, *args: str) -> str:
        tool = _which(args[0])
        if tool is None:
            raise KdcUnavailable(kdc_missing_reason() or f"{args[0]} not found")
        done = subprocess.run(
            [tool, *args[1:]],
            env=self._env(),
            capture_output=True,
            text=True,
            timeout=60,
            stdin=subprocess.DEVNULL,
            check=False,
        )
        if done.returncode != 0:
            raise KdcUnavailable(
                f"{' '.join(args)} failed ({done.returncode}): {done.stderr or done.stdout}"
            )
        return done.stdout

    def _write_configs(self) -> None:
        d = self.dir
        # TCP only (udp_preference_limit = 1): tickets with PACs can exceed a datagram.
        self.krb5_conf.write_text(
            "[libdefaults]\n"
            f" default_realm = {self.realm}\n"
            " dns_lookup_kdc = false\n"
            " dns_lookup_realm = false\n"
            " dns_canonicalize_hostname = false\n"
            " rdns = false\n"
            " udp_preference_limit = 1\n"
            " ticket_lifetime = 1h\n"
            f" default_ccache_name = FILE:{d / 'ccache-default'}\n"
            "[realms]\n"
            f" {self.realm} = {{\n"
            f"  kdc = {HOST}:{self.port}\n"
            " }\n"
            "[domain_realm]\n"
            f" localhost = {self.realm}\n"
            f" .localhost = {self.realm}\n"
        )
        self.kdc_conf.write_text(
            "[kdcdefaults]\n"
            f" kdc_listen = {HOST}:{self.port}\n"
            f" kdc_tcp_listen = {HOST}:{self.port}\n"
            "[realms]\n"
            f" {self.realm} = {{\n"
            f"  database_name = {d / 'principal'}\n"
            f"  key_stash_file = {d / 'stash'}\n"
            f"  acl_file = {d / 'kadm5.acl'}\n"
            f"  kdc_listen = {HOST}:{self.port}\n"
            f"  kdc_tcp_listen = {HOST}:{self.port}\n"
            "  max_life = 1h\n"
            "  max_renewable_life = 1h\n"
            "  supported_enctypes = aes256-cts-hmac-sha1-96:normal"
            " aes128-cts-hmac-sha1-96:normal\n"
            " }\n"
            "[logging]\n"
            f" kdc = FILE:{self.log_file}\n"
            f" default = FILE:{self.log_file}\n"
        )
        (d / "kadm5.acl").write_text("")

    def start(self, timeout: float = 30.0) -> MiniKdc:
        """Create the realm's database and start the KDC; returns once it accepts TCP.

        Raises:
            KdcUnavailable: a program is missing, a step failed, or the KDC did not
                come up within ``timeout`` seconds (the message has its log).
        """
        reason = kdc_missing_reason()
        if reason is not None:
            raise KdcUnavailable(reason)
        self.dir.mkdir(parents=True, exist_ok=True)
        self.port = _free_port()
        self._write_configs()
        # The master password protects only this throwaway database (stashed beside it).
        self._run("kdb5_util", "create", "-s", "-r", self.realm, "-P", secrets.token_hex(16))
        kdc = _which("krb5kdc")
        assert kdc is not None
        with (self.dir / "krb5kdc.stdout").open("wb") as out:
            # -n: stay in the foreground, as our child, so stop() can end it.
            self._process = subprocess.Popen(
                [kdc, "-n", "-r", self.realm],
                env=self._env(),
                stdout=out,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
                start_new_session=True,
            )
        deadline = time.monotonic() + timeout
        while True:
            if not self.running:
                raise KdcUnavailable(f"krb5kdc exited:\n{self._log_tail()}")
            with contextlib.suppress(OSError), socket.create_connection((HOST, self.port), 1):
                return self
            if time.monotonic() > deadline:
                self.stop()
                raise KdcUnavailable(
                    f"krb5kdc not listening after {timeout} s:\n{self._log_tail()}"
                )
            time.sleep(0.1)

    def _log_tail(self) -> str:
        parts = []
        for path in (self.log_file, self.dir / "krb5kdc.stdout"):
            with contextlib.suppress(OSError):
                parts.append("\n".join(path.read_text(errors="replace").splitlines()[-20:]))
        return "\n".join(parts)

    def principal(self, name: str) -> str:
        """``name`` qualified with the realm."""
        return name if "@" in name else f"{name}@{self.realm}"

    def add_principal(self, name: str) -> Path:
        """Create ``name`` with a random key and export it to ``<name>.keytab``.

        Returns:
            The keytab's path.
        """
        principal = self.principal(name)
        keytab = self.dir / (name.replace("/", "_") + ".keytab")
        self._run("kadmin.local", "-r", self.realm, "-q", f"addprinc -randkey {principal}")
        self._run("kadmin.local", "-r", self.realm, "-q", f"ktadd -k {keytab} {principal}")
        return keytab

    def client_env(self, keytab: Path | None, cache: Path | None = None) -> dict[str, str]:
        """Environment for an MIT-krb5 client (the ``gssapi`` package) of this realm.

        Args:
            keytab: The client keytab initial credentials are taken from
                (``KRB5_CLIENT_KTNAME``); ``None`` for a client without any.
            cache: The credential cache (``KRB5CCNAME``); default a file in the realm's
                directory, so nothing of the user's own tickets is used or changed.
        """
        ccache = cache if cache is not None else self.dir / "ccache-client"
        env = {"KRB5_CONFIG": str(self.krb5_conf), "KRB5CCNAME": f"FILE:{ccache}"}
        # A keytab that does not exist stands for "no credentials at all".
        env["KRB5_CLIENT_KTNAME"] = f"FILE:{keytab if keytab else self.dir / 'none.keytab'}"
        return env

    def stop(self, timeout: float = 10.0) -> None:
        """Terminate the KDC (SIGKILL if it does not exit within ``timeout``)."""
        process, self._process = self._process, None
        if process is None or process.poll() is not None:
            return
        process.terminate()
        try:
            process.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=timeout)

    def __enter__(self) -> MiniKdc:
        return self if self.running else self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()
