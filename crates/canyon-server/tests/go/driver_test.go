// Go's database/sql with github.com/go-sql-driver/mysql against Canyon.
//
// tests/drivers_go.rs starts a server and runs `go test` here with CANYON_HOST,
// CANYON_PORT, CANYON_USER and CANYON_PASSWORD set. Every test runs twice: with
// interpolateParams=false (placeholders become server-side prepared statements,
// COM_STMT_PREPARE / EXECUTE, binary results) and with interpolateParams=true (the
// driver escapes the parameters into COM_QUERY text, text results). parseTime=true
// throughout, so DATE / DATETIME columns scan into time.Time.
package drivers

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"
)

// 4-byte UTF-8 (emoji, musical symbol) and characters the interpolating escaper
// must handle: quotes, backslash, NUL, newline, ^Z.
const text = "héllo wörld – 日本語 🚀🦀 𝄞 'q' \"dq\" back\\slash nul\x00 nl\n ctrlz\x1a"

var modes = []struct {
	name   string
	params string
}{
	{"server-prepared", "interpolateParams=false"},
	{"interpolated", "interpolateParams=true"},
}

// dsn returns the DSN for db with extra parameters; skips outside the Rust harness.
func dsn(t *testing.T, db, params string) string {
	t.Helper()
	port := os.Getenv("CANYON_PORT")
	if port == "" {
		t.Skip("CANYON_PORT is not set: run through tests/drivers_go.rs")
	}
	host := os.Getenv("CANYON_HOST")
	if host == "" {
		host = "127.0.0.1"
	}
	cfg := mysql.NewConfig()
	cfg.User = os.Getenv("CANYON_USER")
	cfg.Passwd = os.Getenv("CANYON_PASSWORD")
	cfg.Net = "tcp"
	cfg.Addr = host + ":" + port
	cfg.DBName = db
	s := cfg.FormatDSN()
	sep := "?"
	if strings.Contains(s, "?") {
		sep = "&"
	}
	return s + sep + "parseTime=true&" + params
}

// withDB runs f once per mode with a fresh database, dropped afterwards.
func withDB(t *testing.T, f func(t *testing.T, db *sql.DB)) {
	for i, m := range modes {
		t.Run(m.name, func(t *testing.T) {
			name := fmt.Sprintf("go_%s_%d", strings.ToLower(strings.ReplaceAll(t.Name(), "/", "_")), i)
			name = strings.ReplaceAll(name, "-", "_")
			admin, err := sql.Open("mysql", dsn(t, "", m.params))
			must(t, err)
			defer admin.Close()
			exec(t, admin, "CREATE DATABASE "+name)
			defer exec(t, admin, "DROP DATABASE "+name)
			db, err := sql.Open("mysql", dsn(t, name, m.params))
			must(t, err)
			defer db.Close()
			f(t, db)
		})
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func exec(t *testing.T, db interface {
	Exec(string, ...any) (sql.Result, error)
}, q string, args ...any) sql.Result {
	t.Helper()
	r, err := db.Exec(q, args...)
	if err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	return r
}

// mysqlErr returns the MySQL error number of err, failing when it is not one.
func mysqlErr(t *testing.T, err error) uint16 {
	t.Helper()
	var me *mysql.MySQLError
	if !errors.As(err, &me) {
		t.Fatalf("expected a *mysql.MySQLError, got %T %v", err, err)
	}
	return me.Number
}

func TestConnectAndPing(t *testing.T) {
	withDB(t, func(t *testing.T, db *sql.DB) {
		must(t, db.Ping())
		var version string
		must(t, db.QueryRow("SELECT VERSION()").Scan(&version))
		if version == "" {
			t.Fatal("empty VERSION()")
		}
		var two int
		var x string
		var null sql.NullString
		must(t, db.QueryRow("SELECT 1 + ?, ?, ?", 1, "x", nil).Scan(&two, &x, &null))
		if two != 2 || x != "x" || null.Valid {
			t.Fatalf("got %d %q %v", two, x, null)
		}
	})
}

func TestTypesRoundTrip(t *testing.T) {
	withDB(t, func(t *testing.T, db *sql.DB) {
		exec(t, db, `CREATE TABLE v (id INT PRIMARY KEY, i BIGINT, u BIGINT UNSIGNED, s VARCHAR(200),
			d DECIMAL(12,3), dt DATE, ts DATETIME, tsf DATETIME(6), b BLOB, f DOUBLE, tf BOOLEAN)`)
		blob := make([]byte, 512)
		for i := range blob {
			blob[i] = byte(i)
		}
		day := time.Date(2024, 2, 29, 0, 0, 0, 0, time.UTC)
		at := time.Date(2024, 2, 29, 13, 14, 15, 0, time.UTC)
		atf := time.Date(1999, 12, 31, 23, 59, 59, 123456000, time.UTC)
		ins := "INSERT INTO v VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
		r := exec(t, db, ins, 1, int64(math.MinInt64), uint64(math.MaxUint64), text, "-12345.678", day, at, atf, blob, 1.5, true)
		if n, _ := r.RowsAffected(); n != 1 {
			t.Fatalf("RowsAffected %d", n)
		}
		exec(t, db, ins, 2, nil, nil, nil, nil, nil, nil, nil, nil, nil, nil)

		var (
			i   int64
			u   uint64
			s   string
			d   string
			dt  time.Time
			ts  time.Time
			tsf time.Time
			b   []byte
			f   float64
			tf  bool
		)
		must(t, db.QueryRow("SELECT i, u, s, d, dt, ts, tsf, b, f, tf FROM v WHERE id = ?", 1).
			Scan(&i, &u, &s, &d, &dt, &ts, &tsf, &b, &f, &tf))
		if i != math.MinInt64 || u != math.MaxUint64 {
			t.Errorf("ints: %d %d", i, u)
		}
		if s != text {
			t.Errorf("string: %q", s)
		}
		if d != "-12345.678" {
			t.Errorf("decimal: %q", d)
		}
		if !dt.Equal(day) || !ts.Equal(at) || !tsf.Equal(atf) {
			t.Errorf("times: %v %v %v", dt, ts, tsf)
		}
		if string(b) != string(blob) {
			t.Errorf("blob: %d bytes", len(b))
		}
		if f != 1.5 || !tf {
			t.Errorf("double/bool: %v %v", f, tf)
		}

		var (
			ni  sql.NullInt64
			ns  sql.NullString
			ndt sql.NullTime
			nb  []byte
			nf  sql.NullFloat64
		)
		must(t, db.QueryRow("SELECT i, s, dt, b, f FROM v WHERE id = ?", 2).Scan(&ni, &ns, &ndt, &nb, &nf))
		if ni.Valid || ns.Valid || ndt.Valid || nb != nil || nf.Valid {
			t.Errorf("NULLs: %v %v %v %v %v", ni, ns, ndt, nb, nf)
		}

		// A parameter in WHERE matches the stored string exactly.
		var id int
		must(t, db.QueryRow("SELECT id FROM v WHERE s = ?", text).Scan(&id))
		if id != 1 {
			t.Errorf("lookup by string: %d", id)
		}
		must(t, db.QueryRow("SELECT id FROM v WHERE ts = ?", at).Scan(&id))
		if id != 1 {
			t.Errorf("lookup by time: %d", id)
		}
		var n int
		must(t, db.QueryRow("SELECT COUNT(*) FROM v WHERE i IS NULL").Scan(&n))
		if n != 1 {
			t.Errorf("IS NULL count %d", n)
		}
	})
}

func TestPreparedStatements(t *testing.T) {
	withDB(t, func(t *testing.T, db *sql.DB) {
		exec(t, db, "CREATE TABLE a (id INT AUTO_INCREMENT PRIMARY KEY, s VARCHAR(20) NOT NULL, n INT, UNIQUE KEY (s))")
		ins, err := db.Prepare("INSERT INTO a (s, n) VALUES (?, ?)")
		must(t, err)
		defer ins.Close()
		for k, s := range []string{"x", "y", "z"} {
			var n any = k
			if k == 1 {
				n = nil
			}
			r, err := ins.Exec(s, n)
			must(t, err)
			if id, _ := r.LastInsertId(); id != int64(k+1) {
				t.Errorf("LastInsertId %d, want %d", id, k+1)
			}
		}
		sel, err := db.Prepare("SELECT id, n FROM a WHERE s = ?")
		must(t, err)
		defer sel.Close()
		for k, s := range []string{"x", "y", "z"} {
			var id int
			var n sql.NullInt64
			must(t, sel.QueryRow(s).Scan(&id, &n))
			if id != k+1 || n.Valid != (k != 1) {
				t.Errorf("%s: id %d n %v", s, id, n)
			}
		}
		rows, err := db.Query("SELECT s FROM a WHERE id >= ? ORDER BY id DESC", 2)
		must(t, err)
		var got []string
		for rows.Next() {
			var s string
			must(t, rows.Scan(&s))
			got = append(got, s)
		}
		must(t, rows.Err())
		must(t, rows.Close())
		if strings.Join(got, ",") != "z,y" {
			t.Errorf("rows: %v", got)
		}
		r := exec(t, db, "UPDATE a SET n = ? WHERE id <= ?", 7, 2)
		if n, _ := r.RowsAffected(); n != 2 {
			t.Errorf("UPDATE RowsAffected %d", n)
		}
		r = exec(t, db, "DELETE FROM a WHERE s IN (?, ?)", "x", "nope")
		if n, _ := r.RowsAffected(); n != 1 {
			t.Errorf("DELETE RowsAffected %d", n)
		}
	})
}

func TestTransactions(t *testing.T) {
	withDB(t, func(t *testing.T, db *sql.DB) {
		exec(t, db, "CREATE TABLE acct (id INT PRIMARY KEY, bal BIGINT NOT NULL)")
		exec(t, db, "INSERT INTO acct VALUES (1, 100), (2, 100)")
		total := func() (int64, int64) {
			var a, b int64
			must(t, db.QueryRow("SELECT (SELECT bal FROM acct WHERE id = 1), (SELECT bal FROM acct WHERE id = 2)").Scan(&a, &b))
			return a, b
		}

		tx, err := db.Begin()
		must(t, err)
		exec(t, tx, "UPDATE acct SET bal = bal - ? WHERE id = ?", 30, 1)
		exec(t, tx, "UPDATE acct SET bal = bal + ? WHERE id = ?", 30, 2)
		if a, b := total(); a != 100 || b != 100 {
			t.Errorf("uncommitted writes visible: %d %d", a, b)
		}
		var inTx int64
		must(t, tx.QueryRow("SELECT bal FROM acct WHERE id = ?", 1).Scan(&inTx))
		if inTx != 70 {
			t.Errorf("own write not visible: %d", inTx)
		}
		must(t, tx.Commit())
		if a, b := total(); a != 70 || b != 130 {
			t.Errorf("after commit: %d %d", a, b)
		}

		tx, err = db.Begin()
		must(t, err)
		exec(t, tx, "DELETE FROM acct")
		exec(t, tx, "INSERT INTO acct VALUES (?, ?)", 3, 1)
		must(t, tx.Rollback())
		if a, b := total(); a != 70 || b != 130 {
			t.Errorf("after rollback: %d %d", a, b)
		}
		var n int
		must(t, db.QueryRow("SELECT COUNT(*) FROM acct").Scan(&n))
		if n != 2 {
			t.Errorf("rows after rollback: %d", n)
		}

		// Read-only and isolation-level options become START TRANSACTION READ ONLY
		// and SET TRANSACTION ISOLATION LEVEL.
		ctx := context.Background()
		tx, err = db.BeginTx(ctx, &sql.TxOptions{ReadOnly: true, Isolation: sql.LevelReadCommitted})
		must(t, err)
		_, err = tx.Exec("UPDATE acct SET bal = 0")
		if code := mysqlErr(t, err); code != 1792 {
			t.Errorf("write in a read-only transaction: %d", code)
		}
		must(t, tx.Rollback())
		tx, err = db.BeginTx(ctx, &sql.TxOptions{Isolation: sql.LevelSerializable})
		must(t, err)
		must(t, tx.QueryRow("SELECT COUNT(*) FROM acct").Scan(&n))
		must(t, tx.Commit())
	})
}

func TestErrors(t *testing.T) {
	withDB(t, func(t *testing.T, db *sql.DB) {
		exec(t, db, "CREATE TABLE u (id INT PRIMARY KEY, s VARCHAR(10) NOT NULL)")
		exec(t, db, "INSERT INTO u VALUES (?, ?)", 1, "a")
		_, err := db.Exec("INSERT INTO u VALUES (?, ?)", 1, "b")
		if code := mysqlErr(t, err); code != 1062 {
			t.Errorf("duplicate key: %d", code)
		}
		var me *mysql.MySQLError
		errors.As(err, &me)
		if string(me.SQLState[:]) != "23000" {
			t.Errorf("SQLSTATE %q", me.SQLState)
		}
		_, err = db.Exec("INSERT INTO u VALUES (?, ?)", 2, nil)
		if code := mysqlErr(t, err); code != 1048 {
			t.Errorf("NULL into NOT NULL: %d", code)
		}
		_, err = db.Query("SELECT * FROM missing WHERE id = ?", 1)
		if code := mysqlErr(t, err); code != 1146 {
			t.Errorf("missing table: %d", code)
		}
		_, err = db.Exec("SELEC ?", 1)
		if code := mysqlErr(t, err); code != 1064 {
			t.Errorf("syntax error: %d", code)
		}
		// The pool's connections are still good.
		var n int
		must(t, db.QueryRow("SELECT COUNT(*) FROM u").Scan(&n))
		if n != 1 {
			t.Errorf("count %d", n)
		}
	})
}

func TestContextCancel(t *testing.T) {
	withDB(t, func(t *testing.T, db *sql.DB) {
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		if err := db.QueryRowContext(ctx, "SELECT 1").Scan(new(int)); !errors.Is(err, context.Canceled) {
			t.Errorf("cancelled context: %v", err)
		}
		var one int
		must(t, db.QueryRow("SELECT 1").Scan(&one))
	})
}
