"""Streams a Canyon server's binary log with python-mysql-replication (the
library CDC tools such as Maxwell-style consumers are built on) and prints
one JSON line per event it decodes: GTIDs, statements, and every row image
with its column names. Blocking: it exits once it has seen a write to the
table `stop`, or after a deadline (exit status 2).

Usage: stream.py PORT PASSWORD [AUTO_POSITION_GTID_SET]
"""
import datetime
import decimal
import json
import sys
import time

from pymysqlreplication import BinLogStreamReader
from pymysqlreplication.event import GtidEvent, QueryEvent, RotateEvent
from pymysqlreplication.row_event import DeleteRowsEvent, UpdateRowsEvent, WriteRowsEvent


def plain(v):
    if isinstance(v, bytes):
        return "0x" + v.hex()
    if isinstance(v, (datetime.date, datetime.datetime, datetime.timedelta, decimal.Decimal)):
        return str(v)
    if isinstance(v, set):
        return sorted(v)
    if isinstance(v, dict):
        return {plain(k): plain(x) for k, x in v.items()}
    if isinstance(v, list):
        return [plain(x) for x in v]
    return v


def main():
    port, password = int(sys.argv[1]), sys.argv[2]
    kwargs = {}
    if len(sys.argv) > 3:
        kwargs["auto_position"] = sys.argv[3]
    stream = BinLogStreamReader(
        connection_settings={"host": "127.0.0.1", "port": port, "user": "root", "passwd": password},
        server_id=4242,
        blocking=True,
        resume_stream=False,
        **kwargs,
    )
    deadline = time.time() + 60
    for ev in stream:
        if isinstance(ev, GtidEvent):
            print(json.dumps({"gtid": ev.gtid}), flush=True)
        elif isinstance(ev, QueryEvent):
            print(json.dumps({"query": ev.query}), flush=True)
        elif isinstance(ev, RotateEvent):
            print(json.dumps({"rotate": ev.next_binlog}), flush=True)
        elif isinstance(ev, (WriteRowsEvent, UpdateRowsEvent, DeleteRowsEvent)):
            for row in ev.rows:
                print(json.dumps({"kind": type(ev).__name__, "table": ev.table, "row": plain(row)}), flush=True)
            if ev.table == "stop":
                stream.close()
                return 0
        if time.time() > deadline:
            stream.close()
            return 2
    return 2


if __name__ == "__main__":
    sys.exit(main())
