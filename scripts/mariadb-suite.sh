#!/usr/bin/env bash
# Runs MariaDB's own mysql-test files (Debian's mariadb-test package) against a
# MySQL-protocol server, one file at a time, and prints `name mode verdict` lines.
#
#   scripts/mariadb-suite.sh LIST HOST PORT USER PASSWORD [OUTDIR]
#
# LIST names one test per line as `suite/engines/funcs/t/NAME` (without .test);
# `scripts/mariadb-suite.sh --list issue29|issue30` prints an issue's file list.
# Each file runs twice, in text and with --ps-protocol (prepared statements).
# Before each run the `test` database is dropped and recreated, as
# mysql-test-run's check-testcase would insist, so one file's leftovers never
# decide another's verdict. A verdict is `pass` (exit 0, the output equals the
# .result file), `fail` (first differing line or error in OUTDIR/NAME.MODE.out)
# or `skip` (the file skipped itself).
#
# The expected results are MariaDB's (run under mysql-test-run with
# include/default_mysqld.cnf: character-set-server=latin1, local-infile, ...);
# a server compared here must be configured the same way (for Canyon:
# character_set_server = "latin1", presentation = "mariadb", local_infile = true
# — mariadb-test itself sends files for LOAD DATA LOCAL without being asked).
# See
# docs/compatibility.md for the verdicts and the reasons for each failure.
set -u
MT=/usr/share/mysql/mysql-test

list_issue() {
    local dir=suite/engines/funcs
    case "$1" in
    issue29) prefixes="tc_ ta_ ix_ db_ ai_ tr_ ld_ load_ sp_ sf_ comment_" ;;
    issue30) prefixes="fu_ jp_ re_ an_ time date datetime" ;;
    *) echo "unknown list $1" >&2; exit 2 ;;
    esac
    for p in $prefixes; do
        for f in "$MT/$dir/t/$p"*.test; do
            [ -e "$f" ] || continue
            local b; b=$(basename "$f" .test)
            # issue30's `time`, `date`, `datetime` are whole names, not prefixes.
            case "$p" in time|date|datetime) [ "$b" = "$p" ] || continue ;; esac
            [ -f "$MT/$dir/r/$b.result" ] && echo "$dir/t/$b"
        done
    done
    if [ "$1" = issue30 ]; then
        for f in "$MT"/suite/engines/iuds/t/*.test; do
            local b; b=$(basename "$f" .test)
            [ -f "$MT/suite/engines/iuds/r/$b.result" ] && echo "suite/engines/iuds/t/$b"
        done
    fi
}

if [ "${1:-}" = --list ]; then list_issue "$2"; exit 0; fi
if [ $# -lt 5 ]; then sed -n 2,20p "$0"; exit 2; fi
LIST=$1 HOST=$2 PORT=$3 USER=$4 PASS=$5 OUT=${6:-$(mktemp -d)}
mkdir -p "$OUT"
client() { mariadb --host="$HOST" --port="$PORT" --user="$USER" --password="$PASS" "$@"; }
cd "$MT" || exit 2
while read -r t; do
    [ -n "$t" ] || continue
    case "$t" in \#*) continue ;; esac
    name=$(basename "$t")
    result="${t%/t/*}/r/$name.result"
    for mode in text ps; do
        client -e "DROP DATABASE IF EXISTS test; CREATE DATABASE test" >/dev/null 2>&1
        extra=""; [ $mode = ps ] && extra=--ps-protocol
        timeout 120 mariadb-test --host="$HOST" --port="$PORT" --user="$USER" \
            --password="$PASS" --database=test --basedir="$MT/" --tmpdir="$OUT" $extra \
            --test-file="$t.test" --result-file="$result" >"$OUT/$name.$mode.out" 2>&1
        rc=$?
        # mysqltest leaves a .reject beside the result file on a mismatch.
        rm -f "${result%.result}.reject" 2>/dev/null
        if [ $rc = 0 ]; then
            if grep -q "^skipped\|Skipping test" "$OUT/$name.$mode.out"; then v=skip; else v=pass; fi
        else v=fail; fi
        echo "$name $mode $v"
    done
done <"$LIST"
