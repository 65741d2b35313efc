"""The 26 kinds of secret the reliability review tried (shared/reviews/reliability.md), as they appear in
transcripts: each is `(text as written, the part that must never reach an output, the kind it is named)`.

All values are fake (right shape, never valid). None holds a `/` or a `+`: the tests also put each one into a
directory name, where a `/` would cut it. The base64 ones were picked so their encodings hold neither.
"""

from __future__ import annotations

import base64

ANTHROPIC = (
    "sk-ant-api03-"
    + "Qw3rTy8UiOpAsDfGhJkLzXcVbNm1234567890QwErTyUiOpAsDfGhJkLzXcVbNmQwErTyUiOpAsDfGhJkLzXcVb12345"
    + "AA"
)
OPENSSH = (
    "-----BEGIN OPENSSH PRIVATE KEY-----\n"
    "b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAAAMwAAAAtzc2gtZW\n"
    "QyNTUxOQAAACDzGd9Xq3pQwErTyUiOpAsDfGhJkLzXcVbNm0123456789abcdAAAAJgkQw\n"
    "-----END OPENSSH PRIVATE KEY-----"
)
RSA = (
    "-----BEGIN RSA PRIVATE KEY-----\n"
    "MIIEpAIBAAKCAQEA3Tz2mr7SZiAMfQyuvBjM2Zq9cFbNnXkQwErTyUiOpAsDfGhJkLzXcV\n"
    "bNm0123456789abcdefQwErTyUiOpAsDfGhJkLzXcVbNm0123456789abcdefQwErTyUiO\n"
    "-----END RSA PRIVATE KEY-----"
)


def _b64(text: str) -> str:
    encoded = base64.b64encode(text.encode()).decode()
    assert "/" not in encoded and "+" not in encoded, encoded
    return encoded


BASE64_ANTHROPIC = _b64(ANTHROPIC)

#: name -> (the text, what must not leak, the kind in `[REDACTED:<kind>]`)
KINDS: dict[str, tuple[str, str, str]] = {
    "anthropic-api": (ANTHROPIC, ANTHROPIC[13:60], "anthropic_key"),
    "anthropic-oauth": ("sk-ant-oat01-Zx9QwErTyUiOp_AsDfGhJkL-0123456789abcdef", "Zx9QwErTyUiOp_AsDfGhJkL", "oauth_token"),
    "openai-project": ("sk-proj-Ab12Cd34Ef56Gh78Ij90Kl12Mn34Op56Qr78St90", "Ab12Cd34Ef56Gh78Ij90", "api_key"),
    "openai-legacy": ("sk-Zx9Qw8Er7Ty6Ui5Op4AsT3BlbkFJDf3Gh2Jk1Lz0Xc9Vb8Nm7", "Zx9Qw8Er7Ty6Ui5Op4As", "api_key"),
    "github-pat": ("ghp_A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8", "A1b2C3d4E5f6G7h8I9j0", "github_token"),
    "github-oauth": ("gho_Z9y8X7w6V5u4T3s2R1q0P9o8N7m6L5k4J3i2", "Z9y8X7w6V5u4T3s2R1q0", "github_token"),
    "github-fine-grained": ("github_pat_11ABCDEFG0123456789_" + "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789",
                            "11ABCDEFG0123456789_abcdefgh", "github_token"),
    "gitlab": ("glpat-Xy9Zq8Wv7Ut6Sr5Qp4On", "Xy9Zq8Wv7Ut6Sr5Qp4On", "gitlab_token"),
    "aws-key-id": ("AKIAZ7QW4ERTY5UIOPAS", "Z7QW4ERTY5UIOPAS", "aws_access_key"),
    "aws-secret": ("aws_secret_access_key = wJalrXUtnFEMIzK7MDENGzbPxRfiCYzEXAMPLEKEY", "wJalrXUtnFEMIzK7MDENG", "aws_secret_key"),
    "slack": ("xoxb-1234567890123-1234567890123-AbCdEfGhIjKlMnOpQrStUvWx", "AbCdEfGhIjKlMnOpQrStUvWx", "slack_token"),
    "google": ("AIzaSyD9tSrke72PouQMnMXa7eZSW0jkFMBWY_x", "SyD9tSrke72PouQMnMXa7eZSW0jk", "google_api_key"),
    "jwt": ("eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U",
            "dozjgNryP4J3jVmNHl0w5N", "jwt"),
    "pem-rsa": (RSA, "MIIEpAIBAAKCAQEA3Tz2mr7SZiAMfQyuv", "private_key"),
    "pem-openssh": (OPENSSH, "QyNTUxOQAAACDzGd9Xq3pQwErTy", "private_key"),
    "url-password": ("postgres://app:Vu7pQ2xLm9Kd@db.internal:5432", "Vu7pQ2xLm9Kd", "url_password"),
    "env-line": ("DB_PASSWORD=Tr0ub4dor3xyzQ", "Tr0ub4dor3xyzQ", "password"),
    "env-export": ("export SERVICE_API_KEY=q8Zr2mX7nB4vC6xZ1aS3", "q8Zr2mX7nB4vC6xZ1aS3", "api_key"),
    "stripe": ("sk_live_4eC39HqLyjWDarjtT1zdp7dc", "4eC39HqLyjWDarjtT1zdp7dc", "stripe_key"),
    "npm": ("npm_a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8", "a1B2c3D4e5F6g7H8i9J0k1L2", "npm_token"),
    "huggingface": ("hf_AbCdEfGhIjKlMnOpQrStUvWxYzAbCdEfGh", "AbCdEfGhIjKlMnOpQrStUvWx", "huggingface_token"),
    "bearer": ("Authorization: Bearer 7f3kQ9zL2mXw8Rt5Yp1Vn6Bc4Hd0Jg", "7f3kQ9zL2mXw8Rt5Yp1Vn6", "bearer"),
    "basic": ("Authorization: Basic YWRtaW46aHVudGVyMmh1bnRlcjI=", "YWRtaW46aHVudGVyMmh1bnRlcjI", "basic_auth"),
    "base64-anthropic": (BASE64_ANTHROPIC, BASE64_ANTHROPIC[:40], "anthropic_key"),
    "json-secret-field": ('{"client_secret": "Lm4Nq7Rs2Tu9Vw3Xy6Za"}', "Lm4Nq7Rs2Tu9Vw3Xy6Za", "secret"),
    "curl-user": ("curl -u deploy:Pz8Kq3Wm5Rx -X POST https://api.example.com", "Pz8Kq3Wm5Rx", "password"),
}  # fmt: skip
assert len(KINDS) == 26
