#!/usr/bin/env bash
# Installs the C libraries bookpipe links (Debian package names), only those missing.
# With --tests, also what the test suites need beyond them: chromium (the report's browser test),
# postgresql (the PostgreSQL engine's throwaway test cluster), chromium-driver and Python's selenium
# (the `review serve` browser test, Tests/browser) and pytest (the Python suites), unless a pytest /
# selenium is there already.
set -euo pipefail
with_selenium=0
packages=(libcsv-dev libcurl4-openssl-dev libturbojpeg0-dev libjpeg62-turbo-dev libsqlite3-dev libjemalloc-dev libedit-dev libpq-dev pkg-config)
for argument in "$@"; do
    case "$argument" in
        --tests)
            packages+=(chromium chromium-driver postgresql)
            with_selenium=1
            python3 -m pytest --version >/dev/null 2>&1 || packages+=(python3-pytest) ;;
        *) echo "install-system-packages.sh: unknown option $argument (only --tests)" >&2; exit 2 ;;
    esac
done
missing=()
for package in "${packages[@]}"; do
    dpkg -s "$package" >/dev/null 2>&1 || missing+=("$package")
done
if ((${#missing[@]})); then
    echo "installing: ${missing[*]}"
    SUDO=""; [[ $(id -u) -ne 0 ]] && SUDO="sudo"
    $SUDO apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${missing[@]}" >/dev/null
fi
if ((with_selenium)) && ! python3 -c 'import selenium' >/dev/null 2>&1; then
    echo "installing: selenium (pip)"
    python3 -m pip install --quiet selenium 2>/dev/null || python3 -m pip install --quiet --break-system-packages selenium
fi
