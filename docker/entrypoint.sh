#!/bin/sh
# Runs `muninn <command>`. On the very first start of a server (no owner token in the data folder yet) it
# prints the OWNER's API token once, so `docker compose logs api` shows how to sign in.
set -eu
data="${MUNINN_DATA_DIR:-/data}"
token_file="$data/owner.token"
first_start=0
[ -f "$token_file" ] || first_start=1
node /app/bin/muninn.js "$@" &
pid=$!
trap 'kill -TERM "$pid" 2>/dev/null' TERM INT
if [ "$first_start" = 1 ] && [ "${1:-}" = "serve" ]; then
  (
    for _ in $(seq 1 600); do
      if [ -s "$token_file" ]; then
        echo "==================================================================="
        echo "Owner token (first start; also in $token_file):"
        echo "  $(cat "$token_file")"
        echo "Use it as: Authorization: Bearer <token>   (admin console: /admin)"
        echo "==================================================================="
        exit 0
      fi
      kill -0 "$pid" 2>/dev/null || exit 0
      sleep 1
    done
  ) &
fi
status=0
wait "$pid" || status=$?
# A signal interrupts the first wait; wait again for the server's clean shutdown.
if kill -0 "$pid" 2>/dev/null; then wait "$pid" || status=$?; fi
exit "$status"
