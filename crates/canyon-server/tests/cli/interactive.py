"""The mariadb CLI used interactively, through a pseudo-terminal (as a person
types at it): prompts, `use` with table-name completion loading, the boxed
result tables, `\\s` status, errors, and `exit`.

Run by tests/cli_interactive.rs with CANYON_PORT, CANYON_PASSWORD and
MARIADB_CLI set. Exits non-zero, printing the whole transcript, on the first
expectation that is not met.
"""

import os
import pty
import re
import select
import sys
import time

PORT = os.environ["CANYON_PORT"]
PASSWORD = os.environ["CANYON_PASSWORD"]
CLI = os.environ["MARIADB_CLI"]

transcript = []


def fail(msg):
    sys.stdout.write("".join(transcript))
    sys.stdout.write(f"\n\nFAILED: {msg}\n")
    sys.exit(1)


def expect(fd, pattern, timeout=30):
    """Reads from the terminal until `pattern` (a regex) appears in what was
    read since the last expectation; returns that text."""
    buf = ""
    deadline = time.time() + timeout
    rx = re.compile(pattern)
    while not rx.search(buf):
        left = deadline - time.time()
        if left <= 0:
            transcript.append(buf)
            fail(f"timed out waiting for {pattern!r}")
        ready, _, _ = select.select([fd], [], [], left)
        if not ready:
            continue
        try:
            chunk = os.read(fd, 4096).decode("utf-8", "replace")
        except OSError:
            chunk = ""
        if not chunk:
            transcript.append(buf)
            fail(f"the CLI exited while waiting for {pattern!r}")
        buf += chunk
    transcript.append(buf)
    return buf


def send(fd, line):
    os.write(fd, (line + "\r").encode("utf-8"))


def main():
    env = dict(os.environ, TERM="dumb", MYSQL_HISTFILE="/dev/null")
    pid, fd = pty.fork()
    if pid == 0:
        os.execvpe(
            CLI,
            [CLI, "--no-defaults", "-h127.0.0.1", f"-P{PORT}", "-uroot", f"-p{PASSWORD}",
             "--default-character-set=utf8mb4"],
            env,
        )
    prompt = r"MySQL \[\(none\)\]> "
    banner = expect(fd, prompt)
    if "Server version: 8.0.36-canyon" not in banner:
        fail("the banner names the server version")

    send(fd, "DROP DATABASE IF EXISTS cli;")
    expect(fd, r"Query OK[\s\S]*" + prompt)
    send(fd, "CREATE DATABASE cli;")
    expect(fd, r"Query OK[\s\S]*" + prompt)
    # `use` in an interactive session reads the table names for completion.
    send(fd, "use cli")
    out = expect(fd, r"MySQL \[cli\]> ")
    if "Database changed" not in out:
        fail("use cli: 'Database changed'")
    send(fd, "CREATE TABLE t (id INT PRIMARY KEY, s VARCHAR(10));")
    expect(fd, r"Query OK, 0 rows affected[\s\S]*MySQL \[cli\]> ")
    send(fd, "INSERT INTO t VALUES (1, 'snow ☃'), (2, NULL);")
    expect(fd, r"Query OK, 2 rows affected[\s\S]*Records: 2  Duplicates: 0  Warnings: 0")
    send(fd, "SELECT * FROM t ORDER BY id;")
    out = expect(fd, r"2 rows in set")
    for row in [r"\| id \| s\s+\|", r"\|\s+1 \| snow ☃\s*\|", r"\|\s+2 \| NULL\s+\|"]:
        if not re.search(row, out):
            fail(f"result table row {row!r}")
    # A second `use` reloads completion data now that a table exists.
    send(fd, "use cli")
    expect(fd, r"Database changed")
    send(fd, "\\s")
    out = expect(fd, r"Uptime:.*\n")
    for field in [r"Current database:\s+cli", r"Current user:\s+root@", r"Connection id:\s+\d+",
                  r"Server version:\s+8\.0\.36-canyon"]:
        if not re.search(field, out):
            fail(f"status field {field!r}")
    send(fd, "SELECT * FROM nope;")
    expect(fd, r"ERROR 1146 \(42S02\).*doesn't exist")
    send(fd, "SELECT 6 *\r7;")
    out = expect(fd, r"1 row in set")
    if not re.search(r"\|\s+42 \|", out):
        fail("a statement typed over two lines")
    send(fd, "exit")
    expect(fd, r"Bye")
    _, status = os.waitpid(pid, 0)
    if status != 0:
        fail(f"the CLI exited with status {status}")
    print("interactive session ok")


main()
