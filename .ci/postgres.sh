# Source this file: it provides a local PostgreSQL server on loopback for the PostgreSQL contract tests and
# exports ZAXY_TEST_POSTGRES_DSN. Every step is idempotent. When no server can be had (no root, no apt, no
# cluster), it prints why and leaves the variable unset: the PostgreSQL tests then skip with that reason.
#
# Steps: keep a DSN the caller already exported; otherwise install the Debian `postgresql` package when the
# cluster tools are missing, create a cluster when none exists, start it, and create the `zaxy_ci` role and
# database (password authentication over 127.0.0.1, exactly as a deployment would connect).

zaxy_ci_postgres() {
    local role="zaxy_ci" database="zaxy_ci" password="zaxy_ci"
    if [ -n "${ZAXY_TEST_POSTGRES_DSN:-}" ]; then
        echo "postgres: using the caller's ZAXY_TEST_POSTGRES_DSN"
        return 0
    fi
    if ! command -v pg_lsclusters >/dev/null 2>&1; then
        if [ "$(id -u)" = "0" ] && command -v apt-get >/dev/null 2>&1; then
            echo "postgres: installing the postgresql package"
            apt-get update -qq >/dev/null 2>&1 || true
            DEBIAN_FRONTEND=noninteractive apt-get install -y -qq postgresql >/dev/null 2>&1 || true
        fi
    fi
    if ! command -v pg_lsclusters >/dev/null 2>&1; then
        echo "postgres: WARNING no PostgreSQL available (not root or no apt); PostgreSQL tests will skip"
        return 0
    fi
    if [ "$(id -u)" != "0" ]; then
        echo "postgres: WARNING not root, cannot start a cluster; export ZAXY_TEST_POSTGRES_DSN to run those tests"
        return 0
    fi
    local version name port status
    read -r version name port status _ < <(pg_lsclusters -h | head -n 1) || true
    if [ -z "${version:-}" ]; then
        version="$(ls /usr/lib/postgresql 2>/dev/null | sort -V | tail -n 1)" || true
        name="main"
        echo "postgres: creating cluster ${version}/${name}"
        if [ -z "${version}" ] || ! pg_createcluster "${version}" "${name}" >/dev/null; then
            echo "postgres: WARNING could not create a cluster; PostgreSQL tests will skip"
            return 0
        fi
        read -r version name port status _ < <(pg_lsclusters -h | head -n 1) || true
    fi
    if [ "${status}" != "online" ]; then
        pg_ctlcluster --skip-systemctl-redirect "${version}" "${name}" start || {
            echo "postgres: WARNING cluster ${version}/${name} did not start; PostgreSQL tests will skip"
            return 0
        }
    fi
    local psql=(runuser -u postgres -- psql --port "${port}" -v ON_ERROR_STOP=1 -qtA)
    for _ in $(seq 1 50); do
        "${psql[@]}" -c "SELECT 1" >/dev/null 2>&1 && break
        sleep 0.2
    done
    if [ "$("${psql[@]}" -c "SELECT 1 FROM pg_roles WHERE rolname = '${role}'" 2>/dev/null)" != "1" ]; then
        "${psql[@]}" -c "CREATE ROLE ${role} LOGIN PASSWORD '${password}'" >/dev/null || {
            echo "postgres: WARNING could not create role ${role}; PostgreSQL tests will skip"
            return 0
        }
    fi
    if [ "$("${psql[@]}" -c "SELECT 1 FROM pg_database WHERE datname = '${database}'" 2>/dev/null)" != "1" ]; then
        "${psql[@]}" -c "CREATE DATABASE ${database} OWNER ${role}" >/dev/null || {
            echo "postgres: WARNING could not create database ${database}; PostgreSQL tests will skip"
            return 0
        }
    fi
    export ZAXY_TEST_POSTGRES_DSN="postgresql://${role}:${password}@127.0.0.1:${port}/${database}"
    echo "postgres: PostgreSQL ${version} on 127.0.0.1:${port}, database ${database}"
}
