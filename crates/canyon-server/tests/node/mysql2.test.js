// mysql2 (npm) against Canyon, with node's built-in test runner.
//
// tests/drivers_node.rs starts a server and runs `node --test` on this file with
// CANYON_HOST, CANYON_PORT, CANYON_USER and CANYON_PASSWORD set and NODE_PATH
// pointing at the modules scripts/install-deps.sh installed (`npm ci` of this
// directory's package-lock.json into ~/.cache/canyon-tools/node).
//
// `query` interpolates parameters on the client (COM_QUERY, text results);
// `execute` prepares on the server (COM_STMT_PREPARE / EXECUTE, binary results).
// Every check runs through both.
'use strict';

const test = require('node:test');
const assert = require('node:assert/strict');
const mysql = require('mysql2/promise');

const TEXT = "héllo wörld – 日本語 🚀🦀 𝄞 'q' \\ \"dq\" nul\0 nl\n";

function params(extra) {
  if (!process.env.CANYON_PORT) {
    throw new Error('CANYON_PORT is not set: run through tests/drivers_node.rs');
  }
  return {
    host: process.env.CANYON_HOST || '127.0.0.1',
    port: Number(process.env.CANYON_PORT),
    user: process.env.CANYON_USER || 'root',
    password: process.env.CANYON_PASSWORD || '',
    charset: 'utf8mb4',
    // DATE / DATETIME values are read and written as UTC.
    timezone: 'Z',
    // BIGINTs beyond 2^53 come back as exact strings.
    supportBigNumbers: true,
    bigNumberStrings: true,
    ...extra,
  };
}

let seq = 0;

// A connection on a fresh database, dropped afterwards.
async function withDb(t, fn) {
  const db = `node_${process.pid}_${seq++}`;
  const admin = await mysql.createConnection(params());
  await admin.query(`CREATE DATABASE ${db}`);
  const conn = await mysql.createConnection(params({ database: db }));
  try {
    await fn(conn, db);
  } finally {
    await conn.end();
    await admin.query(`DROP DATABASE ${db}`);
    await admin.end();
  }
}

const MODES = ['query', 'execute'];

for (const mode of MODES) {
  test(`connect and basic queries (${mode})`, async (t) => {
    await withDb(t, async (conn) => {
      const [rows, fields] = await conn[mode]('SELECT 1 + ? AS two, ? AS x, ? AS n', [1, 'x', null]);
      assert.equal(rows.length, 1);
      assert.equal(Number(rows[0].two), 2);
      assert.equal(rows[0].x, 'x');
      assert.equal(rows[0].n, null);
      assert.deepEqual(fields.map((f) => f.name), ['two', 'x', 'n']);
      await conn.ping();
      const [[v]] = await conn.query('SELECT VERSION() AS v, @@autocommit AS ac');
      assert.ok(v.v.length > 0);
      assert.equal(Number(v.ac), 1);
    });
  });

  test(`types round trip (${mode})`, async (t) => {
    await withDb(t, async (conn) => {
      await conn.query(`CREATE TABLE v (id INT PRIMARY KEY, i BIGINT, s VARCHAR(100), d DECIMAL(12,3),
        dt DATE, ts DATETIME, vb VARBINARY(16), b BLOB, f DOUBLE, flag BOOLEAN)`);
      const blob = Buffer.alloc(1000);
      for (let k = 0; k < blob.length; k++) blob[k] = k & 0xff;
      const vb = Buffer.from([0, 1, 0xff, 0x27, 0x5c]);
      const at = new Date(Date.UTC(2024, 1, 29, 13, 14, 15));
      const ins = 'INSERT INTO v VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)';
      let [res] = await conn[mode](ins, [1, '-9223372036854775808', TEXT, '-12345.678', '2024-02-29', at, vb, blob, 1.5, true]);
      assert.equal(res.affectedRows, 1);
      [res] = await conn[mode](ins, [2, null, null, null, null, null, null, null, null, null]);
      assert.equal(res.affectedRows, 1);

      const [rows] = await conn[mode]('SELECT i, s, d, dt, ts, vb, b, f, flag FROM v WHERE id = ?', [1]);
      const r = rows[0];
      assert.equal(r.i, '-9223372036854775808');
      assert.equal(r.s, TEXT);
      assert.equal(r.d, '-12345.678'); // DECIMAL is a string by default
      assert.ok(r.dt instanceof Date);
      assert.equal(r.dt.toISOString(), '2024-02-29T00:00:00.000Z');
      assert.equal(r.ts.toISOString(), at.toISOString());
      assert.deepEqual(r.vb, vb);
      assert.deepEqual(r.b, blob);
      assert.equal(r.f, 1.5);
      assert.equal(Number(r.flag), 1);

      const [nulls] = await conn[mode]('SELECT i, s, d, dt, ts, vb, b, f, flag FROM v WHERE id = ?', [2]);
      for (const [k, val] of Object.entries(nulls[0])) assert.equal(val, null, `column ${k}`);

      const [found] = await conn[mode]('SELECT id FROM v WHERE s = ? AND dt = ? AND ts = ?', [TEXT, '2024-02-29', at]);
      assert.deepEqual(found.map((x) => x.id), [1]);
      const [cnt] = await conn[mode]('SELECT COUNT(*) AS c FROM v WHERE i IS NULL');
      assert.equal(Number(cnt[0].c), 1);
    });
  });

  test(`insert ids and affected rows (${mode})`, async (t) => {
    await withDb(t, async (conn) => {
      await conn.query('CREATE TABLE a (id INT AUTO_INCREMENT PRIMARY KEY, s VARCHAR(10) NOT NULL, n INT)');
      for (let k = 1; k <= 3; k++) {
        const [res] = await conn[mode]('INSERT INTO a (s, n) VALUES (?, ?)', [`s${k}`, k === 2 ? null : k]);
        assert.equal(res.insertId, k);
        assert.equal(res.affectedRows, 1);
      }
      let [res] = await conn[mode]('UPDATE a SET n = ? WHERE id <= ?', [7, 2]);
      assert.equal(res.affectedRows, 2);
      assert.equal(res.changedRows ?? 2, 2);
      [res] = await conn[mode]('DELETE FROM a WHERE id = ?', [3]);
      assert.equal(res.affectedRows, 1);
      const [rows] = await conn[mode]('SELECT id, s, n FROM a ORDER BY id');
      assert.deepEqual(rows.map((x) => [x.id, x.s, x.n]), [[1, 's1', 7], [2, 's2', 7]]);
    });
  });

  test(`transactions (${mode})`, async (t) => {
    await withDb(t, async (conn, db) => {
      await conn.query('CREATE TABLE acct (id INT PRIMARY KEY, bal BIGINT NOT NULL)');
      await conn.query('INSERT INTO acct VALUES (1, 100), (2, 100)');
      const other = await mysql.createConnection(params({ database: db }));
      const bal = async (c, id) => Number((await c[mode]('SELECT bal FROM acct WHERE id = ?', [id]))[0][0].bal);
      try {
        await conn.beginTransaction();
        await conn[mode]('UPDATE acct SET bal = bal + ? WHERE id = ?', [-30, 1]);
        await conn[mode]('UPDATE acct SET bal = bal + ? WHERE id = ?', [30, 2]);
        assert.equal(await bal(conn, 1), 70);
        assert.equal(await bal(other, 1), 100, 'uncommitted write visible');
        await conn.commit();
        assert.equal(await bal(other, 1), 70);
        assert.equal(await bal(other, 2), 130);

        await conn.beginTransaction();
        await conn[mode]('DELETE FROM acct');
        await conn[mode]('INSERT INTO acct VALUES (?, ?)', [3, 3]);
        await conn.rollback();
        const [rows] = await conn.query('SELECT id, bal FROM acct ORDER BY id');
        assert.deepEqual(rows.map((x) => [x.id, Number(x.bal)]), [[1, 70], [2, 130]]);
      } finally {
        await other.end();
      }
    });
  });

  test(`errors (${mode})`, async (t) => {
    await withDb(t, async (conn) => {
      await conn.query('CREATE TABLE e (id INT PRIMARY KEY, s VARCHAR(10) NOT NULL)');
      await conn[mode]('INSERT INTO e VALUES (?, ?)', [1, 'a']);
      await assert.rejects(conn[mode]('INSERT INTO e VALUES (?, ?)', [1, 'b']), (err) => {
        assert.equal(err.errno, 1062);
        assert.equal(err.code, 'ER_DUP_ENTRY');
        assert.equal(err.sqlState, '23000');
        return true;
      });
      await assert.rejects(conn[mode]('INSERT INTO e VALUES (?, ?)', [2, null]), (err) => err.errno === 1048);
      await assert.rejects(conn[mode]('SELECT * FROM missing WHERE id = ?', [1]), (err) => {
        assert.equal(err.errno, 1146);
        assert.equal(err.code, 'ER_NO_SUCH_TABLE');
        return true;
      });
      await assert.rejects(conn[mode]('SELEC ?', [1]), (err) => err.errno === 1064);
      const [rows] = await conn[mode]('SELECT COUNT(*) AS c FROM e');
      assert.equal(Number(rows[0].c), 1);
    });
  });
}

test('pool and prepared statement reuse', async (t) => {
  await withDb(t, async (conn, db) => {
    await conn.query('CREATE TABLE p (id INT PRIMARY KEY, s VARCHAR(10))');
    const pool = mysql.createPool(params({ database: db, connectionLimit: 3 }));
    try {
      await Promise.all(
        Array.from({ length: 20 }, (_, k) => pool.execute('INSERT INTO p VALUES (?, ?)', [k, `v${k}`])),
      );
      const [rows] = await pool.execute('SELECT COUNT(*) AS c, MAX(id) AS m FROM p WHERE s LIKE ?', ['v%']);
      assert.equal(Number(rows[0].c), 20);
      assert.equal(Number(rows[0].m), 19);
    } finally {
      await pool.end();
    }
  });
});
