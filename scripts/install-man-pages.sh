#!/usr/bin/env bash
# Generates bookpipe's man pages from its commands and installs them in PREFIX/share/man/man1.
#
#   scripts/install-man-pages.sh [PREFIX]      PREFIX: default ~/.local (use /usr/local with sudo)
#
# The pages come from swift-argument-parser's generate-manual plugin (one page per command:
# bookpipe.1, bookpipe.import.1, bookpipe.review.list.1, ...), so they always match the built
# commands. It builds the package in debug mode (an existing debug build is reused; set
# CONFIGURATION=release to build release instead) and runs offline. Then: man bookpipe.import
# (with PREFIX/share/man in MANPATH, which ~/.local/share/man is on most systems).
set -euo pipefail
prefix="${1:-$HOME/.local}"
configuration="${CONFIGURATION:-debug}"
cd "$(dirname "$0")/.."
swift package plugin generate-manual --configuration "$configuration" --multi-page >&2
pages=.build/plugins/GenerateManual/outputs/bookpipe
target="$prefix/share/man/man1"
mkdir -p "$target"
count=0
for page in "$pages"/*.1; do
    # The generated 'help' command is ArgumentParser's, not ours: `bookpipe help X` is `bookpipe X --help`.
    [ "$(basename "$page")" = bookpipe.help.1 ] && continue
    install -m 0644 "$page" "$target/"
    count=$((count + 1))
done
echo "wrote $count man pages to $target (try: man bookpipe, man bookpipe.import)"
