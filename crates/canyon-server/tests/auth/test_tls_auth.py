"""TLS and caching_sha2_password against a Canyon server with a certificate,
through real clients: PyMySQL, mysql-connector-python and the mariadb CLI
(libmariadb's own caching_sha2_password plugin).

Run by tests/tls_auth.rs with CANYON_HOST, CANYON_PORT, CANYON_USER,
CANYON_PASSWORD, CANYON_SOCKET (the server's Unix socket), CANYON_TLS_CA (the
CA that signed the server's certificate) and CANYON_OTHER_CA (one that did
not) set.
"""

import os
import subprocess

import mysql.connector
import pymysql
import pytest

HOST = os.environ["CANYON_HOST"]
PORT = int(os.environ["CANYON_PORT"])
ROOT = os.environ["CANYON_USER"]
ROOT_PW = os.environ["CANYON_PASSWORD"]
SOCKET = os.environ["CANYON_SOCKET"]
CA = os.environ["CANYON_TLS_CA"]
OTHER_CA = os.environ["CANYON_OTHER_CA"]


def root():
    return pymysql.connect(host=HOST, port=PORT, user=ROOT, password=ROOT_PW, autocommit=True)


def run_as_root(*statements):
    with root() as c:
        cur = c.cursor()
        for s in statements:
            cur.execute(s)


def sha2_user(name, password):
    run_as_root(
        f"CREATE USER '{name}'@'%' IDENTIFIED WITH caching_sha2_password BY '{password}'",
        f"GRANT ALL ON *.* TO '{name}'@'%'",
    )


def plain(user, password):
    return pymysql.connect(host=HOST, port=PORT, user=user, password=password, ssl_disabled=True)


def tls(user, password):
    return pymysql.connect(
        host=HOST, port=PORT, user=user, password=password, ssl={"ca": CA, "check_hostname": True}
    )


def errno(connect):
    """The MySQL error number a connection attempt fails with."""
    with pytest.raises(pymysql.err.MySQLError) as e:
        connect()
    return e.value.args[0]


def whoami(conn):
    with conn:
        cur = conn.cursor()
        cur.execute("SELECT CURRENT_USER()")
        return cur.fetchone()[0]


def mariadb(*args):
    return subprocess.run(
        ["mariadb", "-h", HOST, "-P", str(PORT), "--batch", "--skip-column-names", *args],
        capture_output=True,
        text=True,
        timeout=60,
    )


def test_tls_is_negotiated_and_the_certificate_verifies():
    c = tls(ROOT, ROOT_PW)
    assert c._sock.version() in ("TLSv1.2", "TLSv1.3")
    with c:
        cur = c.cursor()
        cur.execute("SELECT 6 * 7")
        assert cur.fetchone() == (42,)
    # PyMySQL's default is "preferred": TLS whenever the server offers it.
    d = pymysql.connect(host=HOST, port=PORT, user=ROOT, password=ROOT_PW)
    assert d._sock.version() in ("TLSv1.2", "TLSv1.3")
    d.close()
    # ... and a plain connection really is plain.
    p = plain(ROOT, ROOT_PW)
    assert not hasattr(p._sock, "version")
    p.close()
    # A CA that did not sign the server's certificate: the TLS handshake fails,
    # which shows the session really ran inside TLS with that certificate.
    assert errno(lambda: pymysql.connect(host=HOST, port=PORT, user=ROOT, password=ROOT_PW,
                                         ssl={"ca": OTHER_CA})) == 2003


def test_mariadb_cli_over_verified_tls():
    out = mariadb("--ssl", f"--ssl-ca={CA}", "--ssl-verify-server-cert",
                  f"-u{ROOT}", f"-p{ROOT_PW}", "-e", "SELECT CURRENT_USER()")
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == f"{ROOT}@%"
    bad = mariadb("--ssl", f"--ssl-ca={OTHER_CA}", "--ssl-verify-server-cert",
                  f"-u{ROOT}", f"-p{ROOT_PW}", "-e", "SELECT 1")
    assert bad.returncode != 0
    assert "2026" in bad.stderr or "SSL" in bad.stderr, bad.stderr


def test_caching_sha2_full_authentication_then_fast_path():
    sha2_user("sha_a", "pw-one")
    # First login over plain TCP: the cache is empty, so the server asks for the
    # password, which may not cross plain TCP (there is no RSA key): refused.
    assert errno(lambda: plain("sha_a", "pw-one")) == 1045
    # Over TLS the client sends it inside TLS: accepted, and the hash is cached.
    assert whoami(tls("sha_a", "pw-one")) == "sha_a@%"
    # Now the fast path (a scramble, no password) works over plain TCP.
    assert whoami(plain("sha_a", "pw-one")) == "sha_a@%"
    c = mysql.connector.connect(host=HOST, port=PORT, user="sha_a", password="pw-one",
                                ssl_disabled=True)
    cur = c.cursor()
    cur.execute("SELECT CURRENT_USER()")
    assert cur.fetchone()[0] == "sha_a@%"
    c.close()
    # Wrong passwords: on the fast path and in full authentication.
    assert errno(lambda: plain("sha_a", "pw-two")) == 1045
    assert errno(lambda: tls("sha_a", "pw-two")) == 1045
    assert errno(lambda: tls("sha_a", "")) == 1045


def test_a_new_password_is_not_served_from_the_cache():
    sha2_user("sha_b", "old")
    assert whoami(tls("sha_b", "old")) == "sha_b@%"
    assert whoami(plain("sha_b", "old")) == "sha_b@%"
    run_as_root("ALTER USER 'sha_b'@'%' IDENTIFIED BY 'new'")
    assert errno(lambda: plain("sha_b", "old")) == 1045
    assert errno(lambda: plain("sha_b", "new")) == 1045  # not learnt yet
    assert errno(lambda: tls("sha_b", "old")) == 1045
    assert whoami(tls("sha_b", "new")) == "sha_b@%"
    assert whoami(plain("sha_b", "new")) == "sha_b@%"


def test_the_unix_socket_is_secure_for_full_authentication():
    sha2_user("sha_c", "via-socket")
    c = pymysql.connect(unix_socket=SOCKET, user="sha_c", password="via-socket")
    assert whoami(c) == "sha_c@%"


def test_mariadb_cli_caching_sha2_plugin():
    sha2_user("sha_d", "cli-pw")
    first = mariadb("--ssl", f"--ssl-ca={CA}", "-usha_d", "-pcli-pw", "-e", "SELECT CURRENT_USER()")
    assert first.returncode == 0, first.stderr
    assert first.stdout.strip() == "sha_d@%"
    fast = mariadb("--skip-ssl", "-usha_d", "-pcli-pw", "-e", "SELECT CURRENT_USER()")
    assert fast.returncode == 0, fast.stderr
    assert fast.stdout.strip() == "sha_d@%"
    # A wrong password misses the fast path; libmariadb then asks for the RSA
    # key Canyon does not have, and reports that (2061) rather than the 1045 the
    # server sends — the login is refused either way.
    wrong = mariadb("--skip-ssl", "-usha_d", "-pnope", "-e", "SELECT 1")
    assert wrong.returncode != 0
    assert "1045" in wrong.stderr or "2061" in wrong.stderr, wrong.stderr
    wrong_tls = mariadb("--ssl", f"--ssl-ca={CA}", "-usha_d", "-pnope", "-e", "SELECT 1")
    assert wrong_tls.returncode != 0 and "1045" in wrong_tls.stderr, wrong_tls.stderr


def test_native_accounts_accept_sha2_clients_and_unknown_users_fail_alike():
    run_as_root("CREATE USER 'nat'@'%' IDENTIFIED WITH mysql_native_password BY 'n-pw'",
                "GRANT ALL ON *.* TO 'nat'@'%'")
    # mysql-connector-python starts with caching_sha2_password; the server
    # switches it to the account's plugin.
    c = mysql.connector.connect(host=HOST, port=PORT, user="nat", password="n-pw",
                                auth_plugin="caching_sha2_password", ssl_disabled=True)
    cur = c.cursor()
    cur.execute("SELECT CURRENT_USER()")
    assert cur.fetchone()[0] == "nat@%"
    c.close()
    for connect in (plain, tls):
        assert errno(lambda: connect("nat", "wrong")) == 1045
        assert errno(lambda: connect("no_such_user", "n-pw")) == 1045


def test_unknown_plugins_are_refused():
    with root() as c:
        with pytest.raises(pymysql.err.MySQLError) as e:
            c.cursor().execute("CREATE USER 'x'@'%' IDENTIFIED WITH sha256_password BY 'a'")
        assert e.value.args[0] == 1524


def test_change_user_with_mysql_connector():
    run_as_root("CREATE USER 'cu'@'%' IDENTIFIED BY 'cu-pw'", "GRANT ALL ON *.* TO 'cu'@'%'")
    sha2_user("cu_sha", "cu-sha-pw")
    c = mysql.connector.connect(host=HOST, port=PORT, user=ROOT, password=ROOT_PW,
                                ssl_ca=CA, ssl_verify_cert=True)
    cur = c.cursor()
    cur.execute("SET @v = 1")
    c.cmd_change_user(username="cu", password="cu-pw")
    cur = c.cursor()
    cur.execute("SELECT CURRENT_USER(), @v")
    assert cur.fetchone() == ("cu@%", None)
    # Over TLS, a caching_sha2_password account's full authentication works too.
    c.cmd_change_user(username="cu_sha", password="cu-sha-pw")
    cur = c.cursor()
    cur.execute("SELECT CURRENT_USER()")
    assert cur.fetchone()[0] == "cu_sha@%"
    c.close()
