#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# bootstrap.sh - from a fresh checkout on Debian 12: install the build and
# test dependencies (apt-get, as root or through sudo), build pdfstamp in
# build/, run `pdfstamp info` on an encrypted sample and stamp a copy of it.
# The dependencies include what .ci/run's Debian package step uses (git,
# debhelper, lintian), and so cover debian/control's Build-Depends.
#
# Usage: ./bootstrap.sh              dependencies, build, demo
#        ./bootstrap.sh --deps-only  only install the dependencies (.ci/run)
#        ./bootstrap.sh --no-deps    build and demo with what is installed
# Set PDFSTAMP_NO_APT=1 to never call apt-get (same as --no-deps).
set -euo pipefail
cd "$(dirname "$0")"

DEPS=(
	build-essential autoconf automake libtool pkg-config
	libmbedtls-dev zlib1g-dev libidn-dev check
	qpdf mupdf-tools poppler-utils python3 mandoc
	libnss3-tools nodejs libjs-pdf clang time strace
	git debhelper lintian
	python3-pikepdf python3-cryptography default-jdk-headless libpdfbox2-java libitext5-java libbcprov-java
	libbcpkix-java libbcutil-java
	libharfbuzz-dev libfribidi-dev libfontconfig-dev libspng-dev libqrencode-dev libcurl4-openssl-dev zbar-tools
	fonts-noto-core fonts-noto-cjk fonts-dejavu-core openssl libjpeg-turbo-progs
	parallel jq
)

mode=all
case "${1:-}" in
"") ;;
--deps-only) mode=deps ;;
--no-deps) mode=build ;;
-h | --help)
	sed -n '2,12s/^# \{0,1\}//p' "$0"
	exit 0
	;;
*)
	echo "bootstrap.sh: unknown option '$1' (try --help)" >&2
	exit 2
	;;
esac

install_deps() {
	local -a missing=()
	local p sudo=

	if [ "${PDFSTAMP_NO_APT:-0}" = 1 ]; then
		return 0
	fi
	if ! command -v apt-get >/dev/null 2>&1; then
		echo "bootstrap.sh: no apt-get here; install the equivalents of: ${DEPS[*]}" >&2
		return 0
	fi
	for p in "${DEPS[@]}"; do
		if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed'; then
			missing+=("$p")
		fi
	done
	if [ ${#missing[@]} -eq 0 ]; then
		echo "bootstrap.sh: all dependencies are installed"
		return 0
	fi
	if [ "$(id -u)" != 0 ]; then
		sudo=sudo
	fi
	echo "bootstrap.sh: installing ${missing[*]}"
	export DEBIAN_FRONTEND=noninteractive
	$sudo apt-get update -q
	$sudo apt-get install -y -q --no-install-recommends "${missing[@]}"
}

build() {
	if [ ! -x configure ] || [ configure.ac -nt configure ] || [ Makefile.am -nt configure ]; then
		autoreconf -fi
	fi
	if [ -f config.status ]; then
		# Someone configured in the source tree; a VPATH build would be
		# refused, so build there.
		make -j"$(nproc)"
		BIN=src/pdfstamp
	else
		mkdir -p build
		if [ ! -f build/Makefile ]; then
			(cd build && ../configure -q)
		fi
		make -C build -j"$(nproc)"
		BIN=build/src/pdfstamp
	fi
}

if [ "$mode" != build ]; then
	install_deps
fi
if [ "$mode" = deps ]; then
	exit 0
fi
build
echo
echo "+ $BIN info --password-file samples/user.pw samples/r6-table.pdf"
"$BIN" info --password-file samples/user.pw samples/r6-table.pdf

# Stamp page 1 into a new file; the sample itself is not changed.
demo=$(mktemp -d "${TMPDIR:-/tmp}/pdfstamp-demo.XXXXXX")
echo
echo "+ $BIN stamp -v -o $demo/stamped.pdf --password-file samples/user.pw samples/r6-table.pdf"
"$BIN" stamp -v -o "$demo/stamped.pdf" --password-file samples/user.pw samples/r6-table.pdf
echo "The stamped copy is $demo/stamped.pdf (user password: sample-user)."
