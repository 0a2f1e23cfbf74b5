"""Credentials and look-alikes for `test_secrets.py`. Every credential is a documented example
or fixture format (AWS's and jwt.io's own examples, detect-secrets' test fixtures, the vendors'
documented shapes with made-up characters): none is, or was, a live secret."""

from __future__ import annotations

PEM = """-----BEGIN RSA PRIVATE KEY-----
MIIBOgIBAAJBAKj34GkxFhD90vcNLYLInFEX6Ppy1tPf9Cnzj4p4WGeKLs1Pt8Qu
KUpRKfFLfRYC9AIKjbJTWit+CqvjWYzvQwECAwEAAQJAIJLixBy2qpFoS4DSmoEm
-----END RSA PRIVATE KEY-----"""

# (name, the kind `core.secrets` reports, the credential as it is pasted)
CREDENTIALS: list[tuple[str, str, str]] = [
    ("aws-access-key-doc-example", "AWS Access Key", "AKIAIOSFODNN7EXAMPLE"),
    ("aws-secret-key", "AWS Access Key", 'aws_secret_access_key = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"'),
    ("github", "GitHub Token", "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"),
    ("gitlab", "GitLab Token", "glpat-Xq3vR8mK2pL9wN4tY7zB"),
    ("slack", "Slack Token", "xoxb-34532454-e039d02840a0b9379c"),
    ("stripe", "Stripe Access Key", "sk_live_ReTllpYQYfIZu2Jnf2lAPFjD"),
    ("private-key", "Private Key", PEM),
    (
        "jwt",
        "JSON Web Token",
        "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkpvaG4gRG9lIiwiaWF0IjoxNTE2MjM5MDIyfQ.SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c",
    ),
    ("postgres-url", "Basic Auth Credentials", "postgres://app:Zr8qL2mXw@db.internal:5432/prod"),
    ("basic-auth-url", "Basic Auth Credentials", "https://deploy:Tr0ub4dor3x@ci.internal/hooks"),
    ("anthropic", "Anthropic API Key", "sk-ant-api03-Qx7Lm2Vr9Kp4Wt8Zn3Hs6Jd1Fb5Gc0Xy_Rq2Nt7Mv4Lk9-a1b2"),
    ("openai-legacy", "OpenAI Token", "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"),
    ("openai-project", "OpenAI Token", "sk-proj-Rt5Yu8Io2Pa4Sd7Fg1Hj6Kl9Zx3Cv0Bn"),
    ("twilio", "Twilio API Key", "SKf3a1c9e0b2d4f6a8c0e2b4d6f8a0c2e4"),
    ("sendgrid", "SendGrid API Key", "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"),
    ("npm", "NPM tokens", "//registry.npmjs.org/:_authToken=npm_Wq4Rt7Yu1Io3Pa6Sd9Fg2Hj5Kl8Zx0Cv3Bn"),
    (
        "azure-storage",
        "Azure Storage Account access key",
        "AccountKey=lJzRc1YdHaAA2KCNJJ1tkYwF/+mKK6Ygw0NGe170Xu592euJv2wYUtBlV8z+qnlcNQSnIYVTkLWntUO1F8j8rQ==",
    ),
    ("discord", "Discord Bot Token", "MTk4NjIyNDgzNDcxOTI1MjQ4.Cl2FMQ.ZnCjm1XVW7vRze4b7Cq4se7kKWs"),
    ("telegram", "Telegram Bot Token", "110201543:AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsawq"),
    ("mailchimp", "Mailchimp Access Key", "343ea45721923ed956e2b38c31db76aa-us30"),
    ("square", "Square OAuth Secret", "sq0csp-Ab1Cd2Ef3Gh4Ij5Kl6Mn7Op8Qr9St0Uv1Wx2Yz3Ab4Cd"),
    ("google", "Google API Key", "AIzaSyDq3Rt5Yu8Io2Pa4Sd7Fg1Hj6Kl9Zx3Cv0B"),
    ("password-keyword", "Secret Keyword", 'db_password = "Hunter2Longer9"'),
]

# (name, text): genuinely not credentials; each must pass the scan and be promoted as usual
LOOK_ALIKES: list[tuple[str, str]] = [
    ("uuid", "request id 123e4567-e89b-12d3-a456-426614174000"),
    ("git-sha1", "fixed in commit 9fceb02d0ae598e95dc970b74767f19372d61af8"),
    ("git-short", "see 9fceb02 and a1b2c3d"),
    ("sha256", "sha256: e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"),
    ("docker-digest", "image@sha256:2d6f1b1e2f3c4a5b6c7d8e9f0a1b2c3d4e5f6a7b8c9d0e1f2a3b4c5d6e7f8a9b"),
    (
        "base64-image",
        "![dot](data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==)",
    ),
    ("hex-colours", "colours #ff8800, #1e90ff and #abcdef"),
    ("semver", "upgrade from 1.4.2 to 2.0.0-rc.1+build.5"),
    ("timestamp", "at 2026-03-14T09:26:53.589793Z"),
    ("placeholder-url", "connect with postgres://user:password@localhost:5432/mydb"),
    ("templated-env", 'export DB_PASSWORD="${DB_PASSWORD}"'),
    ("dollar-ref", "OPENAI_API_KEY=$OPENAI_API_KEY python run.py"),
    ("keyword-prose", "the password lives in 1Password under `prod db`; rotate the api_key monthly"),
    ("placeholder-keyword", 'export GEMINI_API_KEY="tu-key"'),
    ("ssh-public-key", "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIOMqqnkVzrm0SdG6UOoqKLsabgH5C9okWi0dh2l9GKJl me@host"),
    ("pgp-public-key", "-----BEGIN PGP PUBLIC KEY BLOCK-----"),
    ("sklearn", "use sk-learn (scikit-learn) for the baseline model"),
    ("no-credentials-url", "postgres://db.internal:5432/prod and https://example.org/a?id=42"),
    ("ip-address", "the host is 203.0.113.7 on port 8443"),
    ("obsidian-ids", "see [[note#^a1b2c3]] and the block ^9f8e7d"),
    ("template-password", 'password: "<your-password>"'),
]
