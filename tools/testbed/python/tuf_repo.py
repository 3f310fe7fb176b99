"""A TUF repository on disk, made and changed with python-tuf's Metadata API (tuf 7.0.1).

Used by the trust-root tests as the real thing a TUF client reads: signed metadata in the
repository layout (consistent snapshots: N.root.json, timestamp.json, N.snapshot.json,
N.targets.json, targets/<sha256>.<name>). Private keys are kept in <dir>/.keys/ (test keys).

    python3 tuf_repo.py init DIR NAME=FILE...     root v1 and all roles, one Ed25519 key each
    python3 tuf_repo.py set-target DIR NAME=FILE  new targets, snapshot and timestamp versions
    python3 tuf_repo.py rotate-root DIR           new keys for every role; root N+1 signed by old and new
    python3 tuf_repo.py expire-timestamp DIR [S]  a new timestamp that expired an hour ago (or expires in S seconds)

Every command prints a JSON line: {"root_version": N, "root": "<path of 1.root.json>"}.
"""

import json
import os
import sys
from datetime import datetime, timedelta, timezone

from securesystemslib.signer import CryptoSigner, SSlibKey
from tuf.api.metadata import (
    Key,
    Metadata,
    MetaFile,
    Role,
    Root,
    Snapshot,
    TargetFile,
    Targets,
    Timestamp,
)
from tuf.api.serialization.json import JSONSerializer

ROLES = ("root", "timestamp", "snapshot", "targets")
SERIALIZER = JSONSerializer(compact=False)


def far_future():
    return datetime.now(timezone.utc).replace(microsecond=0) + timedelta(days=365)


def keys_dir(repo):
    return os.path.join(repo, ".keys")


def new_signer():
    return CryptoSigner.generate_ed25519()


def save_signer(repo, role, signer):
    os.makedirs(keys_dir(repo), exist_ok=True)
    with open(os.path.join(keys_dir(repo), f"{role}.pem"), "wb") as f:
        f.write(signer.private_bytes)
    with open(os.path.join(keys_dir(repo), f"{role}.pub.json"), "w") as f:
        json.dump({"keyid": signer.public_key.keyid, **signer.public_key.to_dict()}, f)


def load_signer(repo, role):
    with open(os.path.join(keys_dir(repo), f"{role}.pub.json")) as f:
        data = json.load(f)
    keyid = data.pop("keyid")
    public = SSlibKey.from_dict(keyid, data)
    return CryptoSigner.from_priv_key_uri(f"file2:{os.path.join(keys_dir(repo), role + '.pem')}", public)


def write(repo, name, metadata):
    metadata.to_file(os.path.join(repo, name), SERIALIZER)


def read(repo, name):
    return Metadata.from_file(os.path.join(repo, name))


def newest_root(repo):
    versions = [int(n.split(".")[0]) for n in os.listdir(repo) if n.endswith(".root.json")]
    return max(versions)


def sign_and_write(repo, role, metadata, signers):
    metadata.signatures.clear()
    for signer in signers:
        metadata.sign(signer, append=True)
    version = metadata.signed.version
    name = {"root": f"{version}.root.json", "timestamp": "timestamp.json"}.get(role, f"{version}.{role}.json")
    write(repo, name, metadata)


def add_targets(repo, targets, pairs):
    os.makedirs(os.path.join(repo, "targets"), exist_ok=True)
    for pair in pairs:
        name, path = pair.split("=", 1)
        with open(path, "rb") as f:
            data = f.read()
        info = TargetFile.from_data(name, data, ["sha256"])
        targets.signed.targets[name] = info
        with open(os.path.join(repo, "targets", f"{info.hashes['sha256']}.{name}"), "wb") as f:
            f.write(data)


def publish(repo, targets, snapshot_version, expires_timestamp=None):
    """Writes targets, a snapshot naming it and a timestamp naming the snapshot."""
    signers = {role: load_signer(repo, role) for role in ("timestamp", "snapshot", "targets")}
    sign_and_write(repo, "targets", targets, [signers["targets"]])
    snapshot = Metadata(Snapshot(version=snapshot_version, expires=far_future()))
    snapshot.signed.meta["targets.json"] = MetaFile(version=targets.signed.version)
    sign_and_write(repo, "snapshot", snapshot, [signers["snapshot"]])
    timestamp = Metadata(Timestamp(version=snapshot_version, expires=expires_timestamp or far_future()))
    timestamp.signed.snapshot_meta = MetaFile(version=snapshot_version)
    sign_and_write(repo, "timestamp", timestamp, [signers["timestamp"]])


def current_targets(repo):
    versions = [int(n.split(".")[0]) for n in os.listdir(repo) if n.endswith(".targets.json")]
    return read(repo, f"{max(versions)}.targets.json")


def current_snapshot_version(repo):
    return read(repo, "timestamp.json").signed.snapshot_meta.version


def init(repo, pairs):
    os.makedirs(repo, exist_ok=True)
    signers = {role: new_signer() for role in ROLES}
    for role, signer in signers.items():
        save_signer(repo, role, signer)
    root = Metadata(Root(expires=far_future(), consistent_snapshot=True))
    for role, signer in signers.items():
        root.signed.add_key(signer.public_key, role)
    sign_and_write(repo, "root", root, [signers["root"]])
    targets = Metadata(Targets(version=1, expires=far_future()))
    add_targets(repo, targets, pairs)
    publish(repo, targets, 1)


def set_target(repo, pairs):
    targets = current_targets(repo)
    targets.signed.version += 1
    add_targets(repo, targets, pairs)
    publish(repo, targets, current_snapshot_version(repo) + 1)


def rotate_root(repo):
    version = newest_root(repo)
    old = read(repo, f"{version}.root.json")
    old_root_signer = load_signer(repo, "root")
    new = {role: new_signer() for role in ROLES}
    root = Metadata(Root(version=version + 1, expires=far_future(), consistent_snapshot=True))
    for role, signer in new.items():
        root.signed.add_key(signer.public_key, role)
    # Signed by the old root key (the client trusts it) and the new one (the new threshold).
    sign_and_write(repo, "root", root, [old_root_signer, new["root"]])
    for role, signer in new.items():
        save_signer(repo, role, signer)
    del old
    targets = current_targets(repo)
    targets.signed.version += 1
    publish(repo, targets, current_snapshot_version(repo) + 1)


def expire_timestamp(repo, seconds=None):
    signer = load_signer(repo, "timestamp")
    timestamp = read(repo, "timestamp.json")
    timestamp.signed.version += 1
    now = datetime.now(timezone.utc).replace(microsecond=0)
    timestamp.signed.expires = now - timedelta(hours=1) if seconds is None else now + timedelta(seconds=seconds)
    sign_and_write(repo, "timestamp", timestamp, [signer])


def main(argv):
    command, repo, *rest = argv
    if command == "init":
        init(repo, rest)
    elif command == "set-target":
        set_target(repo, rest)
    elif command == "rotate-root":
        rotate_root(repo)
    elif command == "expire-timestamp":
        expire_timestamp(repo, int(rest[0]) if rest else None)
    else:
        raise SystemExit(f"unknown command {command}")
    print(json.dumps({"root_version": newest_root(repo), "root": os.path.join(repo, "1.root.json")}))


if __name__ == "__main__":
    main(sys.argv[1:])
