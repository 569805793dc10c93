//! A wire-level fuzz test against the real server binary (issue 22): for a
//! bounded time, several client threads send what a hostile or broken client
//! could, and after every batch the test checks that the server still serves.
//!
//! What the threads send (each from its own RNG, seeded from one printed seed):
//!
//! - before login: random bytes, random packets, mutated HandshakeResponse41s
//!   (bytes flipped, cut, lengths and sequence ids wrong), an SSLRequest with no
//!   TLS on offer, absurd user names, an oversized header;
//! - after login: random command bytes with random payloads, wrong lengths and
//!   sequence ids; garbage COM_STMT_EXECUTE payloads (cut, flipped, wrong types,
//!   huge lengths, cursor flags) for real prepared statements, with
//!   COM_STMT_SEND_LONG_DATA / RESET / FETCH beside them;
//! - mutated SQL: realistic statements (SELECT, INSERT, UPDATE, UNION, WITH,
//!   joins, subqueries) with characters replaced, tokens inserted (`ñ`, `é`,
//!   emoji, comments, quotes), ranges deleted or repeated, parentheses nested;
//! - once in a while (worker 0, at the start of half the batches) one large
//!   statement up to `max_allowed_packet` (4 MiB here) or just over it:
//!   `SELECT 1 IN (1,1,...)`, `1+1+...`, `SELECT 1 UNION ALL SELECT 1 ...`,
//!   whitespace, nested parentheses, long strings, AND chains, CTE chains,
//!   comments.
//!
//! After every batch: the process is alive, a fresh client logs in, a canary
//! table (in a database the fuzzing account cannot touch) holds exactly its
//! rows, and an idle connection opened at the start answers `SELECT 1`. That
//! connection is also sampled every 50 ms during the batches; the largest
//! latency is printed, and asserted under 100 ms only with
//! `CANYON_FUZZ_STRICT_LATENCY=1` (timings are not asserted by default: the
//! machine is shared). At the end no server output line may report a panic or
//! a stack overflow.
//!
//! Errors from the server are expected. A dropped connection is accepted only
//! after a malformed or oversized packet; after well-formed SQL (COM_QUERY, any
//! text, within `max_allowed_packet`) it is a finding, as is a command left
//! without a reply. Every finding names its input; the seed replays the inputs.
//!
//! Environment: `CANYON_FUZZ_SECS` (default 20), `CANYON_FUZZ_SEED` (default
//! random), `CANYON_FUZZ_STRICT_LATENCY=1`.

mod common;

use common::client::{
    caps, native_password_scramble, put_lenenc_bytes, stmt_execute_payload, Client, Connect, Param,
    SqlError,
};
use common::{Server, ServerOptions};
use rand::rngs::StdRng;
use rand::seq::SliceRandom;
use rand::{Rng, SeedableRng};
use std::io::{self, Read};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// `max_allowed_packet` of the server under test: large statements go up to it.
const MAX_PACKET: usize = 4 << 20;
/// Fuzzing threads.
const WORKERS: usize = 4;
/// How long one batch runs before the checks (a large statement may overrun it).
const BATCH: Duration = Duration::from_secs(2);
/// Default run time, seconds.
const DEFAULT_SECS: u64 = 20;
/// How long a well-formed statement may go unanswered before it is a finding.
const REPLY_TIMEOUT: Duration = Duration::from_secs(30);
/// The same for a large statement.
const LARGE_REPLY_TIMEOUT: Duration = Duration::from_secs(120);
/// How long the threads wait for the server's answer to garbage before moving on.
const PEEK: Duration = Duration::from_millis(100);
/// The idle connection's latency bound under `CANYON_FUZZ_STRICT_LATENCY=1`.
const IDLE_LATENCY_BOUND: Duration = Duration::from_millis(100);
/// The fuzzing account: all privileges on the `fuzz` database only.
const FUZZ_USER: &str = "fuzzer";
const FUZZ_PASSWORD: &str = "fuzz-pw";
/// Findings printed in full at the end.
const MAX_REPORTED: usize = 40;

/// Realistic statements on the `fuzz` schema, the starting points of mutation.
const SEED_SQL: &[&str] = &[
    "SELECT id, a, b FROM t WHERE id = 3",
    "SELECT a, COUNT(*), SUM(id) FROM t GROUP BY a HAVING COUNT(*) > 1 ORDER BY a DESC LIMIT 5",
    "INSERT INTO t (id, a, b) VALUES (1000, 1, 'x'), (1001, 2, 'ñandú') ON DUPLICATE KEY UPDATE a = a + 1",
    "UPDATE t SET a = a + 1, b = CONCAT(b, 'é') WHERE id BETWEEN 2 AND 5",
    "DELETE FROM t WHERE id >= 1000",
    "SELECT id FROM t UNION SELECT t_id FROM u UNION ALL SELECT 1",
    "WITH c AS (SELECT id, a FROM t WHERE a > 1), d AS (SELECT id FROM c) SELECT * FROM d ORDER BY id",
    "SELECT * FROM t WHERE id IN (SELECT t_id FROM u WHERE c > 1.5) AND EXISTS (SELECT 1 FROM u WHERE u.t_id = t.id)",
    "SELECT t.id, u.c FROM t JOIN u ON u.t_id = t.id LEFT JOIN t AS t2 ON t2.id = u.id WHERE t.b LIKE 'a%'",
    "SELECT (SELECT MAX(c) FROM u WHERE u.t_id = t.id) AS m, CASE WHEN a > 2 THEN 'big' ELSE 'small' END FROM t",
    "SELECT * FROM (SELECT id, a * 2 AS d FROM t) AS x WHERE x.d > 4 ORDER BY x.d",
    "SELECT UPPER('ñé'), LENGTH('🦀'), CHAR_LENGTH('日本語'), CONCAT('a', NULL), COALESCE(NULL, 'ü')",
    "SELECT CAST('2024-01-31' AS DATE) + INTERVAL 1 MONTH, DATE_FORMAT('2024-02-29', '%Y-%m')",
    "SELECT b, ROUND(AVG(a), 2), MIN(b), MAX(b) FROM t WHERE b IS NOT NULL GROUP BY b",
    "UPDATE u SET c = c * 1.1 WHERE t_id IN (SELECT id FROM t WHERE a < 3)",
    "INSERT INTO u (id, t_id, c) SELECT id + 100, id, a / 3 FROM t WHERE id < 5 ON DUPLICATE KEY UPDATE c = VALUES(c)",
    "SELECT 1 /*ñ*/ + 2 -- é\n, 'x'",
    "SELECT 'a' COLLATE utf8mb4_bin = 'A', 'ñ' = 'n', _utf8mb4'é' LIKE '_'",
    "SET @x = (SELECT COUNT(*) FROM t); SELECT @x + 1",
    "SHOW TABLES",
    "EXPLAIN SELECT * FROM t JOIN u ON u.t_id = t.id WHERE t.a = 1",
    "CREATE TABLE IF NOT EXISTS scratch (id INT PRIMARY KEY, v TEXT)",
    "DROP TABLE IF EXISTS scratch",
    "SELECT id, a FROM t WHERE (a = 1 OR (a = 2 AND NOT (b = 'x'))) AND id <> 7 ORDER BY id LIMIT 3 OFFSET 1",
];

/// Fragments inserted by mutation.
const TOKENS: &[&str] = &[
    "(",
    ")",
    ",",
    "'",
    "\"",
    "`",
    "/*",
    "*/",
    "-- ",
    "#",
    "\n",
    "\\",
    ";",
    "ñ",
    "é",
    "🦀",
    "😀",
    "/*ñ*/",
    "\u{0}",
    " ",
    "SELECT",
    "SELECT 1",
    " UNION ALL SELECT 1",
    "NULL",
    "1e308",
    "-9223372036854775808",
    "18446744073709551615",
    "0.000001",
    "+",
    "-",
    "*",
    "/",
    "%",
    "=",
    "<=>",
    " AND ",
    " OR ",
    " NOT ",
    " IN (1, 2)",
    "(SELECT 1)",
    "(SELECT id FROM t)",
    "?",
    "@x",
    "@@version",
    "_utf8mb4'ñ'",
    "X'ff'",
    "0x",
    "b'1'",
    " COLLATE utf8mb4_bin",
    "CASE WHEN 1 THEN 2 END",
    "WITH w AS (SELECT 1 AS x) ",
    " ORDER BY 1",
    " LIMIT 1",
    " GROUP BY 1",
    " HAVING 1",
    " DISTINCT ",
    "t.",
    ".",
    "ñandú",
    "'é'",
    "CAST(",
    " AS CHAR)",
    "COUNT(*)",
    " EXISTS ",
    " LIKE '%ñ%'",
    " BETWEEN 1 AND ",
    " IS NULL",
    " INTERVAL 1 DAY",
    "CONCAT(",
    "SUBSTRING(",
    " DEFAULT ",
    "VALUES(",
    "ROW(",
    " JOIN u ON 1 ",
    " LEFT JOIN ",
    " USING (id)",
    " FOR UPDATE",
    " INTO @v",
    "\t",
    "\r\n",
    "\u{feff}",
    "\u{200b}",
    "Ω",
    "𝔘",
    "日本",
    "\u{301}",
];

/// Single characters a mutation puts in place of another.
const CHARS: &[char] = &[
    'ñ', 'é', '🦀', '😀', '\0', '\'', '"', '`', '(', ')', ',', ';', '\\', '\n', '*', '?', '@', '#',
    '-', '/', '.', '_', '%', 'Ω', '\u{301}', '\u{7f}', ' ',
];

/// Command bytes the random packets favour (every other byte shows up too).
const COMMANDS: &[u8] = &[
    0x00, 0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08, 0x09, 0x0a, 0x0b, 0x0c, 0x0d, 0x0e, 0x0f,
    0x10, 0x11, 0x12, 0x13, 0x14, 0x15, 0x16, 0x17, 0x18, 0x19, 0x1a, 0x1b, 0x1c, 0x1d, 0x1e, 0x1f,
];

/// Statements prepared on the connection that sends garbage COM_STMT_EXECUTEs.
const PREPARED: &[&str] = &[
    "SELECT ? + ?, CONCAT(?, 'x'), ? IS NULL",
    "SELECT * FROM t WHERE id = ? OR b LIKE ?",
    "INSERT INTO u (id, t_id, c) VALUES (?, ?, ?) ON DUPLICATE KEY UPDATE c = VALUES(c)",
    "SELECT ?",
];

/// MYSQL_TYPE_* codes for parameter types, real and not.
const TYPES: &[u16] = &[
    0x00, 0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08, 0x09, 0x0a, 0x0b, 0x0c, 0x0d, 0x0e, 0x0f,
    0x10, 0x11, 0x12, 0x13, 0xf5, 0xf6, 0xf7, 0xf8, 0xf9, 0xfa, 0xfb, 0xfc, 0xfd, 0xfe, 0xff,
    0x8008, 0x8003, 0x1234,
];

/// One input that broke a rule.
struct Finding {
    /// What went wrong.
    what: String,
    /// The generator and a printable form of the input.
    input: String,
}

/// What the threads share.
struct Ctx {
    port: u16,
    pid: u32,
    findings: Mutex<Vec<Finding>>,
    /// Set when the server process is found dead; the threads stop.
    dead: AtomicBool,
    /// Operations run, for the summary.
    ops: AtomicU64,
    large: AtomicU64,
}

impl Ctx {
    fn finding(&self, what: impl Into<String>, label: &str, input: &[u8]) {
        let what = what.into();
        let alive = process_alive(self.pid);
        let input = format!("{label}: {}", printable(input));
        eprintln!("fuzz_wire: FINDING: {what} (server alive: {alive})\n    {input}");
        self.findings
            .lock()
            .expect("findings lock")
            .push(Finding { what, input });
        if !alive {
            self.dead.store(true, Ordering::Relaxed);
        }
    }

    fn stopped(&self) -> bool {
        self.dead.load(Ordering::Relaxed)
    }
}

/// Whether process `pid` is alive (not gone, not a zombie waiting to be reaped).
fn process_alive(pid: u32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Ok(stat) => stat
            .rsplit_once(')')
            .map(|(_, rest)| !rest.trim_start().starts_with('Z'))
            .unwrap_or(false),
        Err(_) => false,
    }
}

/// An input as one printable line: lossy UTF-8 with control characters
/// escaped, long inputs cut in the middle.
fn printable(input: &[u8]) -> String {
    let text = String::from_utf8_lossy(input);
    let escaped: String = text.chars().flat_map(char::escape_debug).collect();
    let chars: Vec<char> = escaped.chars().collect();
    if chars.len() <= 400 {
        return format!("\"{escaped}\" ({} bytes)", input.len());
    }
    let head: String = chars[..300].iter().collect();
    let tail: String = chars[chars.len() - 60..].iter().collect();
    format!("\"{head} ... {tail}\" ({} bytes)", input.len())
}

/// Whether a client error says the reply did not come in time (the socket's
/// read timeout), rather than that the connection was dropped.
fn timed_out(e: &SqlError) -> bool {
    e.message.contains("os error 11") || e.message.contains("timed out")
}

/// Reads whatever the server sends within `wait` (bounded); false once it has
/// closed the connection.
fn drain(c: &mut Client, wait: Duration) -> bool {
    let _ = c.stream().set_read_timeout(Some(wait));
    let mut buf = [0u8; 16 * 1024];
    for _ in 0..64 {
        match c.stream().read(&mut buf) {
            Ok(0) => return false,
            Ok(_) => continue,
            Err(e)
                if matches!(
                    e.kind(),
                    io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut
                ) =>
            {
                return true
            }
            Err(_) => return false,
        }
    }
    true
}

/// A physical packet: header (`len`, `seq`) and payload.
fn frame(len: usize, seq: u8, payload: &[u8]) -> Vec<u8> {
    let mut v = (len as u32).to_le_bytes()[..3].to_vec();
    v.push(seq);
    v.extend_from_slice(payload);
    v
}

// ---- generators ------------------------------------------------------------------------

/// Random bytes, `0..max` of them, sometimes printable.
fn random_bytes(rng: &mut StdRng, max: usize) -> Vec<u8> {
    let n = rng.gen_range(0..max);
    if rng.gen_bool(0.3) {
        (0..n).map(|_| rng.gen_range(0x20..0x7f)).collect()
    } else {
        (0..n).map(|_| rng.gen()).collect()
    }
}

/// One random packet on the wire, with its label: a command byte (mostly a real
/// one) and a random body; the length in the header sometimes wrong, the
/// sequence id sometimes not `seq`.
fn random_packet(rng: &mut StdRng, seq: u8) -> (String, Vec<u8>) {
    let cmd = if rng.gen_bool(0.8) {
        *COMMANDS.choose(rng).expect("COMMANDS is not empty")
    } else {
        rng.gen()
    };
    let mut payload = vec![cmd];
    match rng.gen_range(0..4) {
        // A small statement id or number first, as most commands start.
        0 => {
            payload.extend_from_slice(&rng.gen_range(0u32..4).to_le_bytes());
            payload.extend(random_bytes(rng, 32));
        }
        1 => payload.extend(random_bytes(rng, 4096)),
        2 => payload.extend(random_bytes(rng, 16)),
        _ => {}
    }
    let seq = if rng.gen_bool(0.85) { seq } else { rng.gen() };
    let (len, what) = match rng.gen_range(0..20) {
        0 | 1 => (payload.len() + rng.gen_range(1..100), "length too long"),
        2 | 3 => (
            payload.len().saturating_sub(rng.gen_range(1..8)),
            "length too short",
        ),
        4 => (0xff_ffff, "length 0xffffff"),
        _ => (payload.len(), "length right"),
    };
    (
        format!("packet cmd 0x{cmd:02x} seq {seq}, {what}"),
        frame(len, seq, &payload),
    )
}

/// A HandshakeResponse41 for the fuzzing account (its proof for `scramble`).
fn handshake_response(rng: &mut StdRng, greeting_caps: u32, scramble: &[u8]) -> Vec<u8> {
    let mut flags = caps::LONG_PASSWORD
        | caps::LONG_FLAG
        | caps::PROTOCOL_41
        | caps::TRANSACTIONS
        | caps::SECURE_CONNECTION
        | caps::PLUGIN_AUTH
        | caps::MULTI_STATEMENTS;
    if rng.gen_bool(0.5) {
        flags |= caps::PLUGIN_AUTH_LENENC;
    }
    if rng.gen_bool(0.5) {
        flags |= caps::CONNECT_WITH_DB;
    }
    flags &= greeting_caps | caps::LONG_PASSWORD;
    let user: Vec<u8> = match rng.gen_range(0..8) {
        0 => vec![b'x'; rng.gen_range(100..70_000)],
        1 => "ñé🦀".repeat(rng.gen_range(1..50)).into_bytes(),
        2 => vec![0xff, 0xfe, 0x80],
        3 => b"nobody".to_vec(),
        _ => FUZZ_USER.as_bytes().to_vec(),
    };
    let password = if rng.gen_bool(0.8) {
        FUZZ_PASSWORD
    } else {
        "wrong"
    };
    let auth = native_password_scramble(password, scramble);
    let mut p = Vec::new();
    p.extend_from_slice(&flags.to_le_bytes());
    p.extend_from_slice(&(16u32 << 20).to_le_bytes());
    p.push(if rng.gen_bool(0.9) { 45 } else { rng.gen() });
    p.extend_from_slice(&[0u8; 23]);
    p.extend_from_slice(&user);
    p.push(0);
    if flags & caps::PLUGIN_AUTH_LENENC != 0 {
        put_lenenc_bytes(&mut p, &auth);
    } else {
        p.push(auth.len() as u8);
        p.extend_from_slice(&auth);
    }
    if flags & caps::CONNECT_WITH_DB != 0 {
        p.extend_from_slice(if rng.gen_bool(0.8) {
            b"fuzz"
        } else {
            b"canary"
        });
        p.push(0);
    }
    let plugin: &[u8] = match rng.gen_range(0..4) {
        0 => b"caching_sha2_password",
        1 => b"no_such_plugin",
        _ => b"mysql_native_password",
    };
    p.extend_from_slice(plugin);
    p.push(0);
    p
}

/// Flips, cuts, extends or overwrites bytes of `p` from `from` on.
fn mutate_bytes(rng: &mut StdRng, p: &mut Vec<u8>, from: usize) {
    for _ in 0..rng.gen_range(1..=4) {
        if p.len() <= from {
            p.extend(random_bytes(rng, 8));
            continue;
        }
        let i = rng.gen_range(from..p.len());
        match rng.gen_range(0..6) {
            0 => p[i] ^= 1 << rng.gen_range(0..8),
            1 => p[i] = rng.gen(),
            2 => p.truncate(i),
            3 => p.extend(random_bytes(rng, 64)),
            4 => {
                // A length-encoded integer announcing far more than follows.
                let big = [0xfe, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f];
                p.splice(i..i, big);
            }
            _ => {
                let n = rng.gen_range(1..16);
                p.splice(i..i, std::iter::repeat_n(rng.gen::<u8>(), n));
            }
        }
    }
}

/// A mutated statement from [`SEED_SQL`], with its label. Mostly valid UTF-8
/// (mutated as characters); sometimes bytes are flipped too.
fn mutated_sql(rng: &mut StdRng) -> (String, Vec<u8>) {
    let seed = *SEED_SQL.choose(rng).expect("SEED_SQL is not empty");
    let mut s: Vec<char> = seed.chars().collect();
    let mut ops = Vec::new();
    for _ in 0..rng.gen_range(1..=4) {
        let n = s.len();
        let at = rng.gen_range(0..=n);
        match rng.gen_range(0..7) {
            0 if n > 0 => {
                let i = rng.gen_range(0..n);
                s[i] = if rng.gen_bool(0.5) {
                    *CHARS.choose(rng).expect("CHARS is not empty")
                } else {
                    char::from(rng.gen_range(0x20u8..0x7f))
                };
                ops.push("replace");
            }
            1 => {
                let t = TOKENS.choose(rng).expect("TOKENS is not empty");
                s.splice(at..at, t.chars());
                ops.push("insert");
            }
            2 if n > 0 => {
                let len = rng.gen_range(1..=(n - at.min(n - 1)).min(12));
                let start = at.min(n - len);
                s.drain(start..start + len);
                ops.push("delete");
            }
            3 if n > 0 => {
                // Repeat a fragment: short ones many times, long ones a few.
                let start = at.min(n - 1);
                let len = rng.gen_range(1..=(n - start).min(24));
                let times = if len <= 4 {
                    rng.gen_range(1..=300)
                } else {
                    rng.gen_range(1..=4)
                };
                let frag: Vec<char> = s[start..start + len].to_vec();
                let copies: Vec<char> = std::iter::repeat_n(frag, times).flatten().collect();
                s.splice(start + len..start + len, copies);
                ops.push("repeat");
            }
            4 if n > 0 => {
                // Nest a range in parentheses, sometimes very deeply.
                let a = at.min(n - 1);
                let b = rng.gen_range(a..=n);
                let depth = if rng.gen_bool(0.9) {
                    rng.gen_range(1..=20)
                } else {
                    rng.gen_range(20..=3000)
                };
                s.splice(b..b, std::iter::repeat_n(')', depth));
                s.splice(a..a, std::iter::repeat_n('(', depth));
                ops.push("nest");
            }
            5 => {
                s.truncate(at);
                ops.push("truncate");
            }
            _ => {
                let c = *CHARS.choose(rng).expect("CHARS is not empty");
                s.insert(at, c);
                ops.push("insert char");
            }
        }
    }
    let mut bytes = s.into_iter().collect::<String>().into_bytes();
    if rng.gen_bool(0.1) && !bytes.is_empty() {
        let i = rng.gen_range(0..bytes.len());
        bytes[i] ^= 1 << rng.gen_range(0..8);
        ops.push("flip bit");
    }
    (format!("mutated SQL [{}]", ops.join(", ")), bytes)
}

/// One large statement: (label, text, whether it is over `max_allowed_packet`).
fn large_statement(rng: &mut StdRng) -> (String, Vec<u8>, bool) {
    // The payload is the command byte and the text.
    let limit = MAX_PACKET - 1;
    let over = rng.gen_bool(0.125);
    let target = if over {
        limit + rng.gen_range(1..4096)
    } else {
        // Log-uniform from 16 KiB to the limit.
        let lo = (16.0f64 * 1024.0).ln();
        let hi = (limit as f64).ln();
        (rng.gen_range(lo..=hi).exp() as usize).min(limit)
    };
    let kind = rng.gen_range(0..10);
    let repeat = |head: &str, unit: &str, tail: &str| -> Vec<u8> {
        let n = target.saturating_sub(head.len() + tail.len()) / unit.len();
        let mut v = Vec::with_capacity(target);
        v.extend_from_slice(head.as_bytes());
        for _ in 0..n {
            v.extend_from_slice(unit.as_bytes());
        }
        v.extend_from_slice(tail.as_bytes());
        v
    };
    let (what, sql) = match kind {
        0 => ("SELECT 1 IN (1,1,...)", repeat("SELECT 1 IN (1", ",1", ")")),
        1 => ("SELECT 1+1+...", repeat("SELECT 1", "+1", "")),
        2 => (
            "SELECT 1 UNION ALL SELECT 1 ...",
            repeat("SELECT 1", " UNION ALL SELECT 1", ""),
        ),
        3 => ("whitespace", repeat("SELECT", " ", " 1")),
        4 => {
            let n = target.saturating_sub(8) / 2;
            let mut v = b"SELECT ".to_vec();
            v.extend(std::iter::repeat_n(b'(', n));
            v.push(b'1');
            v.extend(std::iter::repeat_n(b')', n));
            ("nested parentheses", v)
        }
        5 => ("a long string of ñ", repeat("SELECT LENGTH('", "ñ", "')")),
        6 => ("SELECT 1 AND 1 AND ...", repeat("SELECT 1", " AND 1", "")),
        7 => {
            let mut v = b"WITH c0 AS (SELECT 1 AS x)".to_vec();
            let mut i = 1;
            while v.len() + 64 < target {
                v.extend_from_slice(format!(", c{i} AS (SELECT x FROM c{})", i - 1).as_bytes());
                i += 1;
            }
            v.extend_from_slice(format!(" SELECT x FROM c{}", i - 1).as_bytes());
            ("WITH chain", v)
        }
        8 => ("comments /*ñ*/", repeat("", "/*ñ*/", " SELECT 1")),
        _ => (
            "OR chain",
            repeat("SELECT id FROM t WHERE id = 1", " OR id = 1", ""),
        ),
    };
    let label = format!(
        "large: {what}, {} bytes{}",
        sql.len(),
        if over {
            " (over max_allowed_packet)"
        } else {
            ""
        }
    );
    (label, sql, over)
}

/// A COM_STMT_EXECUTE payload for `id` (with `params` parameters), mostly
/// malformed; the label says how.
fn execute_payload(rng: &mut StdRng, id: u32, params: u16) -> (String, Vec<u8>) {
    let id = if rng.gen_bool(0.9) { id } else { rng.gen() };
    let count = if rng.gen_bool(0.7) {
        usize::from(params)
    } else {
        rng.gen_range(0..8)
    };
    let values: Vec<Param> = (0..count)
        .map(|_| match rng.gen_range(0..3) {
            0 => Param::Null,
            1 => Param::Int(rng.gen()),
            _ => Param::Str("ñé🦀".repeat(rng.gen_range(0..20))),
        })
        .collect();
    let mut p = stmt_execute_payload(id, &values);
    let mut how = Vec::new();
    if rng.gen_bool(0.2) {
        p[5] = rng.gen(); // cursor flags
        how.push("flags");
    }
    if rng.gen_bool(0.1) {
        p[6..10].copy_from_slice(&rng.gen::<u32>().to_le_bytes()); // iteration count
        how.push("iterations");
    }
    if count > 0 && rng.gen_bool(0.3) {
        // Parameter types replaced: they sit after the NULL bitmap and the
        // new-params-bound flag.
        let types_at = 10 + count.div_ceil(8) + 1;
        for k in 0..count {
            let t = *TYPES.choose(rng).expect("TYPES is not empty");
            let at = types_at + 2 * k;
            if at + 2 <= p.len() {
                p[at..at + 2].copy_from_slice(&t.to_le_bytes());
            }
        }
        how.push("types");
    }
    if count > 0 && rng.gen_bool(0.15) {
        p[10 + count.div_ceil(8)] = 0; // new-params-bound 0: no types sent
        how.push("unbound");
    }
    if rng.gen_bool(0.7) {
        mutate_bytes(rng, &mut p, 1); // the command byte stays
        how.push("bytes");
    }
    let how = if how.is_empty() {
        "well-formed".to_owned()
    } else {
        how.join(", ")
    };
    (format!("COM_STMT_EXECUTE [{how}]"), p)
}

// ---- the workers ----------------------------------------------------------------------

/// One fuzzing thread's state: its RNG and its connections.
struct Worker {
    n: usize,
    rng: StdRng,
    /// For mutated SQL.
    sql: Option<Client>,
    /// For COM_STMT_*, with its prepared statements (id, parameter count).
    ps: Option<(Client, Vec<(u32, u16)>)>,
}

impl Worker {
    fn new(n: usize, seed: u64) -> Worker {
        Worker {
            n,
            rng: StdRng::seed_from_u64(seed ^ (n as u64 + 1).wrapping_mul(0x9e37_79b9_7f4a_7c15)),
            sql: None,
            ps: None,
        }
    }

    /// Runs operations until `deadline` (worker 0 first sends a large statement
    /// in half of the batches).
    fn run_batch(&mut self, ctx: &Ctx, deadline: Instant) {
        if self.n == 0 && self.rng.gen_bool(0.5) {
            self.large(ctx);
        }
        while Instant::now() < deadline && !ctx.stopped() {
            self.step(ctx);
            ctx.ops.fetch_add(1, Ordering::Relaxed);
        }
    }

    fn step(&mut self, ctx: &Ctx) {
        match self.rng.gen_range(0..100) {
            0..=9 => self.pre_login(ctx),
            10..=19 => self.handshake(ctx),
            20..=31 => self.raw_commands(ctx),
            32..=43 => self.stmt_garbage(ctx),
            _ => self.sql(ctx),
        }
    }

    /// Logs in as the fuzzing account; a refusal is a finding.
    fn login(&mut self, ctx: &Ctx, timeout: Duration, what: &str) -> Option<Client> {
        let opts = Connect {
            db: Some("fuzz".into()),
            multi_statements: true,
            timeout,
            ..Connect::new(ctx.port, FUZZ_USER, FUZZ_PASSWORD)
        };
        match Client::connect_with(&opts) {
            Ok(mut c) => {
                // A cross join that mutation made huge stops here.
                let _ = c.query("SET SESSION max_execution_time = 5000");
                Some(c)
            }
            Err(e) => {
                ctx.finding(format!("login failed: {e}"), what, b"");
                None
            }
        }
    }

    /// Mutated SQL on the worker's connection: any server error is fine; a
    /// dropped connection or no reply is a finding.
    fn sql(&mut self, ctx: &Ctx) {
        if self.sql.is_none() {
            self.sql = self.login(ctx, REPLY_TIMEOUT, "login for mutated SQL");
        }
        let Some(c) = self.sql.as_mut() else { return };
        let (label, sql) = mutated_sql(&mut self.rng);
        match c.query_bytes(&sql) {
            Ok(_) => {}
            Err(e) if !e.is_connection_error() => {}
            Err(e) => {
                let what = if timed_out(&e) {
                    format!("no reply within {REPLY_TIMEOUT:?}")
                } else {
                    format!("connection lost after a well-formed COM_QUERY: {e}")
                };
                ctx.finding(what, &label, &sql);
                self.sql = None;
            }
        }
    }

    /// One large statement on a fresh connection.
    fn large(&mut self, ctx: &Ctx) {
        let (label, sql, over) = large_statement(&mut self.rng);
        ctx.large.fetch_add(1, Ordering::Relaxed);
        eprintln!("fuzz_wire: worker {} sends {label}", self.n);
        let Some(mut c) = self.login(ctx, LARGE_REPLY_TIMEOUT, &label) else {
            return;
        };
        let started = Instant::now();
        let r = c.query_bytes(&sql);
        let took = started.elapsed();
        let outcome = match &r {
            Ok(_) => "ok".to_owned(),
            Err(e) => format!(
                "{} {}",
                e.errno,
                e.message.chars().take(80).collect::<String>()
            ),
        };
        eprintln!("fuzz_wire: ... answered in {took:?}: {outcome}");
        match r {
            Ok(_) => {}
            Err(e) if !e.is_connection_error() => {}
            Err(_) if over => {}
            Err(e) => {
                let what = if timed_out(&e) {
                    format!("no reply within {LARGE_REPLY_TIMEOUT:?}")
                } else {
                    format!(
                        "connection lost after a large statement within max_allowed_packet: {e}"
                    )
                };
                ctx.finding(what, &label, &sql);
            }
        }
    }

    /// Garbage before login: noise, random packets, an SSLRequest without TLS on
    /// offer, an oversized header.
    fn pre_login(&mut self, ctx: &Ctx) {
        let mut c = match Client::open(ctx.port, REPLY_TIMEOUT) {
            Ok(c) => c,
            Err(e) if e.errno == 1040 => return,
            Err(e) => {
                ctx.finding(format!("no greeting: {e}"), "connect before garbage", b"");
                return;
            }
        };
        let bytes = match self.rng.gen_range(0..4) {
            0 => random_bytes(&mut self.rng, 300),
            1 => random_packet(&mut self.rng, 1).1,
            2 => {
                // SSLRequest (CLIENT_SSL), then what would be a TLS ClientHello.
                let mut p = (caps::PROTOCOL_41 | 0x800 | caps::SECURE_CONNECTION)
                    .to_le_bytes()
                    .to_vec();
                p.extend_from_slice(&(16u32 << 20).to_le_bytes());
                p.push(45);
                p.extend_from_slice(&[0u8; 23]);
                let mut bytes = frame(p.len(), 1, &p);
                bytes.extend_from_slice(&[0x16, 0x03, 0x01]);
                bytes.extend(random_bytes(&mut self.rng, 200));
                bytes
            }
            // A header announcing more than max_allowed_packet.
            _ => vec![0xff, 0xff, 0xff, 1],
        };
        let _ = c.send_raw(&bytes);
        drain(&mut c, PEEK);
    }

    /// A mutated HandshakeResponse41 (or a right one with a wrong sequence id,
    /// user or password); an AuthSwitchRequest gets random bytes back.
    fn handshake(&mut self, ctx: &Ctx) {
        let mut c = match Client::open(ctx.port, REPLY_TIMEOUT) {
            Ok(c) => c,
            Err(e) if e.errno == 1040 => return,
            Err(e) => {
                ctx.finding(
                    format!("no greeting: {e}"),
                    "connect before a handshake",
                    b"",
                );
                return;
            }
        };
        let (greeting_caps, scramble) = (c.greeting.capabilities, c.greeting.scramble.clone());
        let mut p = handshake_response(&mut self.rng, greeting_caps, &scramble);
        if self.rng.gen_bool(0.6) {
            mutate_bytes(&mut self.rng, &mut p, 0);
        }
        let seq = if self.rng.gen_bool(0.8) {
            1
        } else {
            self.rng.gen()
        };
        let len = if self.rng.gen_bool(0.9) {
            p.len()
        } else {
            self.rng.gen_range(0..p.len() + 50)
        };
        if p.len() >= 0xff_ffff {
            return;
        }
        if c.send_raw(&frame(len, seq, &p)).is_err() {
            return;
        }
        let _ = c.stream().set_read_timeout(Some(PEEK * 5));
        if let Ok(reply) = c.read_packet() {
            if reply.first() == Some(&0xfe) {
                let junk = random_bytes(&mut self.rng, 40);
                let seq = if self.rng.gen_bool(0.8) {
                    3
                } else {
                    self.rng.gen()
                };
                let _ = c.send_raw(&frame(junk.len(), seq, &junk));
                drain(&mut c, PEEK);
            }
        }
    }

    /// Random packets after login, on a fresh connection.
    fn raw_commands(&mut self, ctx: &Ctx) {
        let Some(mut c) = self.login(ctx, REPLY_TIMEOUT, "login for raw packets") else {
            return;
        };
        for _ in 0..self.rng.gen_range(1..=4) {
            let (_, bytes) = random_packet(&mut self.rng, 0);
            if c.send_raw(&bytes).is_err() || !drain(&mut c, PEEK) {
                return;
            }
        }
    }

    /// Garbage COM_STMT_EXECUTEs for real prepared statements, with
    /// SEND_LONG_DATA, RESET and FETCH beside them.
    fn stmt_garbage(&mut self, ctx: &Ctx) {
        if self.ps.is_none() {
            let Some(mut c) = self.login(ctx, Duration::from_secs(10), "login for COM_STMT_*")
            else {
                return;
            };
            let mut stmts = Vec::new();
            for sql in PREPARED {
                match c.prepare(sql) {
                    Ok(p) => stmts.push((p.id, p.params)),
                    Err(e) => {
                        ctx.finding(
                            format!("prepare failed: {e}"),
                            "COM_STMT_PREPARE",
                            sql.as_bytes(),
                        );
                        return;
                    }
                }
            }
            self.ps = Some((c, stmts));
        }
        let Some((c, stmts)) = self.ps.as_mut() else {
            return;
        };
        let (id, params) = *stmts
            .choose(&mut self.rng)
            .expect("statements were prepared");
        let ok = match self.rng.gen_range(0..10) {
            0 => {
                // COM_STMT_SEND_LONG_DATA: no reply.
                let mut p = vec![0x18];
                p.extend_from_slice(&id.to_le_bytes());
                p.extend_from_slice(&self.rng.gen_range(0u16..6).to_le_bytes());
                p.extend(random_bytes(&mut self.rng, 200));
                c.send_packet(0, &p).is_ok()
            }
            1 => {
                // COM_STMT_RESET or COM_STMT_FETCH (a cursor never opened).
                let cmd = if self.rng.gen_bool(0.5) { 0x1a } else { 0x1c };
                let mut p = vec![cmd];
                p.extend_from_slice(&id.to_le_bytes());
                p.extend(random_bytes(&mut self.rng, 8));
                c.send_packet(0, &p).is_ok() && c.read_packet().is_ok()
            }
            _ => {
                let (label, p) = execute_payload(&mut self.rng, id, params);
                match c.execute_raw(&p) {
                    Ok(_) => true,
                    Err(e) if !e.is_connection_error() => true,
                    Err(e) if timed_out(&e) => {
                        ctx.finding("no reply to COM_STMT_EXECUTE", &label, &p);
                        false
                    }
                    // A malformed packet may end the connection.
                    Err(_) => false,
                }
            }
        };
        if !ok {
            self.ps = None;
        }
        // Keep the reply stream in step: COM_STMT_FETCH's and garbage replies
        // may not be what the client expects.
        if let Some((c, _)) = self.ps.as_mut() {
            if c.ping().is_err() {
                self.ps = None;
            }
        }
    }
}

// ---- the test ----------------------------------------------------------------------------

/// The canary's rows, as the root account reads them.
fn canary_rows(c: &mut Client) -> Vec<Vec<Option<String>>> {
    c.exec("SELECT id, v FROM canary.c ORDER BY id").rows()
}

/// Samples the idle connection until `done`; returns the largest latency, or
/// why the connection failed.
fn sample_idle(idle: &Mutex<Client>, done: &AtomicBool) -> Result<Duration, String> {
    let mut max = Duration::ZERO;
    while !done.load(Ordering::Relaxed) {
        max = max.max(idle_latency(idle)?);
        std::thread::sleep(Duration::from_millis(50));
    }
    Ok(max)
}

/// How long `SELECT 1` takes on the idle connection opened at the start.
fn idle_latency(idle: &Mutex<Client>) -> Result<Duration, String> {
    let mut c = idle.lock().expect("idle connection lock");
    let started = Instant::now();
    let r = c.query("SELECT 1");
    let took = started.elapsed();
    match r {
        Ok(o) if o.clone().scalar().as_deref() == Some("1") => Ok(took),
        Ok(o) => Err(format!("the idle connection's SELECT 1 answered {o:?}")),
        Err(e) => Err(format!("the idle connection's SELECT 1 failed: {e}")),
    }
}

/// Puts the rows of the fuzzed tables back (mutated statements delete and
/// drop them); errors are ignored.
fn reset_fuzz_tables(c: &mut Client) {
    for sql in [
        "CREATE TABLE IF NOT EXISTS fuzz.t (id INT PRIMARY KEY, a INT, b VARCHAR(64))",
        "INSERT INTO fuzz.t VALUES (1, 1, 'a'), (2, 1, 'ñandú'), (3, 2, 'é'), (4, 2, '🦀'), \
         (5, 3, NULL), (6, 3, 'abc'), (7, 4, 'x'), (8, 5, 'y') \
         ON DUPLICATE KEY UPDATE a = VALUES(a), b = VALUES(b)",
        "CREATE TABLE IF NOT EXISTS fuzz.u (id INT PRIMARY KEY, t_id INT, c DECIMAL(10,2))",
        "INSERT INTO fuzz.u VALUES (1, 1, 1.50), (2, 1, 2.25), (3, 2, 0.10), (4, 3, 9.99) \
         ON DUPLICATE KEY UPDATE t_id = VALUES(t_id), c = VALUES(c)",
    ] {
        let _ = c.query(sql);
    }
}

/// Fails the test with the findings so far, newest first, and the server's log.
fn fail(ctx: &Ctx, server: &Server, seed: u64, why: &str) -> ! {
    let findings = ctx.findings.lock().expect("findings lock");
    let list: Vec<String> = findings
        .iter()
        .rev()
        .take(MAX_REPORTED)
        .map(|f| format!("- {}\n    {}", f.what, f.input))
        .collect();
    panic!(
        "{why} (seed {seed}); the last findings, newest first (an input that killed \
         the server is among those in flight):\n{}\n{}",
        list.join("\n"),
        server.log_tail()
    );
}

fn env_u64(name: &str) -> Option<u64> {
    std::env::var(name).ok().map(|v| {
        v.trim()
            .parse()
            .unwrap_or_else(|_| panic!("{name}={v:?} is not a number"))
    })
}

#[test]
fn fuzz_the_wire() {
    let secs = env_u64("CANYON_FUZZ_SECS").unwrap_or(DEFAULT_SECS);
    let seed = env_u64("CANYON_FUZZ_SEED").unwrap_or_else(rand::random);
    let strict = std::env::var("CANYON_FUZZ_STRICT_LATENCY").is_ok_and(|v| v == "1");
    eprintln!(
        "fuzz_wire: seed {seed}, {secs} s, {WORKERS} workers (replay: CANYON_FUZZ_SEED={seed})"
    );

    let mut server = Server::start_with(ServerOptions {
        in_memory: true,
        max_allowed_packet: Some(MAX_PACKET as u64),
        lock_wait_timeout_secs: Some(1),
        extra_toml: "connect_timeout = 5\n".into(),
        ..ServerOptions::default()
    });
    let mut root = server.client();
    root.exec("CREATE DATABASE fuzz");
    reset_fuzz_tables(&mut root);
    for sql in [
        "CREATE DATABASE canary",
        "CREATE TABLE canary.c (id INT PRIMARY KEY, v VARCHAR(64))",
        "INSERT INTO canary.c VALUES (1, 'one'), (2, 'dos ñ'), (3, 'trois é'), (4, '🦀 four'), (5, NULL)",
        "CREATE USER 'fuzzer'@'%' IDENTIFIED BY 'fuzz-pw'",
        "GRANT ALL ON fuzz.* TO 'fuzzer'@'%'",
    ] {
        root.exec(sql);
    }
    let canary = canary_rows(&mut root);
    assert_eq!(canary.len(), 5, "the canary rows were inserted");
    let idle = Mutex::new(server.client());

    let ctx = Ctx {
        port: server.port(),
        pid: server.pid().expect("the server is running"),
        findings: Mutex::new(Vec::new()),
        dead: AtomicBool::new(false),
        ops: AtomicU64::new(0),
        large: AtomicU64::new(0),
    };
    let mut workers: Vec<Worker> = (0..WORKERS).map(|n| Worker::new(n, seed)).collect();
    let end = Instant::now() + Duration::from_secs(secs);
    let mut batches = 0;
    let mut max_idle = Duration::ZERO;
    while Instant::now() < end {
        batches += 1;
        let deadline = (Instant::now() + BATCH).min(end);
        let done = AtomicBool::new(false);
        let sampled = std::thread::scope(|s| {
            let sampler = s.spawn(|| sample_idle(&idle, &done));
            let handles: Vec<_> = workers
                .iter_mut()
                .map(|w| {
                    let ctx = &ctx;
                    s.spawn(move || w.run_batch(ctx, deadline))
                })
                .collect();
            for h in handles {
                h.join().expect("a fuzzing thread panicked");
            }
            done.store(true, Ordering::Relaxed);
            sampler.join().expect("the sampler panicked")
        });

        // The checks after every batch.
        if !server.is_running() || ctx.stopped() {
            fail(
                &ctx,
                &server,
                seed,
                &format!("the server died in batch {batches}"),
            );
        }
        match sampled {
            Ok(d) => max_idle = max_idle.max(d),
            Err(e) => fail(&ctx, &server, seed, &format!("batch {batches}: {e}")),
        }
        let mut fresh = server.client();
        assert_eq!(
            fresh.exec("SELECT 1").scalar().as_deref(),
            Some("1"),
            "a fresh client after batch {batches}"
        );
        assert_eq!(
            canary_rows(&mut fresh),
            canary,
            "the canary table changed in batch {batches} (seed {seed})"
        );
        match idle_latency(&idle) {
            Ok(d) => max_idle = max_idle.max(d),
            Err(e) => fail(&ctx, &server, seed, &format!("after batch {batches}: {e}")),
        }
        reset_fuzz_tables(&mut fresh);
    }

    let findings = ctx.findings.into_inner().expect("findings lock");
    let alarms = server.alarms();
    eprintln!(
        "fuzz_wire: seed {seed}: {batches} batches, {} operations, {} large statements, \
         {} findings, {} panic lines; idle SELECT 1 took at most {max_idle:?}",
        ctx.ops.load(Ordering::Relaxed),
        ctx.large.load(Ordering::Relaxed),
        findings.len(),
        alarms.len()
    );
    let list: Vec<String> = findings
        .iter()
        .take(MAX_REPORTED)
        .map(|f| format!("- {}\n    {}", f.what, f.input))
        .collect();
    assert!(
        findings.is_empty() && alarms.is_empty(),
        "seed {seed}: {} findings, {} panic lines in the server log\n{}\n--- panic lines ---\n{}",
        findings.len(),
        alarms.len(),
        list.join("\n"),
        alarms.join("\n")
    );
    if strict {
        assert!(
            max_idle < IDLE_LATENCY_BOUND,
            "an idle connection's SELECT 1 took {max_idle:?} (bound {IDLE_LATENCY_BOUND:?})"
        );
    }
    server.assert_running();
}
