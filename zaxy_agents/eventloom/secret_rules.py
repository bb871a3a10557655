"""The secret shapes redaction looks for in text, each with the cheap markers that gate it.

The shapes follow public secret-scanner rule sets (gitleaks, detect-secrets, trufflehog): vendor tokens with a
recognisable prefix, private keys, credentials inside URLs, ``Authorization`` headers, and ``KEY=value``
assignments whose key names a credential (``.env`` files, shell exports, config files, command output). Each rule
names the part of the match to replace (the whole match, or its ``secret`` group, so ``DB_PASSWORD=`` and
``postgres://user:`` stay readable) and the substrings one of which must occur for the rule to run at all: most
text contains none of them, so most text costs a few ``in`` checks. Stdlib only (the hook fast path).
"""

from __future__ import annotations

import re

TYPE_CHECKING = False  # avoids importing typing on the hook fast path
if TYPE_CHECKING:
    from collections.abc import Callable

    Pick = Callable[[re.Match[str]], str | None]

# (kind, markers, regex, flags). Patterns start with their literal where they can: the regex engine then scans for
# it about as fast as ``in``, so the pattern is its own gate (markers ``()``). Patterns that cannot (a lookbehind,
# a character class or a case-insensitive word first) run only when one of their markers (case-sensitive
# substrings every match contains) occurs. A rule whose kind is in WORD_START must also begin at a word boundary,
# checked after the match: a leading ``\b`` would make the engine try every position.
RULE_SOURCES: tuple[tuple[str, tuple[str, ...], str, int], ...] = (
    ("private", ("<private", "<PRIVATE", "<Private"), r"<private>.*?(?:</private>|\Z)", re.IGNORECASE | re.DOTALL),
    (
        "private_key",
        ("-----BEGIN",),
        r"-----BEGIN[ A-Z0-9]*PRIVATE KEY(?: BLOCK)?-----.*?(?:-----END[ A-Z0-9]*PRIVATE KEY(?: BLOCK)?-----|\Z)",
        re.DOTALL,
    ),
    ("putty_key", (), r"PuTTY-User-Key-File-\d:.*?Private-MAC: *[0-9a-f]+", re.DOTALL),
    ("url_credentials", (), r"://[^\s:/?#@'\"<>]*:(?P<secret>[^\s/?#@'\"<>]+)@", 0),
    ("jwt", (), r"eyJ[A-Za-z0-9_-]{5,}\.eyJ[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]{5,}", 0),
    (
        "openai_key",
        (),
        r"sk-(?:(?:proj|ant|svcacct|admin)-[A-Za-z0-9_-]{20,}|(?=[A-Za-z_-]*[0-9])[A-Za-z0-9_-]{20,})",
        0,
    ),
    (
        "aws_access_key_id",
        ("A3T", "AKIA", "ASIA", "ABIA", "ACCA", "AGPA", "AIDA", "AIPA", "ANPA", "ANVA", "AROA", "APKA"),
        r"A(?:3T[A-Z0-9]|KIA|SIA|BIA|CCA|GPA|IDA|IPA|NPA|NVA|ROA|PKA)[A-Z0-9]{16}(?![A-Za-z0-9])",
        0,
    ),
    (
        "github_token",
        ("ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_"),
        r"gh[pousr]_[A-Za-z0-9]{36,}",
        0,
    ),
    (
        "gitlab_token",
        ("glpat-", "gldt-", "glptt-", "glrt-", "glsoat-", "glft-", "glimt-", "glagent-", "GR1348941"),
        r"gl(?:pat|dt|ptt|rt|soat|ft|imt|agent)-[A-Za-z0-9_-]{20,}",
        0,
    ),
    ("github_fine_grained_token", (), r"github_pat_[A-Za-z0-9_]{22,}", 0),
    ("gitlab_runner_token", (), r"GR1348941[A-Za-z0-9_-]{20,}", 0),
    ("slack_token", (), r"xox[abposre]-(?:[0-9]+-)*[A-Za-z0-9-]{10,}", 0),
    (
        "slack_webhook",
        ("hooks.slack.com",),
        r"hooks\.slack\.com/(?:services|workflows|triggers)/[A-Za-z0-9/_+-]{20,}",
        0,
    ),
    ("discord_webhook", (), r"discord(?:app)?\.com/api/webhooks/\d+/[A-Za-z0-9_-]{40,}", 0),
    ("google_api_key", (), r"AIza[0-9A-Za-z_-]{35}(?![0-9A-Za-z_-])", 0),
    ("google_oauth", (), r"GOCSPX-[A-Za-z0-9_-]{28}", 0),
    ("google_oauth_token", (), r"ya29\.[0-9A-Za-z_-]{20,}", 0),
    (
        "stripe_key",
        ("k_live_", "k_test_", "k_prod_", "whsec_"),
        r"(?:[sr]k_(?:live|test|prod)_[0-9A-Za-z]{10,}|whsec_[A-Za-z0-9]{24,})",
        0,
    ),
    ("twilio_key", (), r"SK[0-9a-f]{32}(?![0-9A-Za-z])", 0),
    ("sendgrid_key", (), r"SG\.[A-Za-z0-9_-]{22}\.[A-Za-z0-9_-]{43}(?![0-9A-Za-z])", 0),
    ("mailgun_key", (), r"key-[0-9a-f]{32}(?![0-9A-Za-z])", 0),
    ("mailchimp_key", ("-us",), r"(?<![0-9A-Za-z])[0-9a-f]{32}-us[0-9]{1,2}(?![0-9A-Za-z])", 0),
    ("npm_token", (), r"npm_[A-Za-z0-9]{36}(?![0-9A-Za-z])", 0),
    ("pypi_token", (), r"pypi-AgEIcHlwaS5vcmc[A-Za-z0-9_-]{50,}", 0),
    ("docker_token", (), r"dckr_pat_[A-Za-z0-9_-]{27,}", 0),
    ("digitalocean_token", (), r"do[opr]_v1_[a-f0-9]{64}(?![0-9A-Za-z])", 0),
    (
        "shopify_token",
        ("shpat_", "shpca_", "shppa_", "shpss_"),
        r"shp(?:at|ca|pa|ss)_[a-fA-F0-9]{32}(?![0-9A-Za-z])",
        0,
    ),
    ("atlassian_token", (), r"ATATT3[A-Za-z0-9_=-]{50,}", 0),
    ("vault_token", (), r"hv[sb]\.[A-Za-z0-9_-]{24,}", 0),
    ("terraform_token", (".atlasv1.",), r"(?<![0-9A-Za-z])[A-Za-z0-9]{14}\.atlasv1\.[A-Za-z0-9_=-]{60,}", 0),
    ("linear_key", (), r"lin_api_[A-Za-z0-9]{40}(?![0-9A-Za-z])", 0),
    ("notion_token", (), r"secret_[A-Za-z0-9]{43}(?![0-9A-Za-z])", 0),
    ("notion_token_v2", (), r"ntn_[A-Za-z0-9]{40,}(?![0-9A-Za-z])", 0),
    ("huggingface_token", (), r"hf_[A-Za-z0-9]{34,}(?![0-9A-Za-z])", 0),
    ("databricks_token", (), r"dapi[a-f0-9]{32}(?:-\d)?(?![0-9A-Za-z])", 0),
    ("newrelic_key", (), r"NR(?:AK-[A-Z0-9]{27}|JS-[a-f0-9]{19})(?![0-9A-Za-z])", 0),
    ("postman_key", (), r"PMAK-[a-f0-9]{24}-[a-f0-9]{34}(?![0-9A-Za-z])", 0),
    ("telegram_token", (":AA",), r"(?<![0-9])\d{8,10}:AA[0-9A-Za-z_-]{33}(?![0-9A-Za-z_-])", 0),
    ("square_token", (), r"sq0(?:atp|csp)-[0-9A-Za-z_-]{22,43}(?![0-9A-Za-z_-])", 0),
    (
        "braintree_token",
        ("access_token$",),
        r"access_token\$production\$[a-z0-9]{16}\$[a-f0-9]{32}(?![0-9A-Za-z])",
        0,
    ),
    ("facebook_token", (), r"EAA[A-Za-z0-9]{60,}", 0),
    ("age_key", (), r"AGE-SECRET-KEY-1[QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L]{58}", 0),
    (
        "grafana_token",
        ("glc_", "glsa_"),
        r"gl(?:c_[A-Za-z0-9+/]{32,}={0,2}|sa_[A-Za-z0-9]{32}_[A-Fa-f0-9]{8})",
        0,
    ),
    ("flyio_token", (), r"fo1_[A-Za-z0-9_-]{43}(?![0-9A-Za-z_-])", 0),
    ("planetscale_token", (), r"pscale_(?:tkn|pw|oauth)_[A-Za-z0-9_.-]{32,64}", 0),
    ("doppler_token", (), r"dp\.(?:pt|st|sa|ct|scim|audit)\.[A-Za-z0-9]{40,44}(?![0-9A-Za-z])", 0),
    ("pulumi_token", (), r"pul-[a-f0-9]{40}(?![0-9A-Za-z])", 0),
    ("rubygems_key", (), r"rubygems_[a-f0-9]{48}(?![0-9A-Za-z])", 0),
    ("dynatrace_token", (), r"dt0c01\.[A-Z0-9]{24}\.[A-Z0-9]{64}(?![0-9A-Za-z])", 0),
    ("easypost_key", (), r"EZ[AT]K[A-Za-z0-9]{54}(?![0-9A-Za-z])", 0),
    ("alibaba_key", (), r"LTAI[A-Za-z0-9]{20}(?![0-9A-Za-z])", 0),
    ("tencent_key", (), r"AKID[A-Za-z0-9]{32}(?![0-9A-Za-z])", 0),
    ("azure_client_secret", ("Q~",), r"(?<![A-Za-z0-9_~.])[A-Za-z0-9_~.]{3}\dQ~[A-Za-z0-9_~.-]{31,34}", 0),
    (
        "connection_string",
        ("ccountKey=", "ccessKey=", "assword=", "ASSWORD=", "wd=", "WD="),
        r"(?i:accountkey|sharedaccesskey|password|pwd)=(?P<secret>[^;\s'\"]{4,})(?=;)",
        0,
    ),
    (
        "basic_auth",
        ("basic", "Basic", "BASIC"),
        r"(?i:basic)[ \t]+(?P<secret>(?=[A-Za-z0-9+/]*[0-9+/=])[A-Za-z0-9+/]{12,}={0,2})",
        0,
    ),
    (
        "bearer",
        ("bearer", "Bearer", "BEARER"),
        r"(?i:bearer)[ \t]+(?P<secret>(?=[A-Za-z._~+/=-]*[0-9])[A-Za-z0-9._~+/=-]{16,})",
        0,
    ),
    ("netrc", ("assword", "ASSWORD"), r"(?i:login|machine)[ \t]+\S+[ \t]+(?i:password)[ \t]+(?P<secret>\S+)", 0),
    ("curl_user", ("-u ", "--user"), r"(?:(?<=\s)-u|--user)[ =]['\"]?[^:\s'\"]+:(?P<secret>[^\s'\"]+)", 0),
)
# Rules for tokens that start a word: a match inside a longer word (``xsk-...``, ``tasks_live_...``) is not one.
WORD_START = frozenset(
    kind for kind, *_ in RULE_SOURCES if kind not in ("private", "private_key", "putty_key", "url_credentials")
)

# KEY=value, key: value, "key": "value", --key=value. The regex only finds assignments; whether the key names a
# credential and the value is one (not code, a placeholder or a reference) is decided by assignment_secret().
ASSIGNMENT_SOURCE = (
    r"(?i:(?P<word>password|passwd|passphrase|secret|token|api[_.-]?key|apikey|access[_.-]?key|private[_.-]?key|"
    r"secret[_.-]?key|credentials?|signing[_.-]?key|encryption[_.-]?key|master[_.-]?key|license[_.-]?key|"
    r"[_.-](?:pass|pwd|auth|auth[_.-]?key|key)))(?![A-Za-z0-9])"
    r"(?P<close>[\"']?)[ \t]*(?P<op>:=|=>|=|:)[ \t]*"
    r"(?P<value>\"[^\"\n]*\"|'[^'\n]*'|[^\s\"'`,;&(){}\[\]<>]+)(?P<call>\(?)(?P<after>[ \t]*=(?!=))?"
)
_KEY_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_.-")
# Every key the assignment rule accepts ends with one of these (in one of three cases: env, snake, camel).
_ASSIGNMENT_WORDS = ("password", "passwd", "passphrase", "secret", "token", "key", "credential")
_ASSIGNMENT_WORDS += ("_pass", "_pwd", "_auth", "-pass", "-pwd", "-auth", ".pass", ".pwd", ".auth")
ASSIGNMENT_MARKERS = tuple(sorted(set(_ASSIGNMENT_WORDS)))  # looked for in the lower-cased text (any case matches)
_STRONG_KEY = re.compile(
    r"(?:password|passwd|passphrase|secret|token|api[_.-]?key|apikey|access[_.-]?key|private[_.-]?key|"
    r"secret[_.-]?key|credentials?|signing[_.-]?key|encryption[_.-]?key|master[_.-]?key|license[_.-]?key|"
    r"[_.-](?:pass|pwd|auth|auth[_.-]?key))$",
    re.IGNORECASE,
)
_WEAK_KEY = re.compile(r"[_.-]key$", re.IGNORECASE)
_PLACEHOLDER = re.compile(
    r"^(?:[$%{<\[]|\*+$|x+$|\.\.\.$|(?:none|null|nil|true|false|undefined|empty|redacted|changeit|your[_-]?\w*|"
    r"example|dummy|placeholder|secret|password|token|string|str|int|bytes|optional|any)$)",
    re.IGNORECASE,
)
_DOTTED = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)+$")
_CONSTANT = re.compile(r"^[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+$")
_TOKEN_CHARS = re.compile(r"^[A-Za-z0-9+/=_.~-]+$")
_ONE_CASE_WORDS = re.compile(r"^(?:[a-z_.-]+|[A-Z_.-]+)$")


def is_placeholder(value: str) -> bool:
    """``$VAR``, ``${VAR}``, ``<token>``, ``***``, ``None``, ``your_api_key``...: not a credential."""
    return bool(_PLACEHOLDER.match(value)) or not value.strip(".-_*x ")


def credential_like(value: str, *, minimum: int = 6) -> bool:
    """Whether a bare string could be a credential rather than a word or a name: letters mixed with digits or
    symbols, or long and not a plain identifier."""
    if len(value) < minimum or is_placeholder(value):
        return False
    has_alpha = any(c.isalpha() for c in value)
    has_digit = any(c.isdigit() for c in value)
    has_symbol = any(not c.isalnum() and c not in "_-. \t" for c in value)
    if has_alpha and (has_digit or has_symbol):
        return True
    return len(value) >= 24 and not _ONE_CASE_WORDS.match(value) and " " not in value


def _generated(value: str) -> bool:
    """A machine-made value (a key of some service): 16+ token characters, letters and at least two digits, no
    path or URL."""
    if len(value) < 16 or not _TOKEN_CHARS.match(value) or ("/" in value and "." in value):
        return False
    return sum(c.isdigit() for c in value) >= 2 and sum(c.isalpha() for c in value) >= 2


def assignment_secret(match: re.Match[str]) -> str | None:
    """The value of a ``key=value`` match to redact, or ``None`` when the key names no credential or the value is
    code, a placeholder or a reference (``password=password``, ``token = settings.token``, ``TOKEN: str``)."""
    text, begin = match.string, match.start()
    while begin > 0 and text[begin - 1] in _KEY_CHARS:  # the whole key: the word ends it
        begin -= 1
    full = text[begin : match.end("word")]
    flag = full.startswith("-")
    key = full.lstrip("-")
    strong = _STRONG_KEY.search(key) is not None
    if not strong and _WEAK_KEY.search(key) is None:
        return None
    raw, op = match.group("value"), match.group("op")
    quoted = raw[:1] in "\"'" and len(raw) >= 2
    value = raw[1:-1] if quoted else raw
    if not value or match.group("call") or is_placeholder(value):
        return None
    if op == ":" and match.group("after"):
        return None  # TOKEN: Final = ...: an annotation, the value follows
    if value.lower().replace("-", "_") == key.lower().replace("-", "_").rsplit(".", 1)[-1]:
        return None  # password=password: a variable passed on
    if _CONSTANT.match(value) or (not quoted and _DOTTED.match(value)):
        return None  # token = settings.token, TOKEN = "OTHER_TOKEN": references and names
    if not strong:  # a generic *_KEY (sort_key, cache_key...): only a value that looks generated
        return value if _generated(value) else None
    env_style = key.upper() == key and any(c.isalpha() for c in key)
    if flag or (env_style and op in ("=", ":")):
        return value if len(value) >= 3 else None
    if quoted:
        return value if len(value) >= 4 else None
    return value if credential_like(value) else None


def compile_rules() -> tuple[tuple[str, tuple[str, ...], re.Pattern[str], Pick | None, bool, bool], ...]:
    """``(kind, markers, pattern, pick, word_start, fold)`` per rule (``fold``: the markers are looked for in the
    lower-cased text); the assignment rule last (vendor shapes name the secret better, and what they already
    replaced is a placeholder to it)."""
    rules: list[tuple[str, tuple[str, ...], re.Pattern[str], Pick | None, bool, bool]] = [
        (kind, markers, re.compile(source, flags), None, kind in WORD_START, False)
        for kind, markers, source, flags in RULE_SOURCES
    ]
    rules.append(("assignment", ASSIGNMENT_MARKERS, re.compile(ASSIGNMENT_SOURCE), assignment_secret, False, True))
    return tuple(rules)


def _leading_literals(pattern: re.Pattern[str]) -> tuple[str, ...]:
    """Literal strings one of which starts every match of ``pattern`` (its leading literal characters, a small
    leading character class expanded), or ``()`` when it starts with anything else (a lookaround, a wide class)."""
    from re import _constants as sre  # type: ignore[attr-defined]
    from re import _parser  # type: ignore[attr-defined]

    found = [""]
    for op, arg in _parser.parse(pattern.pattern, pattern.flags):
        if op is sre.LITERAL:
            found = [prefix + chr(arg) for prefix in found]
        elif op is sre.IN and all(kind is sre.LITERAL for kind, _ in arg) and len(found) * len(arg) <= 8:
            found = [prefix + chr(char) for prefix in found for _, char in arg]
        else:
            break
    return tuple(found) if all(found) else ()


def rule_needles(rule: tuple[str, tuple[str, ...], re.Pattern[str], Pick | None, bool, bool]) -> frozenset[str]:
    """The strings one of which occurs wherever ``rule`` fires: its markers, or its pattern's leading literals."""
    return frozenset(rule[1] or _leading_literals(rule[2]))


def gate_needles(
    rules: tuple[tuple[str, tuple[str, ...], re.Pattern[str], Pick | None, bool, bool], ...],
) -> tuple[tuple[str, ...], tuple[str, ...]] | None:
    """``(needles in the text, needles in the lower-cased text)``: a text in which none occurs fires no rule (a
    marker rule fires only on one of its markers; a pattern rule matches only where one of its leading literals
    starts). ``None`` when some pattern rule has no such literal (every text would have to run it)."""
    plain: set[str] = set()
    folded: set[str] = set()
    for _kind, markers, pattern, _pick, _word_start, fold in rules:
        if markers:
            (folded if fold else plain).update(markers)
            continue
        literals = _leading_literals(pattern) if not pattern.flags & re.IGNORECASE else ()
        if not literals:
            return None
        plain.update(literals)
    return tuple(sorted(plain)), tuple(sorted(folded))
