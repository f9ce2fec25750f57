#!/usr/bin/env bash
# Secrets for the room's compose stack, into deploy/room/secrets (never commit them):
#   make-secrets.sh BROKER_NAME WEB_NAME    a CA, the broker's and the review UI's certificates,
#                                           random passwords for PostgreSQL, the room's MQTT
#                                           user and the web sessions
#   make-secrets.sh --table SITE/TABLE      add a table box's broker login; prints its password
#                                           once (give it to the box as mqtt.password_file)
# Needs openssl and mosquitto_passwd (or Docker, to borrow the broker image's).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
out="${PAIGOW_SECRETS:-$here/secrets}"
umask 077

passwd_add() {  # user password
  if command -v mosquitto_passwd >/dev/null; then
    mosquitto_passwd -b "$out/passwd" "$1" "$2"
  else
    docker run --rm -v "$out:/s" eclipse-mosquitto:2.0 mosquitto_passwd -b /s/passwd "$1" "$2"
  fi
}

if [[ "${1:-}" == "--table" ]]; then
  user="${2:?give the table as SITE/TABLE}"
  if [[ ! "$user" =~ ^[A-Za-z0-9][A-Za-z0-9_.:-]{0,63}/[A-Za-z0-9][A-Za-z0-9_.:-]{0,63}$ ]]; then
    echo "make-secrets: the table login is SITE/TABLE (letters, digits, _.:-), got '$user'" >&2
    exit 2
  fi
  [[ -f "$out/passwd" ]] || { echo "make-secrets: run it with BROKER_NAME WEB_NAME first" >&2; exit 2; }
  password="$(openssl rand -hex 24)"
  passwd_add "$user" "$password"
  echo "$password"
  exit 0
fi

broker="${1:?give the host name the tables reach the broker by}"
web="${2:?give the host name of the review UI}"
if [[ -e "$out/certs/ca.key" ]]; then
  echo "make-secrets: $out already holds a CA; move it away to start again" >&2
  exit 2
fi
mkdir -p "$out/certs" && chmod 755 "$out/certs"  # read by the containers' own users
cd "$out/certs"
openssl req -x509 -newkey rsa:3072 -nodes -days 825 -subj /CN=paigow-room-ca \
  -keyout ca.key -out ca.crt 2>/dev/null
issue() {  # name subjectAltName
  openssl req -newkey rsa:3072 -nodes -subj "/CN=$1" -keyout "$1.key" -out "$1.csr" 2>/dev/null
  printf 'subjectAltName=%s\n' "$2" > "$1.ext"
  openssl x509 -req -in "$1.csr" -CA ca.crt -CAkey ca.key -CAcreateserial -days 825 \
    -extfile "$1.ext" -out "$1.crt" 2>/dev/null
  rm "$1.csr" "$1.ext"
}
issue server "DNS:$broker,DNS:mosquitto,DNS:localhost,IP:127.0.0.1"
issue web "DNS:$web,DNS:localhost,IP:127.0.0.1"
chmod 644 ./*.crt ./server.key ./web.key  # read by the broker's and the room's own users
cd "$out"
openssl rand -hex 24 > postgres_password
openssl rand -hex 24 > mqtt_room_password
openssl rand -hex 24 > mqtt_pit_password
openssl rand -hex 32 > web_secret
printf 'postgresql+psycopg://paigow:%s@postgres/paigow\n' "$(cat postgres_password)" > store_url
: > passwd
passwd_add room "$(cat mqtt_room_password)"
passwd_add pit "$(cat mqtt_pit_password)"
chmod 644 passwd postgres_password store_url mqtt_room_password web_secret
chmod 600 mqtt_pit_password  # for the pit's console, not for any service here
echo "secrets written to $out (CA: certs/ca.crt, give it to every table box)"
