# Sourced by scripts/test: the Debian packages the tests need, installed when absent (one
# apt-get update, one install; as root, or through sudo). Nothing is skipped for lack of
# a tool: what a test needs, this provides.
#   openjdk-17-jre-headless, maven   the Kafka broker of the integration tests (scripts/kafka)
#   postgresql-15, postgresql-15-postgis-3
#                                    the throwaway PostgreSQL + PostGIS clusters of the store tests
#   chromium                         the web app's browser tests (Playwright, /usr/bin/chromium)
#   poppler-utils                    pdftoppm/pdftotext, read by the PDF tests
#   prometheus                       Prometheus and promtool: the alert rules, the live operations-room test
#   fonts-dejavu-core, libpango-1.0-0, libpangoft2-1.0-0
#                                    the fonts and text layout weasyprint sets the autos (PDF) with
_installed() { dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q "install ok installed"; }

_missing=()
command -v java >/dev/null || _missing+=(openjdk-17-jre-headless)
command -v mvn >/dev/null || _missing+=(maven)
for _package in postgresql-15 postgresql-15-postgis-3 chromium poppler-utils prometheus fonts-dejavu-core \
    libpango-1.0-0 libpangoft2-1.0-0; do
  _installed "$_package" || _missing+=("$_package")
done
if [ "${#_missing[@]}" -gt 0 ]; then
  echo "scripts/test: installing the Debian packages the tests need: ${_missing[*]}"
  _sudo=""
  [ "$(id -u)" -eq 0 ] || _sudo="sudo"
  $_sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $_sudo apt-get install -y -qq "${_missing[@]}" >/dev/null
fi
