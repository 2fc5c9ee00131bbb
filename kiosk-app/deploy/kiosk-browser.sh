#!/bin/bash
# The kiosk's screen: waits until the kiosk server answers, then replaces itself with Chromium in kiosk
# mode on the kiosk page (run by portico-kiosk-browser.service under xinit; docs/kiosk-and-field.md,
# "Running the kiosk on a Linux box"). When Chromium exits, so does this script, and systemd starts it
# all again.
#
#   KIOSK_EVENT                the event's public token (required)
#   KIOSK_URL                  the kiosk server (default http://127.0.0.1:7172)
#   KIOSK_PROFILE_DIR          Chromium's profile (default ~/.config/portico-kiosk): cached branding
#   KIOSK_WAIT_S               how long to wait for the kiosk server before giving up (default 120)
#   CHROMIUM                   the browser (default /usr/bin/chromium)
#   KIOSK_BROWSER_EXTRA_FLAGS  more Chromium flags, split on spaces (tests: a fake camera, a debugging port)
set -euo pipefail

: "${KIOSK_EVENT:?KIOSK_EVENT (the event public token) is required}"
url="${KIOSK_URL:-http://127.0.0.1:7172}"
profile="${KIOSK_PROFILE_DIR:-$HOME/.config/portico-kiosk}"
wait_s="${KIOSK_WAIT_S:-120}"

# A page opened before the server listens would stay on Chromium's error page: wait for it. Giving up
# exits non-zero, and the unit's restart tries again.
deadline=$((SECONDS + wait_s))
until curl -fsS -o /dev/null --max-time 2 "$url/"; do
  if ((SECONDS >= deadline)); then
    echo "kiosk-browser: $url did not answer within ${wait_s}s" >&2
    exit 1
  fi
  sleep 1
done

# Chromium stopped by systemd (or crashed) would offer "Restore pages?" at the next start: mark the
# last exit clean.
mkdir -p "$profile/Default"
prefs="$profile/Default/Preferences"
if [[ -f $prefs ]]; then
  sed -i -e 's/"exited_cleanly":false/"exited_cleanly":true/' -e 's/"exit_type":"[^"]*"/"exit_type":"Normal"/' "$prefs"
fi

# On a bare X server (xinit runs this script alone) nothing would act on Chromium's full-screen request
# and its window would open small in a corner: a minimal window manager does, with no title bars and
# no pointer (a touch screen). Where a desktop already has a window manager, this one exits at once.
if [[ -n ${DISPLAY:-} && -z ${WAYLAND_DISPLAY:-} ]]; then
  if command -v matchbox-window-manager >/dev/null; then
    matchbox-window-manager -use_titlebar no -use_cursor no &
  else
    echo "kiosk-browser: matchbox-window-manager not installed: Chromium will not fill the screen" >&2
  fi
fi

read -r -a extra <<<"${KIOSK_BROWSER_EXTRA_FLAGS:-}"
# The camera is granted to the kiosk's origin by the managed policy (chromium-policy.json), not by a flag.
exec "${CHROMIUM:-/usr/bin/chromium}" \
  --kiosk \
  --app="$url/?event=$KIOSK_EVENT" \
  --user-data-dir="$profile" \
  --no-first-run \
  --noerrdialogs \
  --disable-session-crashed-bubble \
  --disable-infobars \
  --autoplay-policy=no-user-gesture-required \
  --password-store=basic \
  --overscroll-history-navigation=0 \
  --disable-pinch \
  --ozone-platform-hint=auto \
  "${extra[@]}"
