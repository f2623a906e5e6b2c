#!/usr/bin/env bash
# Runs before `npm test`: the Debian packages some tests drive for real (Chromium for the API reference page,
# systemd-analyze and shellcheck for the installer, pdftotext and pdftoppm for report PDFs, LibreOffice for the XLSX exports, libfaketime for clock steps, PostgreSQL for the fleet). Installs what is missing when run as root; otherwise says what to run.
set -euo pipefail
missing=()
command -v chromium >/dev/null 2>&1 || missing+=(chromium)
command -v systemd-analyze >/dev/null 2>&1 || missing+=(systemd)
command -v shellcheck >/dev/null 2>&1 || missing+=(shellcheck)
command -v pdftotext >/dev/null 2>&1 || missing+=(poppler-utils)
# LibreOffice Calc opens the XLSX exports and converts them back to CSV with German and English settings.
command -v soffice >/dev/null 2>&1 || missing+=(libreoffice-calc-nogui)
# libfaketime steps and speeds the service's clock (clock-step and power-cut tests).
compgen -G '/usr/lib/*/faketime/libfaketime.so.1' >/dev/null || compgen -G '/usr/lib/faketime/libfaketime.so.1' >/dev/null || missing+=(faketime)
# PostgreSQL (>= 15) for the fleet service's tests and benchmark: each test file starts a private cluster (test/helpers/postgres.ts).
compgen -G '/usr/lib/postgresql/*/bin/initdb' >/dev/null || missing+=(postgresql)
# jq runs docs/operating.md's log filters on real log lines.
command -v jq >/dev/null 2>&1 || missing+=(jq)
((${#missing[@]})) || exit 0
if [[ $(id -u) -ne 0 ]]; then
  echo "tests need these Debian packages: sudo apt-get install ${missing[*]}" >&2
  exit 1
fi
echo "installing Debian packages for the tests: ${missing[*]}"
apt-get update -qq
DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
