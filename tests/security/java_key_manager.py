"""Java's own answer to which key a broker serves: the JDK's default KeyManagerFactory (SunX509, what
Kafka's ssl.keymanager.algorithm defaults to) initialised with a store as Kafka's DefaultSslEngineFactory
initialises it, asked for the server alias of each key type the TLS handshake asks for; a JDK TLS server
on that key manager, to see which certificate Java presents to a client; and stores of many keys
written by Java itself (KeyStore.setKeyEntry), one JVM for all of them."""

from __future__ import annotations

import shutil
import subprocess
import tempfile
from pathlib import Path

JAVA = shutil.which("java")
SOURCE = """
import java.io.*;
import java.security.KeyStore;
import javax.net.ssl.*;

public class KeyChoice {
    static KeyManagerFactory factory(String path, String type, String storePw, String keyPw) throws Exception {
        KeyStore store = KeyStore.getInstance(type);
        try (FileInputStream in = new FileInputStream(path)) { store.load(in, storePw.toCharArray()); }
        KeyManagerFactory factory = KeyManagerFactory.getInstance(KeyManagerFactory.getDefaultAlgorithm());
        factory.init(store, keyPw.toCharArray());
        return factory;
    }

    public static void main(String[] args) throws Exception {
        if (args[0].equals("merge")) {  // merge OUT TYPE STOREPW KEYPW (ALIAS P12)...: each P12 has the STOREPW
            KeyStore out = KeyStore.getInstance(args[2]);
            out.load(null, null);
            for (int i = 5; i + 1 < args.length; i += 2) {
                KeyStore in = KeyStore.getInstance("PKCS12");
                try (FileInputStream f = new FileInputStream(args[i + 1])) { in.load(f, args[3].toCharArray()); }
                String alias = in.aliases().nextElement();
                out.setKeyEntry(args[i], in.getKey(alias, args[3].toCharArray()), args[4].toCharArray(),
                                in.getCertificateChain(alias));
            }
            try (FileOutputStream f = new FileOutputStream(args[1])) { out.store(f, args[3].toCharArray()); }
            return;
        }
        if (args[0].equals("serve")) {  // serve STORE TYPE STOREPW KEYPW CONNECTIONS: the port, then handshakes
            SSLContext context = SSLContext.getInstance("TLS");
            context.init(factory(args[1], args[2], args[3], args[4]).getKeyManagers(), null, null);
            try (SSLServerSocket server = (SSLServerSocket) context.getServerSocketFactory().createServerSocket(0)) {
                System.out.println(server.getLocalPort());
                System.out.flush();
                for (int i = 0; i < Integer.parseInt(args[5]); i++) {
                    try (SSLSocket s = (SSLSocket) server.accept()) { s.startHandshake(); s.getInputStream().read(); }
                    catch (IOException e) { }
                }
            }
            return;
        }
        KeyManagerFactory factory;  // choose STORE TYPE STOREPW KEYPW KEYTYPE...
        try { factory = factory(args[1], args[2], args[3], args[4]); }
        catch (Exception e) { System.out.println("refused " + e); return; }
        X509KeyManager manager = (X509KeyManager) factory.getKeyManagers()[0];
        StringBuilder out = new StringBuilder();
        for (int i = 5; i < args.length; i++)
            out.append(i > 5 ? " " : "").append(args[i]).append('=')
               .append(manager.chooseServerAlias(args[i], null, null));
        System.out.println(out);
    }
}
"""
_compiled: dict[str, str] = {}


def _classpath() -> str:
    if "dir" not in _compiled:
        d = tempfile.mkdtemp(prefix="keychoice-")
        (Path(d) / "KeyChoice.java").write_text(SOURCE)
        made = subprocess.run([shutil.which("javac") or "javac", "-d", d, str(Path(d) / "KeyChoice.java")],
                              capture_output=True, text=True, timeout=120)
        assert made.returncode == 0, made.stderr
        _compiled["dir"] = d
    return _compiled["dir"]


def _java(*args: str) -> str:
    run = subprocess.run([JAVA, "-cp", _classpath(), "KeyChoice", *args], capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr
    return run.stdout.strip()


def java_key_manager(store, kind: str, key_password: str, store_password: str = "store-secret",
                     key_types: tuple[str, ...] = ("RSA", "EC")) -> str:
    """'RSA=<alias> EC=<alias>' (null: none), or 'refused <the exception>' where Java's init fails."""
    return _java("choose", str(store), kind, store_password, key_password, *key_types)


def java_merged_store(out, kind: str, keys: dict[str, Path], store_password: str, key_password: str) -> None:
    """A store of ``kind`` written by Java, with a key entry per alias of ``keys`` (alias: a PKCS12 file
    holding that key, encrypted with ``store_password``)."""
    _java("merge", str(out), kind, store_password, key_password, *(x for kv in keys.items() for x in map(str, kv)))


class JavaTlsServer:
    """A JDK TLS server on Java's key manager for a store, for ``connections`` handshakes."""

    def __init__(self, store, kind: str, store_password: str, key_password: str, connections: int):
        self.proc = subprocess.Popen([JAVA, "-cp", _classpath(), "KeyChoice", "serve", str(store), kind,
                                      store_password, key_password, str(connections)],
                                     stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        self.port = int(self.proc.stdout.readline())

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.proc.kill()
        self.proc.wait(timeout=30)
        self.proc.stdout.close()
        self.proc.stderr.close()
