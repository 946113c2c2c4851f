"""Verifies every DKIM-Signature of one message with dkimpy, an implementation independent of Mailroom's.

Usage: /usr/bin/python3 dkim_verify.py MESSAGE_FILE RECORDS_FILE
RECORDS_FILE has one line per selector: "<selector>._domainkey.<domain> <TXT record text>"; dkimpy's
DNS lookup is answered from it, so no network is used. Prints one line per signature,
"pass d=... s=... a=..." or "fail d=... s=... a=...: <reason>", and exits 0 only when there is at
least one signature and every one passes (2 when there is none).
"""
import sys

import dkim


def main():
    message = open(sys.argv[1], "rb").read()
    records = {}
    with open(sys.argv[2], "r", encoding="ascii") as f:
        for line in f:
            line = line.strip()
            if line:
                name, text = line.split(" ", 1)
                records[name.lower().rstrip(".")] = text.encode("ascii")

    def dnsfunc(name, timeout=5):
        key = name.decode("ascii") if isinstance(name, bytes) else name
        return records.get(key.lower().rstrip("."))

    d = dkim.DKIM(message, minkey=1024)
    count = sum(1 for h in d.headers if h[0].lower() == b"dkim-signature")
    if count == 0:
        print("none: the message has no DKIM-Signature")
        return 2
    ok = True
    for idx in range(count):
        v = dkim.DKIM(message, minkey=1024)
        try:
            passed = v.verify(idx=idx, dnsfunc=dnsfunc)
            reason = "" if passed else "signature did not verify"
        except dkim.DKIMException as e:
            passed, reason = False, str(e)
        sig = v.signature_fields or {}
        what = "d=%s s=%s a=%s" % (sig.get(b"d", b"?").decode(), sig.get(b"s", b"?").decode(), sig.get(b"a", b"?").decode())
        print(("pass " + what) if passed else ("fail " + what + ": " + reason))
        ok = ok and passed
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
