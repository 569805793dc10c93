"""Shared fixtures for the Python driver tests.

The Rust test `tests/drivers_python.rs` starts a Canyon server and runs pytest
with CANYON_HOST, CANYON_PORT, CANYON_USER and CANYON_PASSWORD set. Each test
gets its own database, dropped afterwards.
"""

import os
import uuid

import pytest


def server_params():
    """Host, port, user and password of the server under test."""
    try:
        port = int(os.environ["CANYON_PORT"])
    except KeyError:
        pytest.skip("CANYON_PORT is not set: run these through tests/drivers_python.rs")
    return {
        "host": os.environ.get("CANYON_HOST", "127.0.0.1"),
        "port": port,
        "user": os.environ.get("CANYON_USER", "root"),
        "password": os.environ.get("CANYON_PASSWORD", ""),
    }


@pytest.fixture
def params():
    return server_params()


@pytest.fixture
def dbname(params):
    """A fresh database for one test, created and dropped with PyMySQL."""
    import pymysql

    name = "py_" + uuid.uuid4().hex[:12]
    conn = pymysql.connect(**params)
    with conn.cursor() as cur:
        cur.execute(f"CREATE DATABASE {name}")
    yield name
    with conn.cursor() as cur:
        cur.execute(f"DROP DATABASE IF EXISTS {name}")
    conn.close()
