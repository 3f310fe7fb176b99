"""A loopback stand-in for HashiCorp Vault's transit secrets engine, for the KMS tests.

Vault itself cannot be built from the Go module proxy: its root module replaces its api/ and
sdk/ modules with in-repository directories that match no published version (checked for
v1.21.4, v1.20.4 and v1.15.6), and OpenBao's root module is not served. This server speaks the
part of Vault's HTTP API that cosign's hashivault provider and Signet use, with Vault's JSON
shapes: transit keys (create, read, rotate), sign (prehashed digests, `vault:vN:` signatures), a
token check, and the Kubernetes auth method's login. Keys are ECDSA P-256, made and used with
pyca/cryptography (installed with tuf).

    python3 vault_transit.py PORT ROOT_TOKEN [KUBERNETES_ROLE=JWT ...]
"""

import base64
import json
import re
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec, utils

HASHES = {"sha2-256": hashes.SHA256(), "sha2-384": hashes.SHA384(), "sha2-512": hashes.SHA512()}


class Transit:
    def __init__(self, root_token, roles):
        self.lock = threading.Lock()
        self.tokens = {root_token}
        self.roles = roles
        self.keys = {}

    def public(self, name):
        versions = self.keys[name]
        keys = {}
        for number, key in enumerate(versions, start=1):
            pem = key.public_key().public_bytes(
                serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
            )
            keys[str(number)] = {"name": "P-256", "public_key": pem.decode()}
        return {"data": {"name": name, "type": "ecdsa-p256", "keys": keys, "latest_version": len(versions)}}


class Handler(BaseHTTPRequestHandler):
    transit: Transit

    def log_message(self, fmt, *args):
        sys.stdout.write("%s %s\n" % (self.command, self.path))
        sys.stdout.flush()

    def reply(self, status, body=None):
        data = b"" if body is None else json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def body(self):
        length = int(self.headers.get("Content-Length") or 0)
        return json.loads(self.rfile.read(length) or b"{}")

    def do_GET(self):
        self.route("GET")

    def do_POST(self):
        self.route("POST")

    def do_PUT(self):
        self.route("POST")

    def route(self, method):
        path = self.path.split("?")[0]
        t = self.transit
        if path == "/v1/sys/health":
            return self.reply(200, {"initialized": True, "sealed": False})
        login = re.fullmatch(r"/v1/auth/([\w-]+)/login", path)
        if login and method == "POST":
            body = self.body()
            if t.roles.get(body.get("role")) != body.get("jwt"):
                return self.reply(403, {"errors": ["permission denied"]})
            token = "k8s-" + body["role"]
            with t.lock:
                t.tokens.add(token)
            return self.reply(200, {"auth": {"client_token": token, "lease_duration": 3600}})
        if self.headers.get("X-Vault-Token") not in t.tokens:
            return self.reply(403, {"errors": ["permission denied"]})
        if path == "/v1/sys/mounts/transit":
            return self.reply(204)
        keys = re.fullmatch(r"/v1/transit/keys/([\w.-]+)(/rotate)?", path)
        if keys:
            name, rotate = keys.group(1), keys.group(2)
            with t.lock:
                if method == "POST":
                    if not rotate:
                        self.body()
                    t.keys.setdefault(name, [])
                    if rotate or not t.keys[name]:
                        t.keys[name].append(ec.generate_private_key(ec.SECP256R1()))
                    return self.reply(200, t.public(name))
                if name not in t.keys:
                    return self.reply(404, {"errors": []})
                return self.reply(200, t.public(name))
        sign = re.fullmatch(r"/v1/transit/sign/([\w.-]+)(?:/([\w-]+))?", path)
        if sign and method == "POST":
            name, algorithm = sign.group(1), sign.group(2) or "sha2-256"
            body = self.body()
            with t.lock:
                versions = t.keys.get(name)
                if not versions:
                    return self.reply(400, {"errors": [f"signing key {name} not found"]})
                version = int(body.get("key_version") or len(versions))
                key = versions[version - 1]
            data = base64.b64decode(body["input"])
            hash_algorithm = HASHES[body.get("hash_algorithm") or algorithm]
            if body.get("prehashed"):
                signature = key.sign(data, ec.ECDSA(utils.Prehashed(hash_algorithm)))
            else:
                signature = key.sign(data, ec.ECDSA(hash_algorithm))
            encoded = base64.b64encode(signature).decode()
            return self.reply(200, {"data": {"signature": f"vault:v{version}:{encoded}", "key_version": version}})
        return self.reply(404, {"errors": []})


def main(argv):
    port, root_token, *roles = argv
    Handler.transit = Transit(root_token, dict(role.split("=", 1) for role in roles))
    server = ThreadingHTTPServer(("127.0.0.1", int(port)), Handler)
    print(f"vault transit stand-in listening on 127.0.0.1:{port}", flush=True)
    server.serve_forever()


if __name__ == "__main__":
    main(sys.argv[1:])
