"""Java's own answer to which key a broker serves: the JDK's default KeyManagerFactory (SunX509, what
Kafka's ssl.keymanager.algorithm defaults to) initialised with a store as Kafka's DefaultSslEngineFactory
initialises it, asked for the server alias of each key type the TLS handshake asks for."""

from __future__ import annotations

import shutil
import subprocess
import tempfile
from pathlib import Path

JAVA = shutil.which("java")
SOURCE = """
import java.io.FileInputStream;
import java.security.KeyStore;
import javax.net.ssl.KeyManagerFactory;
import javax.net.ssl.X509KeyManager;

public class KeyChoice {
    public static void main(String[] args) throws Exception {
        KeyStore store = KeyStore.getInstance(args[1]);
        try (FileInputStream in = new FileInputStream(args[0])) { store.load(in, args[2].toCharArray()); }
        KeyManagerFactory factory = KeyManagerFactory.getInstance(KeyManagerFactory.getDefaultAlgorithm());
        try { factory.init(store, args[3].toCharArray()); }
        catch (Exception e) { System.out.println("refused " + e); return; }
        X509KeyManager manager = (X509KeyManager) factory.getKeyManagers()[0];
        StringBuilder out = new StringBuilder();
        for (int i = 4; i < args.length; i++)
            out.append(i > 4 ? " " : "").append(args[i]).append('=').append(manager.chooseServerAlias(args[i], null, null));
        System.out.println(out);
    }
}
"""


def java_key_manager(store, kind: str, key_password: str, store_password: str = "store-secret",
                     key_types: tuple[str, ...] = ("RSA", "EC")) -> str:
    """'RSA=<alias> EC=<alias>' (null: none), or 'refused <the exception>' where Java's init fails."""
    with tempfile.TemporaryDirectory() as d:
        (Path(d) / "KeyChoice.java").write_text(SOURCE)
        run = subprocess.run([JAVA, str(Path(d) / "KeyChoice.java"), str(store), kind, store_password, key_password,
                              *key_types], capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr
    return run.stdout.strip()
