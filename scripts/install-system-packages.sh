#!/usr/bin/env bash
# Installs the C libraries bookpipe links and chromium (the report's browser test) (Debian package names), only
# when one is missing.
set -euo pipefail
packages=(libcsv-dev libcurl4-openssl-dev libturbojpeg0-dev libjpeg62-turbo-dev libsqlite3-dev libjemalloc-dev pkg-config chromium)
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
