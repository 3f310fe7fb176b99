"""moto's server with one gap of its KMS model closed: Sign and Verify with MessageType=DIGEST.

moto 5.2.5 ignores MessageType (its docs say DIGEST "is not yet implemented") and hashes the
given digest again, so a signature made through it is over sha256(sha256(payload)) where AWS KMS
signs sha256(payload). cosign always sends a DIGEST. This launcher marks DIGEST requests and makes
moto's own ECDSA and RSA keys sign and verify the digest as given (cryptography's Prehashed);
everything else is moto, unchanged. Arguments are moto.server's.
"""

import threading

from cryptography.hazmat.primitives.asymmetric import ec, utils as asym_utils
from moto.kms import responses, utils
from moto.server import main

_request = threading.local()


def _digest_request() -> bool:
    return getattr(_request, "digest", False)


def _marking(handler):
    def wrapped(self):
        _request.digest = self._get_param("MessageType") == "DIGEST"
        try:
            return handler(self)
        finally:
            _request.digest = False

    return wrapped


responses.KmsResponse.sign = _marking(responses.KmsResponse.sign)
responses.KmsResponse.verify = _marking(responses.KmsResponse.verify)


class _EcForDigests:
    """moto.kms.utils' `ec`, with ECDSA(hash) meaning "over this digest" during DIGEST requests."""

    def __getattr__(self, name):
        return getattr(ec, name)

    @staticmethod
    def ECDSA(algorithm):
        if _digest_request():
            return ec.ECDSA(asym_utils.Prehashed(algorithm))
        return ec.ECDSA(algorithm)


utils.ec = _EcForDigests()

_rsa_padding = utils.RSAPrivateKey._RSAPrivateKey__padding_and_hash_algorithm


def _rsa_padding_for_digests(self, signing_algorithm):
    pad, algorithm = _rsa_padding(self, signing_algorithm)
    return (pad, asym_utils.Prehashed(algorithm)) if _digest_request() else (pad, algorithm)


utils.RSAPrivateKey._RSAPrivateKey__padding_and_hash_algorithm = _rsa_padding_for_digests

if __name__ == "__main__":
    main()
