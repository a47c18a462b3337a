"""RFC 8785 (JCS) canonical JSON, for the values bank.py parses.

Two serializations of one payload must give the same bytes, whatever the
client's library did with member order, whitespace, number spelling (1, 1.0,
1e0) or string escapes. JCS is defined on ECMAScript values, so numbers are
written the way JavaScript's Number-to-String writes a double.
"""

import json
from decimal import Decimal


def es_number(x):
    """ECMAScript Number::toString of the double x (ECMA-262 §6.1.6.1.20)."""
    if x != x or x in (float("inf"), float("-inf")):
        raise ValueError(f"{x} is not a JSON number")
    if x == 0:
        return "0"  # -0 too
    if x < 0:
        return "-" + es_number(-x)
    # repr() gives the shortest digits that round-trip, as ECMAScript asks.
    sign, digits, exponent = Decimal(repr(x)).as_tuple()
    s = "".join(map(str, digits)).rstrip("0")
    exponent += len(digits) - len(s)
    k, n = len(s), len(s) + exponent  # x = 0.s × 10^n
    if k <= n <= 21:
        return s + "0" * (n - k)
    if 0 < n <= 21:
        return s[:n] + "." + s[n:]
    if -6 < n <= 0:
        return "0." + "0" * -n + s
    e = n - 1
    mantissa = s if k == 1 else s[0] + "." + s[1:]
    return f"{mantissa}e{'+' if e > 0 else '-'}{abs(e)}"


def canonicalize(value):
    if value is None or isinstance(value, bool):
        return json.dumps(value)
    if isinstance(value, (int, float, Decimal)):
        # JavaScript holds every JSON number as a double: so must the fingerprint.
        try:
            return es_number(float(value))
        except OverflowError:
            raise ValueError(f"{value} is not a finite number")
    if isinstance(value, str):
        return string(value)
    if isinstance(value, list):
        return "[" + ",".join(canonicalize(v) for v in value) + "]"
    # Members sorted by UTF-16 code units, as JCS says (not by code points).
    names = sorted(value, key=lambda k: k.encode("utf-16-be", "surrogatepass"))
    return "{" + ",".join(f"{string(k)}:{canonicalize(value[k])}" for k in names) + "}"


def string(s):
    # json.dumps escapes exactly what JCS escapes: ", \ and control characters.
    return json.dumps(s, ensure_ascii=False)


def has_lone_surrogate(value):
    """A string (or name) with a lone surrogate has no UTF-8 form: not I-JSON, no canonical form."""
    if isinstance(value, str):
        return any(0xD800 <= ord(c) <= 0xDFFF for c in value)
    if isinstance(value, list):
        return any(has_lone_surrogate(v) for v in value)
    if isinstance(value, dict):
        return any(has_lone_surrogate(k) or has_lone_surrogate(v) for k, v in value.items())
    return False
