"""The bank of CONTRACT.md with the stage-5 idempotency layer, in Python.

Standard library only. It is the same design as the TypeScript reference
(bank/ + solutions/05-scope-ttl), so you can read one next to the other:
a key table whose PRIMARY KEY (client, route, key) decides who executes,
a fingerprint of the canonical body, an in_progress claim with a lease, the
stored response replayed byte for byte, and keys forgotten a TTL after their
first use. Grade it with:

    npm run grade -- 5 --server "python3 examples/python/bank.py"
"""

import hashlib
import json
import os
import re
import secrets
import signal
import socket
import sqlite3
import sys
import threading
import time
import uuid
from datetime import datetime, timedelta, timezone
from decimal import Decimal
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import canonical

ENV = os.environ
DB_PATH = ENV.get("LAB_DB", "bank.sqlite")
DEFAULT_ADMIN_TOKEN = "admin-secret-change-me"  # everybody knows it: accepted only on loopback (main)
ADMIN_TOKEN = ENV.get("LAB_ADMIN_TOKEN", DEFAULT_ADMIN_TOKEN)
LEASE_MS = int(ENV.get("LAB_LEASE_MS", "30000"))
TTL_MS = int(ENV.get("LAB_KEY_TTL_MS", "86400000"))
BODY_LIMIT = int(ENV.get("LAB_BODY_LIMIT", "16384"))
MAX_AMOUNT = 1_000_000_000_000
MAX_DEPTH = 32
POLICY = {"Idempotency-Key-Policy": f'ttl={TTL_MS // 1000}, lease={-(-LEASE_MS // 1000)}, scope="client route"'}


# ---- the clock ---------------------------------------------------------------
# A lease, a TTL and a purge are comparisons of timestamps, so the grader does
# not wait for them: it owns the clock. With LAB_CLOCK_NOW_MS set (only the
# grader sets it), time stands still at that moment until PUT /admin/clock
# moves it, which lets a check send one request at a lease's last millisecond
# and the next at its first one after. Without it, the host's clock. Either
# way plus LAB_CLOCK_OFFSET_MS, as a badly synced host's clock would be.
# Everything timed reads now_ms(), never time.time() (the core's delayMs is
# real processing time, and stays a real sleep).
# The grader proves it started this server with the admin token it makes for
# each grade ("adm_" and 32 hex digits): with any other token,
# LAB_CLOCK_NOW_MS is ignored and the clock is the host's.

LATEST_INSTANT_MS = 8_640_000_000_000_000  # the latest moment a date can hold
GRADER_TOKEN = re.compile(r"adm_[0-9a-f]{32}")
CLOCK_OFFSET_MS = int(ENV.get("LAB_CLOCK_OFFSET_MS", "0"))
CLOCK_START_MS = int(ENV["LAB_CLOCK_NOW_MS"]) if ENV.get("LAB_CLOCK_NOW_MS") else None
if CLOCK_START_MS is not None and not GRADER_TOKEN.fullmatch(ADMIN_TOKEN):
    print("LAB_CLOCK_NOW_MS ignored: only a bank the grader starts, with the grader's admin token, "
          "has a clock that can be moved", file=sys.stderr, flush=True)
    CLOCK_START_MS = None
clock = {"nowMs": CLOCK_START_MS}  # None: the host's
clock_lock = threading.Lock()


def clock_state():
    """What GET /admin/clock answers: the timeline's value, without this instance's offset."""
    timeline = clock["nowMs"]
    return {"controlled": timeline is not None, "nowMs": int(time.time() * 1000) if timeline is None else timeline,
            "offsetMs": CLOCK_OFFSET_MS}


def now_ms():
    return clock_state()["nowMs"] + CLOCK_OFFSET_MS


def iso_now():
    # From whole milliseconds, exactly: createdAt is on the same clock as the leases.
    at = datetime(1970, 1, 1, tzinfo=timezone.utc) + timedelta(milliseconds=now_ms())
    return at.isoformat(timespec="milliseconds").replace("+00:00", "Z")


# ---- answers ---------------------------------------------------------------
# An outcome is (status, headers, body bytes): what stage 4 stores and replays.

def dumps(value):
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False).encode()


def ok(status, value, headers=None):
    return status, {"Content-Type": "application/json", **(headers or {})}, dumps(value)


def problem(status, slug, title, detail, headers=None, **members):
    body = {"type": f"/problems/{slug}", "title": title, "status": status, "detail": detail, **members}
    return status, {"Content-Type": "application/problem+json", **(headers or {})}, dumps(body)


class Problem(Exception):
    def __init__(self, outcome):
        self.outcome = outcome


def invalid(issues):
    detail = "; ".join(f"{i['path'] or 'body'}: {i['message']}" for i in issues)
    return Problem(problem(400, "invalid-body", "Invalid request body", detail, errors=issues))


def malformed_key(reason):
    return problem(400, "idempotency-key-malformed", "Malformed Idempotency-Key", reason)


# ---- the database ------------------------------------------------------------
# One connection per request: sqlite3 connections must not cross threads, and
# several server processes share the file (WAL, a 5 s busy timeout).

SCHEMA = """
CREATE TABLE IF NOT EXISTS clients (id TEXT PRIMARY KEY, name TEXT NOT NULL,
  api_key_hash TEXT NOT NULL UNIQUE, created_at TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS accounts (id TEXT PRIMARY KEY, client_id TEXT NOT NULL,
  balance INTEGER NOT NULL CHECK (balance >= 0), opened_with INTEGER NOT NULL, created_at TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS ledger (seq INTEGER PRIMARY KEY AUTOINCREMENT, id TEXT NOT NULL UNIQUE,
  kind TEXT NOT NULL, client_id TEXT NOT NULL, from_account TEXT, to_account TEXT NOT NULL,
  amount INTEGER NOT NULL CHECK (amount > 0), created_at TEXT NOT NULL);
-- The scope is part of the PRIMARY KEY: another client's key is another row.
CREATE TABLE IF NOT EXISTS idempotency_keys (client_id TEXT NOT NULL, route TEXT NOT NULL,
  key TEXT NOT NULL, fingerprint TEXT NOT NULL, status TEXT NOT NULL, owner TEXT,
  lease_until INTEGER, expires_at INTEGER NOT NULL, response_status INTEGER,
  response_headers TEXT, response_body BLOB, PRIMARY KEY (client_id, route, key));
"""


def connect():
    # isolation_level=None: no hidden BEGINs; we open the transactions ourselves.
    db = sqlite3.connect(DB_PATH, timeout=5, isolation_level=None)
    db.row_factory = sqlite3.Row
    return db


# ---- the core-banking simulator (the grader's hooks for deterministic races) ---
# It also holds the bank's one fault point: crashAfterCommit kills the process
# between a commit and its answer (CONTRACT.md, Admin).

class Core:
    def __init__(self, delay_ms):
        # A restart starts disarmed: the fault point lives in this process only.
        self.state = {"delayMs": delay_ms, "hold": False, "holdNext": 0, "failNext": 0, "crashAfterCommit": False}
        self.inflight = 0
        self.waiting = []  # the held calls, in arrival order
        self.calls = 0
        # The calls held one by one (holdNext), by number, until letGo names one: whether it fails, once told.
        self.held_alone = {}
        self.cond = threading.Condition()

    def call(self):
        """True when the core accepted the movement. `inflight` counts the calls inside."""
        with self.cond:
            self.inflight += 1
        try:
            time.sleep(self.state["delayMs"] / 1000)
            with self.cond:
                if self.state["holdNext"] > 0:
                    # Held on its own: one request waits here while others (a takeover of its key, say) go through.
                    self.state["holdNext"] -= 1
                    self.calls += 1
                    alone = {"fails": None}
                    self.held_alone[self.calls] = alone
                    self.cond.wait_for(lambda: alone["fails"] is not None)
                    if alone["fails"]:
                        return False
                if not self.state["hold"]:
                    return self.answer()
                held = {"ok": None}
                self.waiting.append(held)
                self.cond.wait_for(lambda: held["ok"] is not None)
                return held["ok"]
        finally:
            with self.cond:
                self.inflight -= 1

    def answer(self):
        if self.state["failNext"] > 0:
            self.state["failNext"] -= 1
            return False
        return True

    def after_commit(self):
        """The fault point: called right after the money's transaction committed (the money moved, and the
        key completed with it), before the answer is sent. Armed, the process dies here as a power cut
        would take it: SIGKILL, no handler runs, no answer leaves, nothing later in the request runs."""
        if not self.state["crashAfterCommit"]:
            return
        os.kill(os.getpid(), signal.SIGKILL)
        os._exit(137)  # a signal to oneself arrives before kill() returns; should it not, still never answer

    def update(self, change):
        with self.cond:
            let_go = change.pop("letGo", None)
            self.state.update(change)
            if not self.state["hold"]:
                # Released in arrival order, as the grader expects: `failNext: 1` with the
                # release fails the call that has waited longest, whichever thread wakes first.
                for held in self.waiting:
                    held["ok"] = self.answer()
                self.waiting.clear()
            # `hold: false` lets the calls held alone go on too; `letGo` one of them, into the core or failing there.
            if change.get("hold") is False:
                for alone in self.held_alone.values():
                    alone["fails"] = False
                self.held_alone.clear()
            if let_go and let_go["call"] in self.held_alone:
                self.held_alone.pop(let_go["call"])["fails"] = let_go["fails"]
            self.cond.notify_all()
            return {**self.state, "inflight": self.inflight, "held": sorted(self.held_alone)}


core = Core(int(ENV.get("LAB_PROCESSING_DELAY_MS", "0")))


# ---- bodies: strict JSON, then the schemas -----------------------------------

UTF8_JSON = re.compile(r'^\s*application/json\s*(;\s*charset\s*=\s*("utf-8"|utf-8)\s*)?$', re.I)


def too_deep(text):
    """Nesting depth without recursion (strings skipped), so no deep body reaches a recursive walk."""
    depth, in_string, escaped = 0, False, False
    for c in text:
        if in_string:
            if escaped:
                escaped = False
            elif c == "\\":
                escaped = True
            elif c == '"':
                in_string = False
        elif c == '"':
            in_string = True
        elif c in "[{":
            depth += 1
            if depth > MAX_DEPTH:
                return True
        elif c in "]}":
            depth -= 1
    return False


def refuse_constant(name):
    raise ValueError(f"{name} is not JSON")


def parse_body(raw):
    """The body as JSON values, held to I-JSON; numbers with a fraction or exponent arrive as Decimal."""
    try:
        text = raw.decode("utf-8").removeprefix("\ufeff")
    except UnicodeDecodeError:
        raise Problem(problem(400, "malformed-json", "Malformed JSON", "The body is not valid UTF-8."))
    issues = []

    def members(pairs):
        # json keeps the last of two equal names; the fingerprint and the transfer could disagree.
        names = [name for name, _ in pairs]
        for name in {n for n in names if names.count(n) > 1}:
            issues.append({"path": name, "message": "a member name appears twice in one object (not I-JSON, RFC 7493)"})
        return dict(pairs)

    try:
        value = json.loads(text, object_pairs_hook=members, parse_float=Decimal, parse_constant=refuse_constant)
    except RecursionError:
        value = None  # valid or not, it is too deep: the depth check below answers
        if not too_deep(text):
            raise Problem(problem(400, "malformed-json", "Malformed JSON", "The body is not valid JSON."))
    except ValueError:
        raise Problem(problem(400, "malformed-json", "Malformed JSON", "The body is not valid JSON."))
    if too_deep(text):
        raise Problem(problem(400, "json-too-deep", "JSON nested too deeply",
                              f"The body nests arrays and objects more than {MAX_DEPTH} levels deep.", maxDepth=MAX_DEPTH))
    if canonical.has_lone_surrogate(value):
        issues.append({"path": "", "message": "a string holds a lone surrogate (not I-JSON, RFC 7493)"})
    # Money as written: 0.99999999999999999999 is no whole number, whatever double it rounds to.
    if isinstance(value, dict):
        for name in ("amount", "balance"):
            n = value.get(name)
            if isinstance(n, Decimal):
                if n.is_finite() and n == n.to_integral_value():
                    value[name] = int(n)
                else:
                    issues.append({"path": name, "message": f"must be written as a whole number of won; {n} is not one"})
    if issues:
        raise invalid(issues)
    return value


def is_int(v):
    return isinstance(v, int) and not isinstance(v, bool)


def utf16_len(s):
    return len(s.encode("utf-16-le")) // 2


def check_schema(body, fields):
    """fields: name -> (required, test, message). Unknown members are refused, as zod's strictObject does."""
    if not isinstance(body, dict):
        raise invalid([{"path": "", "message": "the body must be a JSON object"}])
    issues = [{"path": k, "message": "unknown field"} for k in body if k not in fields]
    for name, (required, test, message) in fields.items():
        if name not in body:
            if required:
                issues.append({"path": name, "message": "required"})
        elif not test(body[name]):
            issues.append({"path": name, "message": message})
    if issues:
        raise invalid(issues)
    return body


account_id = (True, lambda v: isinstance(v, str) and 1 <= utf16_len(v) <= 64, "an account id (1 to 64 characters)")
amount = (True, lambda v: is_int(v) and 1 <= v <= MAX_AMOUNT, "a whole number of won from 1 to 1e12")
extras = {
    "memo": (False, lambda v: isinstance(v, str) and utf16_len(v) <= 140, "a string of at most 140 characters"),
    "metadata": (False, lambda v: isinstance(v, dict), "an object"),
}
TRANSFER = {"from": account_id, "to": account_id, "amount": amount, **extras}
DEPOSIT = {"to": account_id, "amount": amount, **extras}
NEW_ACCOUNT = {"balance": (True, lambda v: is_int(v) and 0 <= v <= MAX_AMOUNT, "a whole number of won")}
NEW_CLIENT = {"name": (True, lambda v: isinstance(v, str) and 1 <= utf16_len(v) <= 100, "a name of 1 to 100 characters")}
CORE_UPDATE = {
    "delayMs": (False, lambda v: is_int(v) and 0 <= v <= 600_000, "0 to 600000"),
    "hold": (False, lambda v: isinstance(v, bool), "a boolean"),
    "holdNext": (False, lambda v: is_int(v) and 0 <= v <= 1000, "0 to 1000"),
    "letGo": (False, lambda v: isinstance(v, dict) and set(v) == {"call", "fails"} and is_int(v["call"])
              and isinstance(v["fails"], bool), '{"call": n, "fails": true or false}'),
    "failNext": (False, lambda v: is_int(v) and 0 <= v <= 1000, "0 to 1000"),
    "crashAfterCommit": (False, lambda v: isinstance(v, bool), "a boolean"),
}
CLOCK_UPDATE = {"nowMs": (True, lambda v: is_int(v) and 0 <= v <= LATEST_INSTANT_MS,
                           "an integer number of ms since the epoch, from 0 to 8640000000000000")}


# ---- the money ---------------------------------------------------------------
# Runs inside the caller's BEGIN IMMEDIATE, so the balance check and the writes see one state.

def unknown_account(account):
    return problem(404, "account-not-found", "Account not found", f"There is no account {account}.")


def not_owner(account):
    return problem(403, "not-account-owner", "Not your account", f"Account {account} belongs to another client.")


# The largest balance the bank holds: 2^53 - 1 won, the largest integer a JSON
# number carries exactly. Python's ints could hold more, but the clients' JSON
# parsers could not read it back exactly: refused, and nothing moves.
MAX_BALANCE = 2**53 - 1


def balance_limit(account, balance, amount):
    return problem(422, "balance-limit", "Balance limit",
                   f"Account {account} holds {balance} won: {amount} more would pass {MAX_BALANCE}, "
                   "the most the bank holds exactly.", balance=balance, amount=amount, maxBalance=MAX_BALANCE)


def move(db, client_id, kind, body):
    to, amount_ = body["to"], body["amount"]
    target = db.execute("SELECT client_id, balance FROM accounts WHERE id = ?", (to,)).fetchone()
    if kind == "deposit":
        if not target:
            return unknown_account(to)
        if target["client_id"] != client_id:
            return not_owner(to)
        if target["balance"] + amount_ > MAX_BALANCE:
            return balance_limit(to, target["balance"], amount_)
        balance_after = target["balance"] + amount_
    else:
        source = db.execute("SELECT client_id, balance FROM accounts WHERE id = ?", (body["from"],)).fetchone()
        if not source:
            return unknown_account(body["from"])
        if source["client_id"] != client_id:
            return not_owner(body["from"])
        if not target:
            return unknown_account(to)
        if source["balance"] < amount_:
            return problem(402, "insufficient-funds", "Insufficient funds",
                           f"Account {body['from']} cannot cover {amount_} won.", balance=source["balance"], amount=amount_)
        if target["balance"] + amount_ > MAX_BALANCE:
            return balance_limit(to, target["balance"], amount_)
        db.execute("UPDATE accounts SET balance = balance - ? WHERE id = ?", (amount_, body["from"]))
        balance_after = source["balance"] - amount_
    db.execute("UPDATE accounts SET balance = balance + ? WHERE id = ?", (amount_, to))
    entry_id, created = f"{'tr' if kind == 'transfer' else 'dp'}_{uuid.uuid4()}", iso_now()
    source_id = body.get("from") if kind == "transfer" else None
    db.execute("INSERT INTO ledger (id, kind, client_id, from_account, to_account, amount, created_at) VALUES (?,?,?,?,?,?,?)",
               (entry_id, kind, client_id, source_id, to, amount_, created))
    # balanceAfter and createdAt would differ if computed again: stage 4 replays the stored bytes.
    answer = {"id": entry_id, **({"from": source_id} if kind == "transfer" else {}), "to": to, "amount": amount_,
              "createdAt": created, "balanceAfter": balance_after}
    return ok(201, answer, {"Location": f"/{kind}s/{entry_id}"})


# ---- the idempotency layer (stage 5) -------------------------------------------

def parse_key(lines):
    """The key, or the 400 to answer. One header line, one key; quoted is an RFC 8941 String."""
    if not lines:
        return problem(400, "idempotency-key-missing", "Idempotency-Key required",
                       "Send an Idempotency-Key header: a fresh UUID per new transfer, the same one on its retries.")
    if len(lines) > 1:
        return malformed_key(f"Idempotency-Key was sent on {len(lines)} header lines; send it once.")
    key = lines[0]
    if key.startswith('"'):
        # sf-string: printable ASCII, only \" and \\ escaped, nothing after the closing quote (no list, no parameters).
        match = re.fullmatch(r'"((?:[\x20\x21\x23-\x5b\x5d-\x7e]|\\["\\])*)"', key)
        if not match:
            return malformed_key("A quoted key must be one valid Structured Field String (RFC 8941), without parameters.")
        key = re.sub(r'\\(["\\])', r"\1", match.group(1))
    elif "," in key:
        # Exactly what two merged header lines look like: a key with a comma must be quoted.
        return malformed_key("A bare Idempotency-Key may not contain a comma; quote it to send one.")
    if not key:
        return malformed_key("The key is empty.")
    if len(key) > 255:
        return malformed_key("The key is longer than 255 characters.")
    if not re.fullmatch(r"[\x20-\x7e]+", key):
        return malformed_key("The key may contain printable ASCII characters only.")
    return key


last_purge = [0]
PURGE_EVERY_MS = max(1, min(TTL_MS, 60_000))


def claim(db, scope, fingerprint):
    """('claimed', owner) | ('answer', outcome). The INSERT decides; the read before it only saves a write."""
    owner = str(uuid.uuid4())
    where = "client_id = ? AND route = ? AND key = ?"
    while True:
        now = now_ms()
        if now - last_purge[0] >= PURGE_EVERY_MS:
            last_purge[0] = now
            purge(db, now)
        row = db.execute(f"SELECT * FROM idempotency_keys WHERE {where}", scope).fetchone()
        if row is None:
            try:
                db.execute("INSERT INTO idempotency_keys (client_id, route, key, fingerprint, status, owner, lease_until, expires_at)"
                           " VALUES (?, ?, ?, ?, 'in_progress', ?, ?, ?)", (*scope, fingerprint, owner, now + LEASE_MS, now + TTL_MS))
                return "claimed", owner
            except sqlite3.IntegrityError:
                continue  # another request's INSERT won: read its row
        # A period P begun at t holds while now < t + P: at lease_until (or expires_at) itself it is over.
        live_lease = row["status"] == "in_progress" and row["lease_until"] > now
        if row["expires_at"] <= now and not live_lease:
            purge(db, now)  # expired: the key is unknown from this moment, purged or not
            continue
        if row["fingerprint"] != fingerprint:
            return "answer", problem(422, "idempotency-key-reused", "Idempotency-Key reused",
                                     "This key was already used with a different request body. Use a new key.")
        if row["status"] == "completed":
            headers = {**json.loads(row["response_headers"]), "Idempotent-Replayed": "true"}
            return "answer", (row["response_status"], headers, row["response_body"])
        if live_lease:
            seconds = max(1, -(-(row["lease_until"] - now) // 1000))
            return "answer", problem(409, "request-in-flight", "Request in progress",
                                     "A request with this Idempotency-Key is still being processed.", {"Retry-After": str(seconds)})
        # The lease ran out (a crash, or a slow original): take the claim over, if nobody else just did.
        took = db.execute(f"UPDATE idempotency_keys SET owner = ?, lease_until = ? WHERE {where} AND owner = ?"
                          " AND status = 'in_progress' AND lease_until <= ?", (owner, now + LEASE_MS, *scope, row["owner"], now))
        if took.rowcount == 1:
            return "claimed", owner


def purge(db, now):
    # Only rows no request can still be working under: completed, or with their lease run out too.
    db.execute("DELETE FROM idempotency_keys WHERE expires_at <= ? AND (status = 'completed' OR lease_until <= ?)", (now, now))


def release(db, scope, owner):
    # Only our own claim: a superseded original that fails leaves the takeover's claim alone.
    db.execute("DELETE FROM idempotency_keys WHERE client_id = ? AND route = ? AND key = ? AND owner = ?"
               " AND status = 'in_progress'", (*scope, owner))


def execute_claimed(db, scope, owner, client_id, kind, body):
    if not core.call():
        release(db, scope, owner)  # nothing moved: the client's retry must execute
        return problem(503, "core-unavailable", "Core banking unavailable", "No money moved; try again.", {"Retry-After": "1"})
    try:
        db.execute("BEGIN IMMEDIATE")  # the write lock up front: no two processes interleave balance checks
        outcome = move(db, client_id, kind, body)
        status, headers, payload = outcome
        stored = {h: headers[h] for h in ("Content-Type", "Location") if h in headers}
        # Completing in the money's transaction, and only by the claim's owner.
        done = db.execute("UPDATE idempotency_keys SET status = 'completed', owner = NULL, lease_until = NULL,"
                          " response_status = ?, response_headers = ?, response_body = ? WHERE client_id = ? AND route = ?"
                          " AND key = ? AND owner = ? AND status = 'in_progress'",
                          (status, json.dumps(stored), payload, *scope, owner))
        if done.rowcount != 1:
            db.execute("ROLLBACK")  # a retry took our claim over: it moves the money, we must not
            return problem(409, "idempotency-claim-lost", "Request superseded",
                           "A retry with this Idempotency-Key took over. Retry to get the result.", {"Retry-After": "1"})
        db.execute("COMMIT")
        # Committed, whatever the outcome (a 402 completes its key too): PUT /admin/core's crashAfterCommit fires here.
        # A 503 (above) and a lost claim (rolled back) commit nothing, so they never reach it.
        core.after_commit()
        return outcome
    except BaseException:
        if db.in_transaction:
            db.execute("ROLLBACK")
        release(db, scope, owner)
        raise


def money_route(db, client_id, route, kind, body, key_lines):
    key = parse_key(key_lines)
    if not isinstance(key, str):
        return key
    try:
        fingerprint = hashlib.sha256(canonical.canonicalize(body).encode()).hexdigest()
    except ValueError as error:
        raise invalid([{"path": "", "message": str(error)}])
    scope = (client_id, route, key)
    kind_of, result = claim(db, scope, fingerprint)
    if kind_of == "answer":
        return result
    return execute_claimed(db, scope, result, client_id, kind, body)


# ---- HTTP ------------------------------------------------------------------------
# Routes match as Express matches them: any letter case, an optional trailing slash.

def route(pattern):
    return re.compile(f"^{pattern}/?$", re.I)


ROUTES = [
    ("GET", route("/health"), "health"),
    ("POST", route("/admin/clients"), "new_client"),
    ("GET", route("/admin/ledger"), "ledger"),
    ("GET", route("/admin/core"), "core"),
    ("PUT", route("/admin/core"), "core"),
    ("GET", route("/admin/clock"), "clock"),
    ("PUT", route("/admin/clock"), "clock"),
    ("POST", route("/accounts"), "new_account"),
    ("GET", route("/accounts/([^/]+)"), "account"),
    ("POST", route("/(transfers|deposits)"), "money"),
    ("GET", route("/(transfers|deposits)/([^/]+)"), "entry"),
]


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, fmt, *args):
        sys.stderr.write(fmt % args + "\n")

    def address_string(self):
        return "unix" if isinstance(self.client_address, str) else self.client_address[0]

    def do_any(self):
        try:
            outcome, extra = self.answer()
        except Problem as p:
            outcome, extra = p.outcome, {}
        except Exception as error:  # a bug: the log says what, the client gets a problem
            print(f"internal error: {error!r}", file=sys.stderr)
            outcome, extra = problem(500, "internal-error", "Internal server error", "The server failed; see its log."), {}
        status, headers, body = outcome
        self.send_response(status)
        for name, value in {**extra, **headers, "Content-Length": str(len(body))}.items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(body)

    do_GET = do_POST = do_PUT = do_DELETE = do_PATCH = do_any

    def read_body(self):
        """The checks of CONTRACT.md's 'Limits and strict JSON', in its order, before routing and auth."""
        if "Transfer-Encoding" in self.headers:
            # Kept small: no chunked bodies. Closing keeps the unread chunks from being read as a request.
            self.close_connection = True
            raise Problem(problem(411, "length-required", "Length required", "Send the body with a Content-Length."))
        length = int(self.headers.get("Content-Length") or 0)
        if length == 0:
            return None
        if not UTF8_JSON.match(self.headers.get("Content-Type", "")) or self.headers.get("Content-Encoding", "identity") != "identity":
            self.discard(length)
            raise Problem(problem(415, "unsupported-media-type", "Unsupported media type", "Send UTF-8 JSON, uncompressed."))
        if length > BODY_LIMIT:
            self.discard(length)
            raise Problem(problem(413, "body-too-large", "Body too large", "The body exceeds the size limit."))
        return parse_body(self.rfile.read(length))

    def discard(self, length):
        # Read the refused body to its end: a client still sending it would get EPIPE instead of our answer.
        self.close_connection = True
        while length > 0:
            length -= len(self.rfile.read(min(length, 1 << 16)) or b"x" * length)

    def answer(self):
        path = self.path.split("?", 1)[0]
        body = self.read_body()
        for method, pattern, name in ROUTES:
            match = pattern.match(path)
            if match and method == self.command:
                db = connect()
                try:
                    return getattr(self, name)(db, body, *match.groups())
                finally:
                    db.close()
        return problem(404, "not-found", "Not found", f"No route {self.command} {path}."), {}

    def bearer(self):
        value = self.headers.get("Authorization", "")
        return value[7:] if value.startswith("Bearer ") else None

    def client(self, db):
        token = self.bearer()
        row = token and db.execute("SELECT id FROM clients WHERE api_key_hash = ?",
                                   (hashlib.sha256(token.encode()).hexdigest(),)).fetchone()
        if not row:
            raise Problem(problem(401, "unauthorized", "Unauthorized", "Send Authorization: Bearer <apiKey>.",
                                  {"WWW-Authenticate": "Bearer"}))
        return row["id"]

    def admin(self):
        if self.bearer() != ADMIN_TOKEN:
            raise Problem(problem(401, "unauthorized", "Unauthorized", "Admin routes need the admin token.",
                                  {"WWW-Authenticate": "Bearer"}))

    def health(self, db, body):
        return ok(200, {"status": "ok", "pid": os.getpid()}), {}

    def new_client(self, db, body):
        self.admin()
        name = check_schema(body, NEW_CLIENT)["name"]
        client_id, api_key = f"cl_{uuid.uuid4()}", f"sk_{secrets.token_hex(24)}"
        db.execute("INSERT INTO clients VALUES (?, ?, ?, ?)",
                   (client_id, name, hashlib.sha256(api_key.encode()).hexdigest(), iso_now()))
        return ok(201, {"id": client_id, "name": name, "apiKey": api_key}), {}

    def ledger(self, db, body):
        self.admin()
        db.execute("BEGIN")  # one snapshot for both lists
        accounts = [dict(r) for r in db.execute("SELECT id, client_id AS clientId, balance, opened_with AS openedWith FROM accounts ORDER BY rowid")]
        entries = [dict(r) for r in db.execute('SELECT id, kind, client_id AS clientId, from_account AS "from", to_account AS "to",'
                                               ' amount, created_at AS createdAt FROM ledger ORDER BY seq')]
        db.execute("COMMIT")
        return ok(200, {"accounts": accounts, "entries": entries}), {}

    def core(self, db, body):
        self.admin()
        return ok(200, core.update(check_schema(body, CORE_UPDATE) if self.command == "PUT" else {})), {}

    def clock(self, db, body):
        self.admin()
        if self.command == "GET":
            return ok(200, clock_state()), {}
        now = check_schema(body, CLOCK_UPDATE)["nowMs"]
        with clock_lock:
            if clock["nowMs"] is None:
                raise Problem(problem(409, "clock-not-controlled", "The clock is the host clock",
                                      "This instance was not started by the grader (LAB_CLOCK_NOW_MS with the "
                                      "grader's admin token): its clock cannot be moved."))
            if now < clock["nowMs"]:  # never back: a lease once over stays over
                raise Problem(problem(409, "clock-never-goes-back", "The clock never goes back",
                                      f"The clock stands at {clock['nowMs']}; {now} is earlier. "
                                      "A moment once passed stays passed.", nowMs=clock["nowMs"]))
            if abs(now + CLOCK_OFFSET_MS) > LATEST_INSTANT_MS:
                message = f"{now} plus this instance's offset ({CLOCK_OFFSET_MS} ms) is past the latest date"
                raise Problem(problem(400, "invalid-body", "Invalid request body", f"nowMs: {message}",
                                      errors=[{"path": "nowMs", "message": message}]))
            clock["nowMs"] = now
            return ok(200, clock_state()), {}

    def new_account(self, db, body):
        client_id = self.client(db)
        balance = check_schema(body, NEW_ACCOUNT)["balance"]
        account = f"acc_{uuid.uuid4()}"
        db.execute("INSERT INTO accounts VALUES (?, ?, ?, ?, ?)", (account, client_id, balance, balance, iso_now()))
        return ok(201, {"id": account, "balance": balance}, {"Location": f"/accounts/{account}"}), {}

    def account(self, db, body, account):
        client_id = self.client(db)
        row = db.execute("SELECT client_id, balance FROM accounts WHERE id = ?", (account,)).fetchone()
        if not row:
            return unknown_account(account), {}
        if row["client_id"] != client_id:
            return not_owner(account), {}
        return ok(200, {"id": account, "balance": row["balance"]}), {}

    def entry(self, db, body, plural, entry_id):
        client_id, kind = self.client(db), plural.lower()[:-1]
        row = db.execute('SELECT id, from_account AS "from", to_account AS "to", amount, created_at AS createdAt FROM ledger'
                         " WHERE id = ? AND kind = ? AND client_id = ?", (entry_id, kind, client_id)).fetchone()
        if not row:
            return problem(404, f"{kind}-not-found", "Not found", f"You have no {kind} {entry_id}."), {}
        return ok(200, dict(row)), {}

    def money(self, db, body, plural):
        client_id, kind = self.client(db), plural.lower()[:-1]
        body = check_schema(body, TRANSFER if kind == "transfer" else DEPOSIT)
        if kind == "transfer" and body["from"] == body["to"]:
            raise invalid([{"path": "to", "message": "from and to must be different accounts"}])
        # The bank's name for the route, never the spelling of the request: one route, one key space.
        outcome = money_route(db, client_id, f"POST /{kind}s", kind, body, self.headers.get_all("Idempotency-Key") or [])
        return outcome, POLICY


class Server(ThreadingHTTPServer):
    # The grader opens a dozen connections at the same instant: the default backlog of 5 refuses some.
    request_queue_size = 128


class UnixServer(Server):
    address_family = socket.AF_UNIX

    def server_bind(self):
        # HTTPServer.server_bind would look up a host name; a socket path has none.
        self.socket.bind(self.server_address)
        self.server_name, self.server_port = "localhost", 0


def main():
    db = connect()
    db.execute("PRAGMA journal_mode = WAL")
    db.executescript(SCHEMA)
    db.close()
    path = ENV.get("LAB_SOCKET")
    host = ENV.get("LAB_HOST", "127.0.0.1")
    if ADMIN_TOKEN == DEFAULT_ADMIN_TOKEN and not path and host not in ("127.0.0.1", "::1", "localhost"):
        sys.exit(f"LAB_ADMIN_TOKEN is the default one, which everybody knows: set a token of your own to listen on {host}")
    if path:
        server, where = UnixServer(path, Handler), f"unix:{path}"
    else:
        server = Server((host, int(ENV.get("LAB_PORT", "3000"))), Handler)
        where = f"http://{server.server_address[0]}:{server.server_address[1]}"
    # SIGTERM ends serve_forever in the main thread; request threads are daemons.
    signal.signal(signal.SIGTERM, lambda *_: (_ for _ in ()).throw(KeyboardInterrupt))
    print(f"listening on {where} (python {sys.version.split()[0]}, db {DB_PATH})", flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    server.server_close()


if __name__ == "__main__":
    main()
